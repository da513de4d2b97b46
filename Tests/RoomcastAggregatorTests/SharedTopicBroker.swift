import RoomcastFusion
import Shared
import Testing
@testable import RoomcastAggregator

/// One retained topic that partitions' cores share, delivered as a broker would: each message
/// published there goes to every core in turn (its publisher's included), what a core publishes
/// there in answer joins the queue, and the last one delivered is the retained one.
struct SharedTopicBroker<Payload: Decodable> {
    let topic: String
    private(set) var retained: Payload?

    init(_ topic: String, of payload: Payload.Type) {
        self.topic = topic
    }

    /// Delivers what was published on the topic (other messages are left out) until no core
    /// answers; past 20 deliveries the partitions are taken to answer one another for ever.
    mutating func deliver(_ published: [OutboundMessage], to cores: inout [AggregatorCore<FusionEngine>], at t: Double) throws {
        var queue = published.filter { $0.topic == topic }
        var delivered = 0
        while !queue.isEmpty {
            let m = queue.removeFirst()
            delivered += 1
            try #require(delivered <= 20, "the partitions keep answering one another")
            retained = try WireFormat.decode(Payload.self, from: m.payload)
            for i in cores.indices {
                queue += try cores[i].handle(topic: m.topic, payload: m.payload, now: t).messages.filter { $0.topic == topic }
            }
        }
    }
}
