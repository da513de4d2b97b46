import Foundation
import Synchronization

/// Drains an `AsyncStream` into memory in the background so a test can wait for
/// what it expects (`waitFor`) and then assert on everything that arrived.
public final class StreamCollector<Element: Sendable>: Sendable {
    private final class Storage: Sendable {
        let items = Mutex<[Element]>([])
        let finished = Atomic<Bool>(false)
    }
    private let storage = Storage()
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts draining `stream`.
    public init(_ stream: AsyncStream<Element>) {
        let t = Task { [storage] in
            for await element in stream { storage.items.withLock { $0.append(element) } }
            storage.finished.store(true, ordering: .relaxed)
        }
        task.withLock { $0 = t }
    }

    deinit { task.withLock { $0?.cancel() } }

    /// Everything collected so far.
    public var elements: [Element] { storage.items.withLock { $0 } }

    /// True once the stream has finished.
    public var isFinished: Bool { storage.finished.load(ordering: .relaxed) }

    /// Waits until `predicate` holds for the collected elements; returns them.
    @discardableResult
    public func waitFor(_ what: String, timeout: Duration = .seconds(10),
                        _ predicate: ([Element]) -> Bool) async throws -> [Element] {
        try await eventually(what, timeout: timeout, detail: { "collected: \(self.elements)" }) {
            predicate(elements)
        }
        return elements
    }

    /// Waits until the stream finishes.
    public func waitForFinish(timeout: Duration = .seconds(10)) async throws {
        try await eventually("stream to finish", timeout: timeout) { isFinished }
    }

    /// Stops draining.
    public func cancel() { task.withLock { $0?.cancel() } }
}
