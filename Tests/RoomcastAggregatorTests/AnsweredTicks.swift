import Shared
@testable import RoomcastAggregator

extension AggregatorRuntime {
    /// A tick whose messages to this process's sync topic (the drain marker, the heartbeat)
    /// come back at once, as through a broker that answers: for tests that drive the runtime
    /// through long silences of the nodes, which a broker that stopped answering looks like.
    func tickAnswered(now: Double) -> [OutboundMessage] {
        let out = tick(now: now)
        for m in out where m.topic == syncTopic { _ = handle(topic: m.topic, payload: m.payload, now: now) }
        return out
    }
}
