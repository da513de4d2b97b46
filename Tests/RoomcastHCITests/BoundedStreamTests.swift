import Foundation
import RoomcastHCI
import Testing
import Synchronization
import TestSupport

@Suite struct BoundedStreamTests {
    @Test func liveModeKeepsTheNewestAndCountsDrops() async {
        let (stream, producer) = BoundedStream<Int>.make(capacity: 4, mode: .dropOldest)
        for i in 0..<10 { producer.yield(i) }
        producer.finish()
        var got = [Int]()
        for await i in stream { got.append(i) }
        #expect(got == [6, 7, 8, 9])
        #expect(stream.dropped == 6)
    }

    @Test func droppedBatchesCountTheirElements() async {
        let (stream, producer) = BoundedStream<Int>.make(capacity: 1, mode: .dropOldest)
        producer.yield(contentsOf: [1, 2, 3])
        producer.yield(contentsOf: [4, 5])
        producer.finish()
        var got = [Int]()
        for await i in stream { got.append(i) }
        #expect(got == [4, 5])
        #expect(producer.dropped == 3)
    }

    @Test func losslessModeMakesTheProducerWait() async throws {
        let (stream, producer) = BoundedStream<Int>.make(capacity: 2, mode: .lossless)
        let thread = Thread {
            for i in 0..<1000 { producer.yield(i) }
            producer.finish()
        }
        thread.start()
        var got = [Int]()
        for await i in stream { got.append(i) }
        #expect(got == Array(0..<1000))
        #expect(stream.dropped == 0)
    }

    @Test func aBlockedProducerIsReleasedWhenTheConsumerLeaves() async throws {
        let (stream, producer) = BoundedStream<Int>.make(capacity: 1, mode: .lossless)
        let finished = AsyncStream<Bool>.makeStream()
        let thread = Thread {
            var ok = true
            for i in 0..<100 where ok { ok = producer.yield(i) }
            finished.continuation.yield(ok)
            finished.continuation.finish()
        }
        thread.start()
        do {
            var iterator = stream.makeAsyncIterator()
            _ = await iterator.next()
        }
        producer.finish()
        let result = try await withTimeout(.seconds(60), "the producer to give up") { () -> Bool? in
            for await r in finished.stream { return r }
            return nil
        }
        #expect(result == false)
    }
}

/// `deliverDirectly`: nothing overtakes what is queued, everything after the switch goes to the
/// handler on the producer's thread, in order, and `finish()` ends the iterator.
@Suite struct BoundedStreamDirectTests {
    final class Collected: Sendable {
        let values = Mutex<[Int]>([])
    }

    @Test func switchesOnlyWhenNothingIsQueuedAndKeepsTheOrder() async {
        let (stream, producer) = BoundedStream<Int>.make(capacity: 8, mode: .dropOldest)
        let collected = Collected()
        producer.yield(contentsOf: [1, 2])
        #expect(!stream.deliverDirectly { batch in collected.values.withLock { $0 += batch } }, "a batch is queued")
        var iterator = stream.makeAsyncIterator()
        let first = await iterator.nextBatch()
        #expect(first.map(Array.init) == [1, 2])
        #expect(stream.deliverDirectly { batch in collected.values.withLock { $0 += batch } })
        #expect(!stream.deliverDirectly { _ in }, "switched already")
        producer.yield(contentsOf: [3, 4])
        producer.yield(5)
        #expect(collected.values.withLock { $0 } == [3, 4, 5])
        producer.finish()
        #expect(await iterator.nextBatch() == nil)
        #expect(!producer.yield(6))
        #expect(collected.values.withLock { $0 } == [3, 4, 5])
    }

    @Test func aLosslessStreamIsNotSwitched() {
        let (stream, _) = BoundedStream<Int>.make(capacity: 8, mode: .lossless)
        #expect(!stream.deliverDirectly { _ in })
    }
}
