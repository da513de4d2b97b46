import Dispatch
import Foundation

/// Runs CPU-bound test work (a simulated home replayed through the engine, a recording
/// scored) on a thread of its own instead of Swift concurrency's cooperative pool, and
/// returns its result.
///
/// Why: the pool has one thread per core and Swift Testing runs tests side by side on it.
/// On a two-core CI machine two replays occupy both threads for their whole length, and
/// every broker- and radio-driven test meanwhile waits for a thread its services need — an
/// AddressSanitizer run (replays 3× slower) saw a 60-s hang guard fire on an agent that
/// had simply not been scheduled. Work here competes for the CPU, not for the pool; and
/// at most one core fewer than the machine has runs it at a time (`heavyWork`), so the
/// brokers and aggregator processes those tests start still get a core.
///
/// Assert on the result afterwards, not inside `work`: an expectation on another thread
/// has no test to report to.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        start { continuation.resume(with: Result { try work() }) }
    }
}

/// `offPool` for work that cannot throw.
public func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        start { continuation.resume(returning: work()) }
    }
}

/// How many `offPool` jobs may run at once.
private let heavyWork = DispatchSemaphore(value: max(1, ProcessInfo.processInfo.activeProcessorCount - 1))

private func start(_ body: @escaping @Sendable () -> Void) {
    let thread = Thread {
        heavyWork.wait()
        defer { heavyWork.signal() }
        body()
    }
    // Replays recurse little, but the default secondary-thread stack (512 KiB on some
    // platforms) is less than the main thread's; give it the same 8 MiB.
    thread.stackSize = 8 << 20
    thread.start()
}
