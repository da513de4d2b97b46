import Synchronization

/// The timeout of one wait (for a connection, a subscription's acknowledgement, a flush).
///
/// It ends with the wait it bounds: the caller cancels it once the wait is over. Left
/// asleep, a timer outlives a short-lived caller (a process that exits seconds later
/// leaves it for the leak checker) and keeps a task per finished wait around until its
/// timeout.
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
