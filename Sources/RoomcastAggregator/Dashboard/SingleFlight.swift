import Dispatch
import Synchronization

/// One answer worked out at a time for any number of HTTP connections: a request that comes
/// while the runtime is working one out waits for that one and takes it.
///
/// Why: each answer (`/api/state`, `/metrics`, `/healthz`) is a pass over every beacon on the
/// runtime actor, and the connections that ask are anyone's (`/healthz` needs no token). Asked
/// one by one, a few clients that ask over and over would queue pass after pass ahead of the
/// readings; a request that gave up waiting would leave its pass queued all the same.
final class SingleFlight<Value: Sendable>: Sendable {
    private let work: @Sendable () async -> Value
    private let inFlight = Mutex<Task<Value, Never>?>(nil)

    init(_ work: @escaping @Sendable () async -> Value) { self.work = work }

    /// The answer being worked out, or a fresh one; waits on this (connection) thread for at most
    /// `timeout` seconds, nil when it took longer (the work goes on, for the next request).
    func value(timeout: Double) -> Value? {
        let task = inFlight.withLock { current -> Task<Value, Never> in
            if let current { return current }
            // Cleared by the task itself, which takes the lock only after this has stored it.
            let task = Task { [self] in
                let value = await work()
                inFlight.withLock { $0 = nil }
                return value
            }
            current = task
            return task
        }
        let result = Mutex<Value?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let value = await task.value
            result.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        return result.withLock { $0 }
    }
}
