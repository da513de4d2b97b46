import Synchronization

/// The timeout of one wait (for a connection, a subscription's acknowledgement, a flush).
///
/// It ends with the wait it bounds: the caller cancels it once the wait is over, so a
/// finished wait does not leave a task asleep for the rest of its timeout.
final class WaitTimer: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Calls `expire` once `timeout` has passed, unless cancelled first.
    func start(after timeout: Duration, _ expire: @escaping @Sendable () -> Void) {
        let started = Task {
            do { try await Task.sleep(for: timeout) } catch { return }
            expire()
        }
        task.withLock { $0 = started }
    }

    func cancel() {
        task.withLock { $0?.cancel() }
    }
}
