import Shared
import Testing
@testable import RoomcastAggregator

/// The one queue every published message goes through: in the order it was queued, from any
/// number of producers, nothing lost below its capacity.
@Suite struct OutboundQueueTests {
    static func message(_ topic: String) -> OutboundMessage { OutboundMessage(topic: topic, text: "x", retain: true, qos: 1) }

    /// A refresh queued by the timer, then a change queued by an inbound message while the
    /// refresh is still going out: the change comes after the refresh's message for the same
    /// topic, so the retained topic ends on the newer state.
    @Test func whatIsDecidedLaterIsSentLater() async {
        let queue = OutboundQueue()
        let refresh = (0..<5000).map { Self.message("roomcast/presence/tag-\($0)") }
        queue.append(refresh)
        let firstChunk = await queue.next()
        #expect(firstChunk?.count == 5000)
        queue.append([Self.message("roomcast/presence/tag-4999")])  // the change, decided while the chunk goes out
        queue.append([Self.message("roomcast/presence/tag-7")])
        #expect(await queue.next()?.map(\.topic) == ["roomcast/presence/tag-4999", "roomcast/presence/tag-7"])
    }

    @Test func aWaitingConsumerIsWokenAndFinishDrainsTheRest() async {
        let queue = OutboundQueue()
        async let woken = queue.next()
        // The consumer may or may not be waiting yet: either way it gets the message.
        queue.append([Self.message("a")])
        #expect(await woken?.map(\.topic) == ["a"])
        queue.append([Self.message("b"), Self.message("c")])
        queue.finish()
        #expect(await queue.next()?.map(\.topic) == ["b", "c"], "what was queued before finish still goes out")
        #expect(await queue.next() == nil)
        #expect(queue.append([Self.message("d")]) == 1, "nothing is queued after finish")
    }

    @Test func beyondItsCapacityNewMessagesAreDroppedAndCounted() async {
        let queue = OutboundQueue(capacity: 3)
        #expect(queue.append((0..<5).map { Self.message("m\($0)") }) == 2)
        #expect(queue.dropped == 2)
        #expect(await queue.next()?.map(\.topic) == ["m0", "m1", "m2"])
        #expect(queue.append([Self.message("m5")]) == 0, "room again once sent")
    }

    /// Several producers at once: each one's messages stay in its order, and none is lost.
    @Test func producersAtOnceKeepTheirOwnOrder() async {
        let queue = OutboundQueue()
        await withTaskGroup(of: Void.self) { group in
            for p in 0..<4 {
                group.addTask { for k in 0..<500 { queue.append([Self.message("p\(p)/\(k)")]) } }
            }
        }
        queue.finish()
        var all: [String] = []
        while let chunk = await queue.next() { all += chunk.map(\.topic) }
        #expect(all.count == 2000)
        for p in 0..<4 {
            #expect(all.filter { $0.hasPrefix("p\(p)/") } == (0..<500).map { "p\(p)/\($0)" })
        }
    }

    /// Control messages (a lease renewal) go first, also while a batch is still going out and
    /// when nothing else is queued: behind a big refresh a renewal waited for every message
    /// before it, and a standby took over from an active instance that lived.
    @Test func controlMessagesGoAheadOfEverythingElse() async {
        let queue = OutboundQueue()
        queue.append((0..<20_000).map { Self.message("roomcast/presence/tag-\($0)") })
        let refresh = await queue.next()
        #expect(refresh?.count == 20_000)
        queue.append([Self.message("roomcast/presence/tag-7")])
        queue.appendControl([Self.message("roomcast/aggregator/lease")])
        // Taken between the refresh's chunks, before what was queued after it.
        #expect(queue.takeControl().map(\.topic) == ["roomcast/aggregator/lease"])
        #expect(queue.takeControl().isEmpty)
        #expect(await queue.next()?.map(\.topic) == ["roomcast/presence/tag-7"])
        // With nothing else queued, a control message wakes the sender.
        async let woken = queue.next()
        queue.appendControl([Self.message("roomcast/aggregator/lease")])
        #expect(await woken == [])
        #expect(queue.takeControl().count == 1)
        // Bounded: the newest are kept.
        queue.appendControl((0..<100).map { Self.message("lease-\($0)") })
        #expect(queue.takeControl().map(\.topic) == (36..<100).map { "lease-\($0)" })
    }
}
