/// Where a person is: the retained payload of `<prefix>/people/<id>`
/// (docs/schema/person.schema.json). `room` is null (encoded explicitly) when away.
public struct PersonPresence: Codable, Sendable, Equatable {
    /// Home Assistant's presence words, which a Person entity understands.
    public enum State: String, Codable, Sendable { case home, notHome = "not_home" }

    public var v: Int = WireFormat.version
    public var id: String
    public var name: String
    /// `home` while any of their beacons is in a room, `not_home` once all are away.
    public var state: State
    public var room: String?
    /// The room's display name (`rooms[].display_name` or derived from its id).
    public var roomName: String?
    public var floor: Int?
    /// The confidence of the deciding beacon's room (0 while it is held without evidence).
    public var confidence: Double
    /// The beacon whose room the person is in (null when away).
    public var beacon: BeaconID?
    /// The deciding beacon's reason (`nodes_offline` while held without evidence; `timeout` when away).
    public var reason: String?
    /// When the person entered `room` (or went away).
    public var since: Double
    /// Newest capture time of any of their beacons.
    public var lastSeen: Double?
    /// The room the person was last placed in, and its display name: `room` while home, the room
    /// they left while away. Nil where the aggregator knows of none.
    public var lastRoom: String?
    public var lastRoomName: String?
    /// Decision time.
    public var ts: Double

    public init(id: String, name: String, state: State, room: String?, roomName: String?, floor: Int?,
                confidence: Double, beacon: BeaconID?, reason: String?, since: Double, lastSeen: Double?, ts: Double) {
        self.id = id
        self.name = name
        self.state = state
        self.room = room
        self.roomName = roomName
        self.floor = floor
        self.confidence = confidence
        self.beacon = beacon
        self.reason = reason
        self.since = since
        self.lastSeen = lastSeen
        self.ts = ts
    }

    enum CodingKeys: String, CodingKey {
        case v, id, name, state, room, floor, confidence, beacon, reason, since, ts
        case roomName = "room_name"
        case lastSeen = "last_seen"
        case lastRoom = "last_room"
        case lastRoomName = "last_room_name"
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(v, forKey: .v)
        try c.encode(id, forKey: .id)
        try c.encode(name, forKey: .name)
        try c.encode(state, forKey: .state)
        // Explicit nulls when away, as in presence: a template can read every key.
        try c.encode(room, forKey: .room)
        try c.encode(roomName, forKey: .roomName)
        try c.encode(floor, forKey: .floor)
        try c.encode(confidence, forKey: .confidence)
        try c.encode(beacon, forKey: .beacon)
        try c.encode(reason, forKey: .reason)
        try c.encode(since, forKey: .since)
        try c.encode(lastSeen, forKey: .lastSeen)
        try c.encodeIfPresent(lastRoom, forKey: .lastRoom)
        try c.encodeIfPresent(lastRoomName, forKey: .lastRoomName)
        try c.encode(ts, forKey: .ts)
    }
}
