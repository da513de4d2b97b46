import Dispatch
import Synchronization

/// A bounded async stream fed from a producer thread. Live mode keeps the
/// newest `capacity` batches and counts the elements it drops (a BLE flood
/// must not grow memory); lossless mode makes the producer thread wait for
/// the consumer instead (a replay must deliver every packet, deterministically).
/// Producers may hand over elements in batches: one async hand-off per batch
/// instead of per element is what lets a replay stream millions per second.
public struct BoundedStream<Element: Sendable>: AsyncSequence, Sendable {
    /// What happens when the consumer falls behind.
    public enum Mode: Sendable, Hashable {
        case dropOldest
        case lossless
    }

    let base: AsyncStream<[Element]>
    let producer: Producer

    /// A stream and the producer that feeds it.
    public static func make(capacity: Int, mode: Mode) -> (stream: BoundedStream, producer: Producer) {
        let (stream, continuation) = AsyncStream<[Element]>.makeStream(
            bufferingPolicy: mode == .lossless ? .unbounded : .bufferingNewest(Swift.max(1, capacity)))
        let producer = Producer(continuation: continuation, capacity: Swift.max(1, capacity), mode: mode)
        continuation.onTermination = { [producer] _ in producer.consumerGone() }
        return (BoundedStream(base: stream, producer: producer), producer)
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), producer: producer)
    }

    /// Elements dropped because the consumer fell behind.
    public var dropped: UInt64 { producer.dropped }

    /// From now on, hands every batch the producer yields to `handler`, on the producer's thread,
    /// instead of queueing it for the iterator; true when switched. Refused (false) while batches
    /// are queued, so nothing overtakes them: the consumer calls this after it handled a batch and
    /// tries again after the next one; a lossless stream is never switched (its producer waits for
    /// the iterator). Once switched, the iterator only sees the end of the stream,
    /// and `finish()` waits for a batch being handed over. The live agent handles its reports so:
    /// waking a consumer thread for each burst cost more than the burst's reports (a handler must
    /// not block for long, nor yield into this stream or finish it).
    public func deliverDirectly(to handler: @escaping @Sendable ([Element]) -> Void) -> Bool {
        producer.switchToDirect(handler)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        // Inlinable, so the consumer's module specialises it for its element type: unspecialised,
        // each element went through witness tables, which cost more than the hand-over itself.
        @usableFromInline var base: AsyncStream<[Element]>.Iterator
        @usableFromInline let producer: Producer
        @usableFromInline var batch: [Element] = []
        @usableFromInline var index = 0

        init(base: AsyncStream<[Element]>.Iterator, producer: Producer) {
            self.base = base
            self.producer = producer
        }

        @inlinable
        public mutating func next() async -> Element? {
            while index >= batch.count {
                guard let next = await base.next() else { return nil }
                producer.consumed()
                batch = next
                index = 0
            }
            defer { index += 1 }
            return batch[index]
        }

        /// The rest of the current batch, or the next one as the producer handed it over:
        /// lets a consumer pass a burst on in one step instead of element by element.
        @inlinable
        public mutating func nextBatch() async -> ArraySlice<Element>? {
            while index >= batch.count {
                guard let next = await base.next() else { return nil }
                producer.consumed()
                batch = next
                index = 0
            }
            defer { index = batch.count }
            return batch[index...]
        }
    }

    /// The producer side; `yield` may block the calling thread in lossless mode,
    /// so call it from a dedicated thread, never from the cooperative pool.
    public final class Producer: Sendable {
        private let continuation: AsyncStream<[Element]>.Continuation
        private let mode: Mode
        private let permits = DispatchSemaphore(value: 0)
        private let droppedCount = Atomic<UInt64>(0)
        private let stopped = Atomic<Bool>(false)
        /// Batches queued for the iterator, and the handler that takes batches instead once set.
        private let direct = Mutex(Direct())

        private struct Direct {
            var queued = 0
            var handler: (@Sendable ([Element]) -> Void)?
        }

        init(continuation: AsyncStream<[Element]>.Continuation, capacity: Int, mode: Mode) {
            self.continuation = continuation
            self.mode = mode
            // Signalled up front: a semaphore created with a positive value traps
            // if released while below it.
            if mode == .lossless { for _ in 0..<capacity { permits.signal() } }
        }

        /// Elements dropped so far.
        public var dropped: UInt64 { droppedCount.load(ordering: .relaxed) }

        /// Whether the consumer went away or `finish` was called.
        public var isStopped: Bool { stopped.load(ordering: .acquiring) }

        /// Hands `element` to the consumer; false once the stream has ended.
        @discardableResult
        public func yield(_ element: Element) -> Bool { yield(contentsOf: [element]) }

        /// Hands several elements over in one step; false once the stream has ended.
        @discardableResult
        public func yield(contentsOf elements: [Element]) -> Bool {
            guard !elements.isEmpty else { return !isStopped }
            if mode == .lossless {
                while permits.wait(timeout: .now() + .milliseconds(100)) == .timedOut {
                    if isStopped { return false }
                }
            }
            return direct.withLock { d in
                if let handler = d.handler {
                    guard !isStopped else { return false }
                    handler(elements)
                    return true
                }
                switch continuation.yield(elements) {
                case .enqueued:
                    d.queued += 1
                    return true
                case let .dropped(batch):
                    droppedCount.add(UInt64(batch.count), ordering: .relaxed)
                    return true
                case .terminated: return false
                @unknown default: return false
                }
            }
        }

        /// Ends the stream (idempotent); buffered elements are still delivered. With a direct handler,
        /// waits for the batch it may be taking.
        public func finish() {
            stopped.store(true, ordering: .releasing)
            direct.withLock { _ in }
            continuation.finish()
        }

        @usableFromInline func consumed() {
            direct.withLock { $0.queued = Swift.max(0, $0.queued - 1) }
            if mode == .lossless { permits.signal() }
        }

        func switchToDirect(_ handler: @escaping @Sendable ([Element]) -> Void) -> Bool {
            direct.withLock { d in
                guard mode == .dropOldest, d.handler == nil, d.queued == 0, !isStopped else { return false }
                d.handler = handler
                return true
            }
        }

        func consumerGone() { stopped.store(true, ordering: .releasing) }
    }
}
