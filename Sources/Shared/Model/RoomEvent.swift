/// A room enter/leave event on `<prefix>/events` (docs/schema/room-event.schema.json).
public struct RoomEvent: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable { case enter, leave }
    public var v: Int = WireFormat.version
    public var ts: Double
    public var event: Kind
    public var id: BeaconID
    public var name: String?
    public var room: String
    /// For `enter`, where the beacon came from (null when it was away); for `leave`, where it went.
    public var other: String?

    public init(ts: Double, event: Kind, id: BeaconID, name: String?, room: String, other: String?) {
        self.ts = ts
        self.event = event
        self.id = id
        self.name = name
        self.room = room
        self.other = other
    }

    private enum CodingKeys: String, CodingKey { case v, ts, event, id, name, room, other }

    /// `other` always written, null when away: a template or script reads `other is none`
    /// rather than a key that may be missing.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(v, forKey: .v)
        try c.encode(ts, forKey: .ts)
        try c.encode(event, forKey: .event)
        try c.encode(id, forKey: .id)
        try c.encodeIfPresent(name, forKey: .name)
        try c.encode(room, forKey: .room)
        try c.encode(other, forKey: .other)
    }
}
