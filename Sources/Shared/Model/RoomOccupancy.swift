/// Retained payload of `<prefix>/rooms/<room>` (docs/schema/room.schema.json).
public struct RoomOccupancy: Codable, Sendable, Equatable {
    public var v: Int = WireFormat.version
    public var room: String
    public var floor: Int?
    /// True while `count` is above 0.
    public var occupied: Bool
    /// Who is in the room: each person once, plus each beacon that belongs to no person.
    public var count: Int
    /// Ids of the people in the room, sorted.
    public var people: [String]
    /// Ids of the beacons in the room that belong to no person, sorted.
    public var unassigned: [BeaconID]
    /// Ids of every beacon in the room (a person's among them), sorted.
    public var beacons: [BeaconID]
    public var ts: Double
    /// Present (true) when the lists were cut to their first ids to keep the payload within
    /// `WireFormat.maxPayloadBytes` (`payload()`); `count` and `occupied` stay exact.
    public var truncated: Bool?

    public init(room: String, floor: Int?, beacons: [BeaconID], people: [String] = [], unassigned: [BeaconID]? = nil, ts: Double) {
        self.room = room
        self.floor = floor
        self.beacons = beacons.sorted()
        self.people = people.sorted()
        self.unassigned = (unassigned ?? beacons).sorted()
        self.count = self.people.count + self.unassigned.count
        self.occupied = count > 0
        self.ts = ts
    }

    enum CodingKeys: String, CodingKey { case v, room, floor, occupied, count, people, unassigned, beacons, ts, truncated }

    /// The retained payload. A room a crowd is in (a hall of badges: about 600 beacons fill 64 KiB)
    /// keeps the first ids of each list, in their sorted order, as many as fit: whole, the message
    /// would be refused by the broker or by every reader, and the room's topic would stop updating.
    public func payload() throws -> [UInt8] {
        var payload = try WireFormat.encode(self)
        var kept = max(people.count, unassigned.count, beacons.count)
        while payload.count > WireFormat.maxPayloadBytes && kept > 0 {
            // In proportion to the excess, and always fewer than last time.
            kept = min(kept - 1, Int(Double(kept) * Double(WireFormat.maxPayloadBytes) / Double(payload.count) * 0.95))
            var cut = self
            cut.truncated = true
            cut.people = Array(people.prefix(kept))
            cut.unassigned = Array(unassigned.prefix(kept))
            cut.beacons = Array(beacons.prefix(kept))
            payload = try WireFormat.encode(cut)
        }
        return payload
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        v = try c.decode(Int.self, forKey: .v)
        room = try c.decode(String.self, forKey: .room)
        floor = try c.decodeIfPresent(Int.self, forKey: .floor)
        occupied = try c.decode(Bool.self, forKey: .occupied)
        count = try c.decode(Int.self, forKey: .count)
        beacons = try c.decode([BeaconID].self, forKey: .beacons)
        // Payloads from before people were counted have neither list: every beacon was unassigned.
        people = try c.decodeIfPresent([String].self, forKey: .people) ?? []
        unassigned = try c.decodeIfPresent([BeaconID].self, forKey: .unassigned) ?? beacons
        ts = try c.decode(Double.self, forKey: .ts)
        truncated = try c.decodeIfPresent(Bool.self, forKey: .truncated)
    }
}
