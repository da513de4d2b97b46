import Shared

/// One message layout for another ecosystem that the aggregator publishes from its decisions:
/// its key under `output:`, the messages for one changed decision, and those of a refresh.
/// `all` is the list of them; a new layout is a value there (and its row in
/// docs/configuration.md).
public struct DecisionOutput: Sendable, Equatable, CustomStringConvertible {
    /// The key under `output:` that turns it on (`mqtt_room`).
    public let key: String
    /// The messages for a decision that changed, with the room it was last published in (`not_home`
    /// for away, nil when never published) and whether that differs from the decision's.
    let changed: @Sendable (_ decision: PresenceDecision, _ previous: String?, _ moved: Bool) throws -> [OutboundMessage]
    /// The messages of a periodic refresh, for every decision.
    let refresh: @Sendable (_ decisions: [PresenceDecision]) throws -> [OutboundMessage]

    public static func == (a: DecisionOutput, b: DecisionOutput) -> Bool { a.key == b.key }

    public var description: String { key }

    /// Home Assistant's mqtt_room sensor (`room_presence/<room>`), on change and with every refresh:
    /// its reports are not retained, so the refresh is how a Home Assistant that (re)started after
    /// the last move learns where beacons are. An away is reported as the room `not_home`, the
    /// state mqtt_room shows for away: left to its own `away_timeout`, the sensor would keep the
    /// last room (for good at 0, its default), and a beacon back in another room would pass
    /// through the room it had left.
    public static let mqttRoom = DecisionOutput(key: "mqtt_room", changed: { d, previous, moved in
        var out: [OutboundMessage] = []
        // mqtt_room keeps a beacon in its room unless a report from another room is closer or
        // the last one is `timeout` (5 s) old, so a move to a room at the same distance would be
        // ignored: first tell the old room the beacon is out of range. Not after an away, whose
        // report any room beats (`MQTTRoomReport.awayDistance`): out of range, `not_home`
        // would be taken again for a moment, firing what waits for it.
        if moved, let old = previous, old != PresencePublisher.awayText {
            out.append(try mqttRoomReport(d, room: old, distance: MQTTRoomReport.outOfRange))
        }
        return out + [try mqttRoomReport(d)]
    }, refresh: { decisions in try decisions.map { try mqttRoomReport($0) } })

    /// Every output, in the order their messages are published.
    public static let all: [DecisionOutput] = [.mqttRoom]

    /// A decision's mqtt_room report: its room at its distance, or, away, `not_home` at
    /// `MQTTRoomReport.awayDistance`.
    static func mqttRoomReport(_ d: PresenceDecision) throws -> OutboundMessage {
        guard let room = d.room else { return try mqttRoomReport(d, room: PresencePublisher.awayText, distance: MQTTRoomReport.awayDistance) }
        return try mqttRoomReport(d, room: room, distance: d.distance ?? 0)
    }

    static func mqttRoomReport(_ d: PresenceDecision, room: String, distance: Double) throws -> OutboundMessage {
        try OutboundMessage(topic: Topics.Compatibility.mqttRoom(room), json: MQTTRoomReport(
            id: d.id.rawValue, name: d.name ?? d.id.rawValue, distance: distance))
    }
}
