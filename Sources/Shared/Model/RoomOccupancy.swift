/// Retained payload of `<prefix>/rooms/<room>` (docs/schema/room.schema.json).
public struct RoomOccupancy: Codable, Sendable, Equatable {
    public var v: Int = WireFormat.version
    public var room: String
    public var floor: Int?
    public var occupied: Bool
    public var count: Int
    /// Ids of the beacons in the room, sorted.
    public var beacons: [BeaconID]
    public var ts: Double

    public init(room: String, floor: Int?, beacons: [BeaconID], ts: Double) {
        self.room = room
        self.floor = floor
        self.beacons = beacons.sorted()
        self.count = beacons.count
        self.occupied = !beacons.isEmpty
        self.ts = ts
    }
}

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
}

/// A region enter/exit at one node on `<prefix>/nodes/<node>/events`
/// (docs/schema/region-event.schema.json): didEnterRegion / didExitRegion.
public struct RegionEvent: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable { case enter, exit }
    public var v: Int = WireFormat.version
    public var ts: Double
    public var node: String
    public var region: String
    public var event: Kind
    /// The beacon that caused the transition.
    public var id: BeaconID?

    public init(ts: Double, node: String, region: String, event: Kind, id: BeaconID?) {
        self.ts = ts
        self.node = node
        self.region = region
        self.event = event
        self.id = id
    }
}
