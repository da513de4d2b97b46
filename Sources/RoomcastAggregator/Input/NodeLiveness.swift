import Shared

/// Which nodes have promised to be heard every second (`NodeHeartbeat`), and which of those have
/// gone quiet: missing, not silent.
///
/// A node whose link dies without closing (its Wi-Fi gone, its power cut) keeps its connection
/// open at the broker until the keep-alive gives up, 45 s at the default, and only then does its
/// Last Will say `offline`. Its silence meanwhile looked like every beacon it heard leaving. A node
/// that sends heartbeats says, by going quiet, that nothing is listening there: once it has sent
/// nothing for `quietAfter`, fusion takes it as offline (its beacons held, `nodes_offline`) until
/// anything comes from it again. A node that never sent a heartbeat (an older agent, an
/// ESPresense node) promised nothing and is judged by its status topic alone.
public struct NodeLiveness: Sendable, Equatable {
    /// Seconds without a message from a node that promised a heartbeat a second before it is taken
    /// as missing: two heartbeats late, and less than the shortest silence fusion reads as a beacon
    /// leaving (its freshness, 4 s), so no beacon goes away while its node is only unheard.
    public static let quietAfter = 3 * NodeHeartbeat.interval

    /// Nodes that promised a heartbeat, and when anything last came from each (aggregator time).
    private var lastHeard: [String: Double] = [:]
    /// Of those, the ones quiet for `quietAfter`, and since when (their last message).
    public private(set) var quiet: [String: Double] = [:]
    public let maximumNodes: Int

    public init(maximumNodes: Int = 4096) { self.maximumNodes = maximumNodes }

    /// Whether `node` has sent a heartbeat in this run.
    func hasHeard(_ node: String) -> Bool { lastHeard[node] != nil }

    /// A heartbeat from `node` at `now`: it promises one a second from now on. True when it had
    /// gone quiet (it is back).
    mutating func heartbeat(_ node: String, now: Double) -> Bool {
        if lastHeard[node] == nil, lastHeard.count >= maximumNodes { return false }
        return heard(node, promising: true, now: now)
    }

    /// Any other message from `node` at `now`. True when it had gone quiet (it is back).
    mutating func heard(_ node: String, now: Double) -> Bool {
        heard(node, promising: false, now: now)
    }

    private mutating func heard(_ node: String, promising: Bool, now: Double) -> Bool {
        // Every reading passes here: where no node sends heartbeats (a replay, older agents)
        // it costs no lookup, and one lookup where some do.
        if promising {
            lastHeard[node] = max(lastHeard[node] ?? now, now)
        } else {
            guard !lastHeard.isEmpty, let last = lastHeard[node] else { return false }
            lastHeard[node] = max(last, now)
        }
        return !quiet.isEmpty && quiet.removeValue(forKey: node) != nil
    }

    /// The nodes that have gone quiet by `now`, each with its last message's time, counting no
    /// silence before `listeningSince` (the aggregator was not listening then: the quiet was ours).
    mutating func goneQuiet(at now: Double, listeningSince: Double) -> [(node: String, since: Double)] {
        var gone: [(node: String, since: Double)] = []
        for (node, last) in lastHeard where quiet[node] == nil && now - max(last, listeningSince) > Self.quietAfter {
            quiet[node] = last
            gone.append((node, last))
        }
        return gone.sorted { $0.node < $1.node }
    }

    /// `node` said it is offline (its status, or its Last Will): its status says the rest, and a
    /// heartbeat after it reconnects promises again.
    mutating func forget(_ node: String) {
        lastHeard[node] = nil
        quiet[node] = nil
    }

    /// The aggregator's clock stepped back by `seconds`.
    mutating func clockSteppedBack(by seconds: Double) {
        for node in lastHeard.keys { lastHeard[node]! -= seconds }
        for node in quiet.keys { quiet[node]! -= seconds }
    }
}
