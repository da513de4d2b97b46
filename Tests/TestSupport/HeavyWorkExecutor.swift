import Dispatch

/// Runs a CPU-bound test body (a flood of hundreds of thousands of reports, a cache filled
/// to its bound) off Swift concurrency's cooperative pool, as `offPool` does, but as the same
/// task: `#expect` and `#require` inside it report to the test as usual.
///
/// Why: the pool has one thread per core, and a synchronous test body holds its thread until
/// it returns. Two such bodies at the start of a run hold both threads of a two-core machine
/// for seconds, and the broker- and process-driven tests that start beside them miss their
/// deadlines because the tasks that read their brokers' messages never get a thread.
public func onHeavyWorkThread<T>(_ body: () async throws -> T) async rethrows -> T {
    try await withTaskExecutorPreference(HeavyWorkExecutor.shared) { try await body() }
}

/// One serial queue for heavy test bodies: they take turns on one core and leave the pool's
/// threads to the tests that wait on brokers, radios and processes.
final class HeavyWorkExecutor: TaskExecutor {
    static let shared = HeavyWorkExecutor()
    private let queue = DispatchQueue(label: "roomcast.tests.heavy-work")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
