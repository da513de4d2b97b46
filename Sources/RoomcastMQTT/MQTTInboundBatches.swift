import Synchronization

/// Inbound messages in batches, for a consumer that handles tens of thousands a second
/// (`MQTTClientConfiguration.batchInbound`). The loop thread hands over what one turn of
/// reading brought (up to a few hundred messages) in one step, and the consumer takes
/// everything waiting (at most `maxTake`) in one step, so neither side pays a wake-up per
/// message. Bounded like `messages`: beyond `capacity` messages, or `byteCapacity` bytes of
/// topics and payloads, the oldest are dropped (and counted in `MQTTClient.droppedInbound`):
/// 65,536 messages of the broker's largest size would otherwise be gigabytes. One consumer.
public struct MQTTInboundBatches: AsyncSequence, Sendable {
    public typealias Element = [MQTTMessage]
    let queue: Queue

    /// Messages taken in one step at most: bounds how long a consumer holds its actor for one batch.
    public static let maxTake = 4096

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: queue) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: Queue
        public mutating func next() async -> [MQTTMessage]? { await queue.take() }
    }

    final class Queue: Sendable {
        private struct State {
            var items: [MQTTMessage] = []
            var head = 0
            var waiter: CheckedContinuation<[MQTTMessage]?, Never>?
            var finished = false
            /// Topic and payload bytes of the messages waiting.
            var bytes = 0
            var count: Int { items.count - head }

            mutating func takeSome() -> [MQTTMessage] {
                let n = Swift.min(count, MQTTInboundBatches.maxTake)
                if head == 0 && n == items.count {
                    defer { items = []; items.reserveCapacity(n); bytes = 0 }
                    return items
                }
                let out = Array(items[head..<head + n])
                for m in out { bytes -= Queue.size(of: m) }
                head += n
                if head == items.count {
                    items.removeAll(keepingCapacity: true)
                    head = 0
                } else {
                    compactIfHalfGone()
                }
                return out
            }

            /// Frees the messages before `head` (taken or dropped) once they are at least half the
            /// storage: amortised O(1), and the storage stays within twice what is waiting. Left
            /// there, a backlog that never empties would keep every message it ever held.
            mutating func compactIfHalfGone() {
                guard head > 0, head * 2 >= items.count else { return }
                items.removeFirst(head)
                head = 0
            }

            var stored: Int { items.count }
        }

        private let state = Mutex(State())
        let capacity: Int
        let byteCapacity: Int

        init(capacity: Int, byteCapacity: Int = .max) {
            self.capacity = Swift.max(1, capacity)
            self.byteCapacity = Swift.max(1, byteCapacity)
        }

        static func size(of message: MQTTMessage) -> Int { message.payload.count + message.topic.utf8.count }

        /// Messages held in storage, waiting or not yet freed.
        var storedCount: Int { state.withLock { $0.stored } }

        /// Appends `batch`; returns how many of the oldest messages were dropped to stay within capacity.
        func push(_ batch: [MQTTMessage]) -> Int {
            guard !batch.isEmpty else { return 0 }
            let (waiter, handed, dropped) = state.withLock { s -> (CheckedContinuation<[MQTTMessage]?, Never>?, [MQTTMessage], Int) in
                guard !s.finished else { return (nil, [], 0) }
                s.items += batch
                for m in batch { s.bytes += Self.size(of: m) }
                var over = 0
                // The newest message stays even when it alone is over the byte budget.
                while s.count > capacity || (s.bytes > byteCapacity && s.count > 1) {
                    s.bytes -= Self.size(of: s.items[s.head])
                    s.head += 1
                    over += 1
                }
                if over > 0 { s.compactIfHalfGone() }
                guard let w = s.waiter else { return (nil, [], Swift.max(0, over)) }
                s.waiter = nil
                return (w, s.takeSome(), Swift.max(0, over))
            }
            waiter?.resume(returning: handed)
            return dropped
        }

        /// Ends the sequence once what is buffered has been taken (idempotent).
        func finish() {
            let waiter = state.withLock { s -> CheckedContinuation<[MQTTMessage]?, Never>? in
                s.finished = true
                guard s.count == 0 else { return nil }
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume(returning: nil)
        }

        func take() async -> [MQTTMessage]? {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (c: CheckedContinuation<[MQTTMessage]?, Never>) in
                    let ready = state.withLock { s -> [MQTTMessage]?? in
                        if s.count > 0 { return .some(s.takeSome()) }
                        if s.finished || Task.isCancelled { return .some(nil) }
                        s.waiter = c
                        return .none
                    }
                    if let ready { c.resume(returning: ready) }
                }
            } onCancel: {
                let waiter = state.withLock { s -> CheckedContinuation<[MQTTMessage]?, Never>? in
                    defer { s.waiter = nil }
                    return s.waiter
                }
                waiter?.resume(returning: nil)
            }
        }
    }
}
