import RoomcastFusion
import Shared

/// The retained payload of `<prefix>/aggregator/learn/state`: every room learned (as the
/// state file holds it, numbers rounded to 0.01) and the labels running.
public struct LearnState: Codable, Sendable, Equatable {
    public var v = WireFormat.version
    public var ts: Double
    /// The labels running.
    public var active: [ActiveLabel]
    public var rooms: [LearnedRooms.Room]
    /// Present (true) when the rooms' node levels were left out to keep the payload within
    /// `WireFormat.maxPayloadBytes`: the state file has them all.
    public var truncated: Bool?

    public init(ts: Double, active: [ActiveLabel], learned: LearnedRooms) {
        self.ts = ts
        self.active = active.map { var label = $0; label.recorded = Self.rounded(label.recorded); return label }
        self.rooms = learned.rooms.map { room in
            LearnedRooms.Room(name: room.name, seconds: Self.rounded(room.seconds), nodes: room.nodes.map(Self.rounded))
        }
    }

    static func rounded(_ x: Double) -> Double { (x * 100).rounded() / 100 }

    static func rounded(_ level: LearnedRooms.NodeLevel) -> LearnedRooms.NodeLevel {
        .init(node: level.node, seconds: rounded(level.seconds), mean: rounded(level.mean), spread: rounded(level.spread), room: level.room)
    }

    /// What this state says of the rooms in `rooms` (`inside`), or of every other room: the
    /// labels running there and the rooms taught. Partitions share the topic, each owning its
    /// rooms' part (`AggregatorCore.learnStateHeard`).
    func part(_ rooms: Set<String>, inside: Bool) -> Part {
        Part(active: active.filter { rooms.contains($0.room) == inside },
             rooms: self.rooms.filter { rooms.contains($0.name) == inside })
    }

    /// Labels running and rooms taught: one partition's part of the shared state.
    struct Part: Sendable, Equatable {
        var active: [ActiveLabel] = []
        var rooms: [LearnedRooms.Room] = []

        /// What tells two parts apart where one went through the broker: the rooms' node levels
        /// are left out (a state too large to publish drops them).
        var summary: Part {
            Part(active: active, rooms: rooms.map { .init(name: $0.name, seconds: $0.seconds, nodes: []) })
        }
    }

    /// This state with `other` added: the labels it runs after these, the rooms in name order.
    mutating func add(_ other: Part) {
        active += other.active
        rooms = (rooms + other.rooms).sorted { $0.name < $1.name }
    }

    /// The retained message, its node levels dropped if it would be too large to publish.
    public func message(topics: Topics) throws -> OutboundMessage {
        var payload = try WireFormat.encode(self)
        if payload.count > WireFormat.maxPayloadBytes {
            var summary = self
            summary.truncated = true
            summary.rooms = rooms.map { .init(name: $0.name, seconds: $0.seconds, nodes: []) }
            payload = try WireFormat.encode(summary)
        }
        return OutboundMessage(topic: topics.aggregatorLearnState, payload: payload, retain: true, qos: 1)
    }
}
