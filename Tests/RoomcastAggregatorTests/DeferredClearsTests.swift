import Shared
import Testing
@testable import RoomcastAggregator

/// State-topic clears held back until Home Assistant has removed the entities reading them.
@Suite struct DeferredClearsTests {
    static func clear(_ topic: String) -> OutboundMessage { OutboundMessage(topic: topic, payload: [], retain: true, qos: 1) }

    /// A clear held again waits from its newest removal and goes once; one held twice at the
    /// same time (two removals in one tick) went twice.
    @Test func eachHeldTopicIsClearedOnceAfterItsNewestRemoval() {
        var clears = DeferredClears()
        #expect(clears.add([Self.clear("a"), Self.clear("b")], now: 0).isEmpty)
        #expect(clears.add([Self.clear("a")], now: 0).isEmpty)
        #expect(clears.add([Self.clear("b")], now: 10).isEmpty)
        #expect(clears.due(now: 29).isEmpty)
        #expect(clears.due(now: 30).map(\.topic) == ["a"])
        #expect(clears.due(now: 39).isEmpty, "b was held again at 10")
        #expect(clears.due(now: 40).map(\.topic) == ["b"])
        #expect(clears.due(now: 100).isEmpty)
    }
}
