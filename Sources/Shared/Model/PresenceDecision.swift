/// The aggregator's room decision for one beacon: the retained payload of
/// `<prefix>/presence/<id>` (docs/schema/presence.schema.json).
/// `room` is null (encoded explicitly) when the beacon is away.
public struct PresenceDecision: Codable, Sendable, Equatable {
    public var v: Int = WireFormat.version
    public var id: BeaconID
    public var name: String?
    public var room: String?
    public var floor: Int?
    public var distance: Double?
    /// 0...1.
    public var confidence: Double
    /// The node whose evidence decided.
    public var node: String?
    /// When the beacon entered `room` (or went away).
    public var since: Double
    public var lastSeen: Double?
    /// The room the beacon was last placed in: `room` while it is in one, the room it left while
    /// away (where the keys were last). Nil when it has been placed nowhere that the aggregator
    /// knows of. Filled in by the publisher, which remembers it.
    public var lastRoom: String?
    public var reason: String?
    public var runnerUp: String?
    public var margin: Double?
    /// Estimated position [x, y, z] in metres, when node positions are configured.
    public var position: [Double]?
    public var evidence: [NodeEvidence]
    /// Decision time (virtual in replay).
    public var ts: Double

    public init(id: BeaconID, name: String?, room: String?, floor: Int?, distance: Double?,
                confidence: Double, node: String?, since: Double, lastSeen: Double?,
                evidence: [NodeEvidence], ts: Double) {
        self.id = id
        self.name = name
        self.room = room
        self.floor = floor
        self.distance = distance
        self.confidence = confidence
        self.node = node
        self.since = since
        self.lastSeen = lastSeen
        self.evidence = evidence
        self.ts = ts
    }

    enum CodingKeys: String, CodingKey {
        case v, id, name, room, floor, distance, confidence, node, since, reason, margin
        case position, evidence, ts
        case lastSeen = "last_seen"
        case lastRoom = "last_room"
        case runnerUp = "runner_up"
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(v, forKey: .v)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(room, forKey: .room)  // explicit null when away
        try c.encode(floor, forKey: .floor)
        try c.encode(distance, forKey: .distance)
        try c.encode(confidence, forKey: .confidence)
        try c.encode(node, forKey: .node)
        try c.encode(since, forKey: .since)
        try c.encode(lastSeen, forKey: .lastSeen)
        try c.encodeIfPresent(lastRoom, forKey: .lastRoom)
        try c.encodeIfPresent(reason, forKey: .reason)
        try c.encodeIfPresent(runnerUp, forKey: .runnerUp)
        try c.encodeIfPresent(margin, forKey: .margin)
        try c.encodeIfPresent(position, forKey: .position)
        try c.encode(evidence, forKey: .evidence)
        try c.encode(ts, forKey: .ts)
    }
}

/// One node's evidence behind a decision.
public struct NodeEvidence: Codable, Sendable, Equatable {
    public var node: String
    public var room: String?
    public var rssi: Double
    public var distance: Double?
    /// Capture time of the newest reading used.
    public var ts: Double

    public init(node: String, room: String?, rssi: Double, distance: Double?, ts: Double) {
        self.node = node
        self.room = room
        self.rssi = rssi
        self.distance = distance
        self.ts = ts
    }
}
