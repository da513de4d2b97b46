import RoomcastFusion
import Shared

/// One event on `<prefix>/aggregator/learn/result` (not retained): what became of a learn
/// command. A label gives `started`, then `learned` or `not_learned` when its time is up
/// (or `cancelled`, or `replaced` by a newer label for the same beacon); `forget` gives
/// `forgotten`; a command that cannot be carried out gives `rejected` with the reason.
public struct LearnResult: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable {
        case started, learned, notLearned = "not_learned", cancelled, replaced, forgotten, rejected
    }

    public var v = WireFormat.version
    public var ts: Double
    public var status: Status
    /// The sender's `request` token, when the command carried one.
    public var request: String?
    public var room: String?
    public var beacon: BeaconID?
    /// When the label began and ends (or ended).
    public var started: Double?
    public var ends: Double?
    /// Seconds in which some node heard the beacon.
    public var recorded: Double?
    /// What each node heard during the label (`learned`, `not_learned`).
    public var nodes: [LearnedRooms.NodeLevel]?
    /// Why (`rejected`, `not_learned`).
    public var error: String?

    public init(ts: Double, status: Status, request: String? = nil, room: String? = nil, beacon: BeaconID? = nil,
                started: Double? = nil, ends: Double? = nil, recorded: Double? = nil,
                nodes: [LearnedRooms.NodeLevel]? = nil, error: String? = nil) {
        self.ts = ts
        self.status = status
        self.request = request
        self.room = room
        self.beacon = beacon
        self.started = started
        self.ends = ends
        self.recorded = recorded
        self.nodes = nodes
        self.error = error
    }

    /// The result of a finished label.
    public init(_ label: FinishedLabel, ts: Double, request: String?) {
        var why: String?
        if case .rejected(let reason) = label.outcome { why = reason }
        self.init(ts: ts, status: why == nil ? .learned : .notLearned, request: request, room: label.room, beacon: label.beacon,
                  started: label.started, ends: label.ends, recorded: LearnState.rounded(label.recorded),
                  nodes: label.levels.map(LearnState.rounded), error: why)
    }

    public func message(topics: Topics) throws -> OutboundMessage {
        try OutboundMessage(topic: topics.aggregatorLearnResult, json: self, retain: false, qos: 1)
    }
}
