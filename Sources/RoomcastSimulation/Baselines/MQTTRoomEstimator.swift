import RoomcastFusion
import Shared
import RoomcastAgent

/// Baseline with Home Assistant `mqtt_room` semantics: every reading (at most one
/// per second per node) carries the node's latest distance; it is taken when it is
/// from the current room, closer than the current distance, or when the current
/// room has not been confirmed for `timeout` seconds. Decides on arrival.
public struct MQTTRoomEstimator: PresenceEstimator, Sendable {
    /// HA's `timeout` (default 5 s).
    public var timeout = 5.0
    /// HA's `away_time`; 0 = never away (HA's default). Roomcast's scenarios use 30 s.
    public var awayAfter = 30.0
    /// Judge each reading by the distance of its raw RSSI (what a plain publisher
    /// such as ESPresense without filtering sends) instead of the filtered distance.
    public var rawDistance = false
    /// Path-loss exponent for `rawDistance`.
    public var exponent = 2.0
    private var book: DecisionBook
    private var state: [BeaconID: (room: String, distance: Double, updated: Double)] = [:]
    private var lastSeen: [BeaconID: Double] = [:]
    private var offline: Set<String> = []

    public init(site: SiteModel) { book = DecisionBook(site: site) }

    public mutating func ingest(_ reading: BeaconReading, now: Double) {
        guard !offline.contains(reading.node), let room = book.room(of: reading.node) else { return }
        lastSeen[reading.id] = max(lastSeen[reading.id] ?? reading.ts, reading.ts)
        let distance = rawDistance
            ? DistanceModel.logDistance(exponent: exponent).distance(rssi: Double(reading.rssi), power: Double(reading.power))
                ?? reading.distance
            : reading.distance
        if let s = state[reading.id],
           !(room == s.room || distance < s.distance || now - s.updated >= timeout) {
            return
        }
        state[reading.id] = (room, distance, now)
        book.place(reading.id, node: reading.node, distance: distance, lastSeen: lastSeen[reading.id],
                   at: now, reason: "mqtt_room")
    }

    public mutating func nodeStatus(_ node: String, online: Bool, now: Double) {
        if online { offline.remove(node) } else { offline.insert(node) }
    }

    public mutating func tick(now: Double) -> [PresenceDecision] {
        if awayAfter > 0 {
            for (id, seen) in lastSeen.sorted(by: { $0.key < $1.key }) where now - seen > awayAfter {
                state[id] = nil
                book.place(id, node: nil, distance: nil, lastSeen: seen, at: now, reason: "away_time")
            }
        }
        return book.drain()
    }

    public func decision(for id: BeaconID) -> PresenceDecision? { book.decisions[id] }
}
