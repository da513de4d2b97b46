/// Builds and parses every topic of the wire contract (docs/mqtt-api.md).
/// The prefix defaults to `roomcast`.
public struct Topics: Sendable, Equatable {
    public let prefix: String

    public init(prefix: String = "roomcast") {
        self.prefix = prefix
    }

    public func nodeStatus(_ node: String) -> String { "\(prefix)/nodes/\(node)/status" }
    public func nodeTelemetry(_ node: String) -> String { "\(prefix)/nodes/\(node)/telemetry" }
    /// Not retained, every second while the agent is connected (`NodeHeartbeat`).
    public func nodeHeartbeat(_ node: String) -> String { "\(prefix)/nodes/\(node)/heartbeat" }
    public func nodeBeacon(_ node: String, _ id: BeaconID) -> String { "\(prefix)/nodes/\(node)/beacons/\(id.rawValue)" }
    public func nodeEvents(_ node: String) -> String { "\(prefix)/nodes/\(node)/events" }
    public func presence(_ id: BeaconID) -> String { "\(prefix)/presence/\(id.rawValue)" }
    /// The plain-text room of a beacon (`not_home` when away), for consumers that cannot read JSON
    /// (Home Assistant's MQTT device_tracker takes its state from the raw payload).
    public func presenceRoom(_ id: BeaconID) -> String { "\(prefix)/presence/\(id.rawValue)/room" }
    public func room(_ room: String) -> String { "\(prefix)/rooms/\(room)" }
    /// Retained: where a person is (`PersonPresence`).
    public func person(_ id: String) -> String { "\(prefix)/people/\(id)" }
    public var events: String { "\(prefix)/events" }
    public var aggregatorStatus: String { "\(prefix)/aggregator/status" }
    public var aggregatorLease: String { "\(prefix)/aggregator/lease" }
    /// Retained, one per hot-standby instance: `online`, and `offline` by its Last Will.
    public func aggregatorInstance(_ name: String) -> String { "\(aggregatorInstancesPrefix)\(name)" }
    /// Retained: what fusion learned about each receiver (`ReceiverCalibrationReport`).
    public var aggregatorCalibration: String { "\(prefix)/aggregator/calibration" }
    /// Commands that teach rooms (`{"room":"kitchen","beacon":"<id>","seconds":30}`), from users,
    /// dashboards and automations.
    public var aggregatorLearn: String { "\(prefix)/aggregator/learn" }
    /// Retained: what has been learned and the labels running.
    public var aggregatorLearnState: String { "\(prefix)/aggregator/learn/state" }
    /// Not retained: what became of each learn command (started, learned, rejected, …).
    public var aggregatorLearnResult: String { "\(prefix)/aggregator/learn/result" }
    /// One aggregator process's drain marker: it publishes a token here and, when the token comes
    /// back, knows the broker has delivered everything it held for it before (the backlog after a
    /// pause, the retained state after a reconnect). Not retained.
    public func aggregatorSync(_ process: String) -> String { "\(prefix)/aggregator/sync/\(process)" }

    /// Subscription filters.
    public var allNodeBeacons: String { "\(prefix)/nodes/+/beacons/+" }
    public func allBeacons(of node: String) -> String { "\(prefix)/nodes/\(node)/beacons/+" }
    public var allNodeStatus: String { "\(prefix)/nodes/+/status" }
    public var allNodeTelemetry: String { "\(prefix)/nodes/+/telemetry" }
    public var allNodeHeartbeats: String { "\(prefix)/nodes/+/heartbeat" }
    public var allNodeEvents: String { "\(prefix)/nodes/+/events" }
    public var allPresence: String { "\(prefix)/presence/+" }
    public var allRooms: String { "\(prefix)/rooms/+" }
    public var allPeople: String { "\(prefix)/people/+" }

    /// What every topic of one kind begins with, for matching a topic without parsing it (the
    /// reading path's and the retained read-back's).
    public var nodesPrefix: String { "\(prefix)/nodes/" }
    public var presencePrefix: String { "\(prefix)/presence/" }
    public var roomsPrefix: String { "\(prefix)/rooms/" }
    public var peoplePrefix: String { "\(prefix)/people/" }
    public var aggregatorInstancesPrefix: String { "\(prefix)/aggregator/instances/" }

    /// A parsed topic of the contract.
    public enum Topic: Equatable, Sendable {
        case nodeStatus(node: String)
        case nodeTelemetry(node: String)
        case nodeHeartbeat(node: String)
        case nodeBeacon(node: String, id: BeaconID)
        case nodeEvents(node: String)
        case presence(id: BeaconID)
        case room(String)
        case person(String)
        case events
        case aggregatorStatus
        case aggregatorLease
        case aggregatorCalibration
        case aggregatorLearn
        case aggregatorLearnState
        case aggregatorLearnResult
    }

    /// Parses `topic`; nil when it is not one of ours (or a beacon id is invalid).
    public func parse(_ topic: String) -> Topic? {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let p = prefix.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard levels.count > p.count, Array(levels[0..<p.count]) == p else { return nil }
        let rest = Array(levels[p.count...])
        guard rest.allSatisfy({ !$0.isEmpty }) else { return nil }
        switch rest.count {
        case 1 where rest[0] == "events": return .events
        case 2 where rest[0] == "aggregator" && rest[1] == "status": return .aggregatorStatus
        case 2 where rest[0] == "aggregator" && rest[1] == "lease": return .aggregatorLease
        case 2 where rest[0] == "aggregator" && rest[1] == "calibration": return .aggregatorCalibration
        case 2 where rest[0] == "aggregator" && rest[1] == "learn": return .aggregatorLearn
        case 3 where rest[0] == "aggregator" && rest[1] == "learn" && rest[2] == "state": return .aggregatorLearnState
        case 3 where rest[0] == "aggregator" && rest[1] == "learn" && rest[2] == "result": return .aggregatorLearnResult
        case 2 where rest[0] == "presence": return BeaconID(rest[1]).map { .presence(id: $0) }
        case 2 where rest[0] == "rooms": return .room(rest[1])
        case 2 where rest[0] == "people": return .person(rest[1])
        case 3 where rest[0] == "nodes":
            switch rest[2] {
            case "status": return .nodeStatus(node: rest[1])
            case "telemetry": return .nodeTelemetry(node: rest[1])
            case "heartbeat": return .nodeHeartbeat(node: rest[1])
            case "events": return .nodeEvents(node: rest[1])
            default: return nil
            }
        case 4 where rest[0] == "nodes" && rest[2] == "beacons":
            return BeaconID(rest[3]).map { .nodeBeacon(node: rest[1], id: $0) }
        default: return nil
        }
    }
}
