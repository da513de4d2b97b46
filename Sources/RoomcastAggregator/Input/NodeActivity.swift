import Shared

/// What the aggregator has heard from each node: readings accepted and when the last arrived.
/// Bounded: past `maximumNodes` new names are not tracked (the intake admits only configured
/// nodes when the site lists any, so this matters only for an open site under a flood).
public struct NodeActivity: Sendable, Equatable {
    public struct Node: Sendable, Equatable {
        public var readings: UInt64 = 0
        /// Aggregator time of the newest reading.
        public var lastSeen: Double = 0
    }

    public private(set) var nodes: [String: Node] = [:]
    public let maximumNodes: Int
    /// Readings accepted from every node, those past `maximumNodes` included.
    public private(set) var readings: UInt64 = 0

    public init(maximumNodes: Int = 4096) {
        self.maximumNodes = maximumNodes
    }

    /// The aggregator's clock stepped back by `seconds`.
    mutating func clockSteppedBack(by seconds: Double) {
        for name in nodes.keys { nodes[name]!.lastSeen -= seconds }
    }

    mutating func heard(_ node: String, now: Double) {
        readings &+= 1
        if nodes[node] == nil, nodes.count >= maximumNodes { return }
        nodes[node, default: Node()].readings += 1
        nodes[node]!.lastSeen = now
    }
}
