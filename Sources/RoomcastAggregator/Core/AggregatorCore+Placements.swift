import RoomcastFusion
import Shared

/// The rooms beacons were last published in, kept in the state file (`LearnedRoomsPersistence`):
/// a broker without persistence loses every retained presence at a power cut, and an
/// aggregator restarted with it would have nothing to resume from. Each beacon would then enter
/// its room anew (an `enter` event each, `since` starting over), and one that sleeps when still
/// would have no room until it moved.
extension AggregatorCore {
    /// Moves whenever a beacon's published room changes: placements saved before are stale.
    public var placementsRevision: UInt64 { publisher.roomsRevision }

    /// Every beacon published in a room, as the engine decided it, and those the file held that
    /// are not resumed yet (a write in the start's resume window): the awaited ones (listed, or
    /// a person's) first, then those heard last, at most `LearnedRooms.maximumPlacements`. Only
    /// what the state file reads back: a time out of its bounds (from a retained message
    /// anybody could publish) leaves the beacon out, and a name too long or a reason that is no
    /// plain word goes unsaid.
    public func placementsToKeep() -> [LearnedRooms.Placement] {
        var kept: [(awaited: Bool, placement: LearnedRooms.Placement)] = []
        let times = -LearnedRooms.timeBound...LearnedRooms.timeBound
        for (id, room) in publisher.placedBeacons {
            guard let d = engine.decision(for: id), d.room == room, times.contains(d.since), times.contains(d.ts),
                  d.node.map(TopicName.isValid) ?? true else { continue }
            let placement = LearnedRooms.Placement(
                beacon: id, name: d.name.flatMap { LearnedRooms.isValidDisplayName($0) ? $0 : nil }, room: room,
                since: d.since, seen: d.lastSeen.flatMap { times.contains($0) ? $0 : nil }, node: d.node,
                confidence: min(max(d.confidence, 0), 1), reason: d.reason.flatMap { TopicName.isValid($0) ? $0 : nil }, at: d.ts)
            kept.append((knownBeacons[id] != nil || peoplesBeacons.contains(id), placement))
        }
        for p in pendingPlacements.values where publisher.publishedRoom(of: p.beacon) == nil {
            kept.append((knownBeacons[p.beacon] != nil || peoplesBeacons.contains(p.beacon), p))
        }
        if kept.count > LearnedRooms.maximumPlacements {
            kept.sort { a, b in
                a.awaited != b.awaited ? a.awaited : (a.placement.seen ?? a.placement.at) > (b.placement.seen ?? b.placement.at)
            }
            kept.removeLast(kept.count - LearnedRooms.maximumPlacements)
        }
        return kept.map(\.placement).sorted { $0.beacon < $1.beacon }
    }

    /// Holds the state file's placements, read at the start, until each beacon's retained
    /// presence arrives (the newer of the two is resumed), it is first heard (resumed, then
    /// heard), or the start's resume window ends (`resumePendingPlacements`).
    public mutating func holdPlacements(_ placements: [LearnedRooms.Placement]) {
        pendingPlacements = Dictionary(placements.map { ($0.beacon, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// Resumes the held placements whose beacons the broker had no retained presence of and no
    /// node has heard yet: as if the broker had retained them. Returns what to publish.
    public mutating func resumePendingPlacements(now: Double) throws -> [OutboundMessage] {
        let placements = pendingPlacements.values.sorted { $0.beacon < $1.beacon }
        pendingPlacements = [:]
        var out: [OutboundMessage] = []
        for p in placements where engine.decision(for: p.beacon) == nil && publisher.publishedRoom(of: p.beacon) == nil {
            out += try resume(p, now: now)
        }
        return out
    }

    /// Resumes one placement the broker held no retained presence of, counted in
    /// `placementsResumed` when the beacon is then in its room.
    mutating func resume(_ p: LearnedRooms.Placement, now: Double) throws -> [OutboundMessage] {
        let out = try resumeRetained(Self.decision(of: p), now: now)
        if publisher.publishedRoom(of: p.beacon) == .some(p.room) { placementsResumed += 1 }
        return out
    }

    /// The decision a placement stands for, as its retained presence would have said it.
    static func decision(of p: LearnedRooms.Placement) -> PresenceDecision {
        var d = PresenceDecision(id: p.beacon, name: p.name, room: p.room, floor: nil, distance: nil, confidence: p.confidence,
                                 node: p.node, since: p.since, lastSeen: p.seen, evidence: [], ts: p.at)
        d.reason = p.reason
        return d
    }
}
