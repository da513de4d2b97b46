import Shared

/// The fusion engine's training state: the labels running ("I am in the kitchen now"),
/// their results waiting to be taken, and what was learned (`FusionEngine+Training`).
struct RoomTraining: Sendable {
    /// What was taught; `revision` counts its changes, so the engine knows when to index it again.
    var learned = LearnedRooms() { didSet { revision &+= 1 } }
    var revision = 0
    var labels: [Label] = []
    var finished: [FinishedLabel] = []

    /// Labels running at once at most: each is one person carrying one beacon.
    static let maximumLabels = 8
    /// Results kept for `takeFinishedLabels` at most (the oldest go first).
    static let maximumFinished = 64
    /// Shortest and longest label.
    static let secondsRange = 5.0...600.0
    /// Share of a label's seconds that needs a node hearing the beacon for it to count.
    static let minimumCoverage = 0.5

    /// One label being recorded.
    struct Label: Sendable {
        var room: String
        var beacon: BeaconID
        var started: Double
        var ends: Double
        /// Seconds with any fresh node so far.
        var recorded = 0.0
        /// Per engine node index: the weighted running mean and sum of squared deviations
        /// (West's weighted Welford update) of fast average − measured power.
        var levels: [Level] = []

        var seconds: Double { ends - started }

        mutating func add(node n: Int, value: Double, weight: Double) {
            if levels.count <= n { levels.append(contentsOf: repeatElement(Level(), count: n + 1 - levels.count)) }
            levels[n].add(value, weight: weight)
        }
    }

    struct Level: Sendable {
        var weight = 0.0
        var mean = 0.0
        var m2 = 0.0

        mutating func add(_ x: Double, weight w: Double) {
            weight += w
            let delta = x - mean
            mean += w / weight * delta
            m2 += w * delta * (x - mean)
        }

        var spread: Double { weight > 0 ? max(0, m2 / weight).squareRoot() : 0 }
    }
}

/// A label in progress, for progress displays.
public struct ActiveLabel: Codable, Sendable, Equatable {
    public var room: String
    public var beacon: BeaconID
    public var started: Double
    public var ends: Double
    /// Seconds so far in which some node had fresh evidence of the beacon.
    public var recorded: Double
    /// Nodes that have heard the beacon during the label, sorted.
    public var nodes: [String]
}

/// A label that ran its time: what was learned from it, and whether it went into the
/// learned rooms.
public struct FinishedLabel: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        /// Merged into the learned rooms.
        case learned
        /// Not merged: why (too few seconds with a node hearing the beacon, say).
        case rejected(String)
    }

    public var room: String
    public var beacon: BeaconID
    public var started: Double
    public var ends: Double
    /// Seconds in which some node had fresh evidence of the beacon.
    public var recorded: Double
    /// What each node heard in this label, sorted by node name.
    public var levels: [LearnedRooms.NodeLevel]
    public var outcome: Outcome

    /// The label's length (seconds asked for).
    public var seconds: Double { ends - started }
}

/// Why a label could not start.
public enum LabelError: Error, Equatable, CustomStringConvertible {
    case unknownRoom(String, suggestion: String?, rooms: [String])
    case secondsOutOfRange(Double)
    case tooManyLabels(Int)
    /// The beacon is a node's own (`nodes[].beacon`): never tracked, so nothing would be heard.
    case nodeBeacon(BeaconID, node: String)
    /// The site lists its beacons and this is not one of them: never tracked.
    case untrackedBeacon(BeaconID)
    case badTime

    public var description: String {
        switch self {
        case .unknownRoom(let room, let suggestion, let rooms):
            if let suggestion { return "unknown room '\(room)'; did you mean '\(suggestion)'?" }
            return rooms.isEmpty ? "unknown room '\(room)': the site has no rooms"
                : "unknown room '\(room)'; the rooms are \(rooms.prefix(20).joined(separator: ", "))\(rooms.count > 20 ? ", …" : "")"
        case .secondsOutOfRange(let s):
            return "seconds must be \(Int(RoomTraining.secondsRange.lowerBound))…\(Int(RoomTraining.secondsRange.upperBound)), not \(s)"
        case .tooManyLabels(let n):
            return "\(n) labels are already running (at most \(n) at once); cancel one or wait"
        case .nodeBeacon(let id, let node):
            return "'\(id)' is node '\(node)'s own beacon, which is never tracked; carry another beacon"
        case .untrackedBeacon(let id):
            return "'\(id)' is not under beacons: in the site config, so it is not tracked; add it there first"
        case .badTime:
            return "the time is not a finite number"
        }
    }
}
