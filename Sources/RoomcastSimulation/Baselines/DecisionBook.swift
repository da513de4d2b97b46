import Shared

/// Bookkeeping shared by the baseline estimators: which room each node is in,
/// the decision in force per beacon, and which decisions changed since the last tick.
public struct DecisionBook: Sendable {
    public let site: SiteModel
    private let roomOfNode: [String: String]
    private let floorOfRoom: [String: Int]
    public private(set) var decisions: [BeaconID: PresenceDecision] = [:]
    private var changed: [BeaconID] = []

    public init(site: SiteModel) {
        self.site = site
        var rooms: [String: String] = [:]
        for n in site.nodes { if let r = n.room { rooms[n.name] = r } }
        roomOfNode = rooms
        floorOfRoom = Dictionary(site.rooms.map { ($0.name, $0.floor) }, uniquingKeysWith: { a, _ in a })
    }

    /// The room a node stands in, if configured.
    public func room(of node: String) -> String? { roomOfNode[node] }

    /// Puts `id` at `node`'s room (nil node = away) at `t`; records a change when the room differs.
    public mutating func place(_ id: BeaconID, node: String?, distance: Double?, lastSeen: Double?, at t: Double,
                               reason: String) {
        let room = node.flatMap { roomOfNode[$0] }
        if let current = decisions[id] {
            if current.room == room {
                var same = current
                same.node = node ?? current.node
                same.distance = distance
                same.lastSeen = lastSeen
                decisions[id] = same
                return
            }
        } else if room == nil {
            return
        }
        var d = PresenceDecision(id: id, name: nil, room: room, floor: room.flatMap { floorOfRoom[$0] },
                                 distance: distance, confidence: room == nil ? 0 : 1, node: node, since: t,
                                 lastSeen: lastSeen, evidence: [], ts: t)
        d.reason = reason
        decisions[id] = d
        if !changed.contains(id) { changed.append(id) }
    }

    /// The decisions that changed since the previous call, in the order they changed.
    public mutating func drain() -> [PresenceDecision] {
        defer { changed.removeAll() }
        return changed.compactMap { decisions[$0] }
    }
}
