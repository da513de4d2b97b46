import Shared

/// Turns room decisions into the aggregator's output messages: retained
/// presence per beacon, retained occupancy per room, enter/leave events, and
/// optionally mqtt_room-compatible messages. Pure: it remembers what it has
/// published so it publishes on change only, plus a periodic refresh.
public struct PresencePublisher: Sendable {
    public let topics: Topics
    public let site: SiteModel
    public var mqttRoomOutput: Bool

    /// The room each beacon was last published in (nil = away).
    private var roomOf: [BeaconID: String?] = [:]
    /// Members per room, as last published.
    private var members: [String: Set<BeaconID>] = [:]
    private let floorOf: [String: Int]

    public init(topics: Topics, site: SiteModel, mqttRoomOutput: Bool = false) {
        self.topics = topics
        self.site = site
        self.mqttRoomOutput = mqttRoomOutput
        var floors: [String: Int] = [:]
        for r in site.rooms { floors[r.name] = r.floor }
        self.floorOf = floors
    }

    /// Seeds the publisher with decisions already on the broker (retained
    /// presence read at start-up), so a restart publishes no spurious events.
    public mutating func resume(from decisions: [PresenceDecision]) {
        for d in decisions {
            roomOf[d.id] = .some(d.room)
            if let room = d.room { members[room, default: []].insert(d.id) }
        }
    }

    /// The room a beacon is published in; `.none` when never published.
    public func publishedRoom(of id: BeaconID) -> String?? { roomOf[id] }

    /// Messages for decisions that changed at `now`.
    public mutating func publish(_ decisions: [PresenceDecision], now: Double) throws -> [OutboundMessage] {
        var out: [OutboundMessage] = []
        var touchedRooms: Set<String> = []
        for d in decisions {
            out.append(OutboundMessage(topic: topics.presence(d.id), payload: try d.wireJSON(), retain: true, qos: 1))
            let previous: String? = roomOf[d.id] ?? nil
            let known = roomOf[d.id] != nil
            roomOf[d.id] = .some(d.room)
            guard previous != d.room || !known else { continue }
            if let old = previous {
                members[old]?.remove(d.id)
                touchedRooms.insert(old)
                out.append(try OutboundMessage(topic: topics.events, json: RoomEvent(
                    ts: now, event: .leave, id: d.id, name: d.name, room: old, other: d.room), qos: 1))
            }
            if let new = d.room {
                members[new, default: []].insert(d.id)
                touchedRooms.insert(new)
                out.append(try OutboundMessage(topic: topics.events, json: RoomEvent(
                    ts: now, event: .enter, id: d.id, name: d.name, room: new, other: previous), qos: 1))
            }
            if mqttRoomOutput, let new = d.room {
                out.append(try OutboundMessage(topic: "room_presence/\(new)", json: MQTTRoomReport(
                    id: d.id.rawValue, name: d.name ?? d.id.rawValue, distance: d.distance ?? 0)))
            }
        }
        for room in touchedRooms.sorted() {
            out.append(try occupancy(room, now: now))
        }
        return out
    }

    /// Every retained output again (presence and rooms), for the periodic refresh.
    public func refresh(_ decisions: [PresenceDecision], now: Double) throws -> [OutboundMessage] {
        var out = try decisions.map { OutboundMessage(topic: topics.presence($0.id), payload: try $0.wireJSON(), retain: true, qos: 1) }
        out += try roomNames().map { try occupancy($0, now: now) }
        return out
    }

    /// Occupancy of every configured room (and rooms seen in decisions).
    public func roomNames() -> [String] {
        Set(site.rooms.map(\.name)).union(members.keys).sorted()
    }

    func occupancy(_ room: String, now: Double) throws -> OutboundMessage {
        let o = RoomOccupancy(room: room, floor: floorOf[room], beacons: Array(members[room] ?? []), ts: now)
        return try OutboundMessage(topic: topics.room(room), json: o, retain: true, qos: 1)
    }
}

/// The payload Home Assistant's mqtt_room sensor reads on `room_presence/<room>`.
struct MQTTRoomReport: Codable {
    var id: String
    var name: String
    var distance: Double
}
