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

    /// Every beacon published in a room, as the engine decided it: the awaited ones (listed, or
    /// a person's) first, then those heard last, at most `LearnedRooms.maximumPlacements`.
    public func placementsToKeep() -> [LearnedRooms.Placement] {
        var kept: [(awaited: Bool, placement: LearnedRooms.Placement)] = []
        for (id, room) in publisher.placedBeacons {
            guard let d = engine.decision(for: id), d.room == room else { continue }
            let placement = LearnedRooms.Placement(beacon: id, room: room, since: d.since, seen: d.lastSeen,
                                                   node: d.node, confidence: min(max(d.confidence, 0), 1), at: d.ts)
            kept.append((knownBeacons[id] != nil || peoplesBeacons.contains(id), placement))
        }
        if kept.count > LearnedRooms.maximumPlacements {
            kept.sort { a, b in
                a.awaited != b.awaited ? a.awaited : (a.placement.seen ?? a.placement.at) > (b.placement.seen ?? b.placement.at)
            }
            kept.removeLast(kept.count - LearnedRooms.maximumPlacements)
        }
        return kept.map(\.placement).sorted { $0.beacon < $1.beacon }
    }

    /// Resumes `placements` (read from the state file at the start) that the broker had no
    /// retained presence for, as if the broker had sent them: what the broker retained is what
    /// was published last, and wins. Returns what to publish and how many were resumed.
    public mutating func resume(placements: [LearnedRooms.Placement], now: Double) throws -> (messages: [OutboundMessage], resumed: Int) {
        var out: [OutboundMessage] = []
        var resumed = 0
        for p in placements where engine.decision(for: p.beacon) == nil && publisher.publishedRoom(of: p.beacon) == nil {
            let d = PresenceDecision(id: p.beacon, name: nil, room: p.room, floor: nil, distance: nil, confidence: p.confidence,
                                     node: p.node, since: p.since, lastSeen: p.seen, evidence: [], ts: p.at)
            out += try handle(topic: topics.presence(p.beacon), payload: d.wireJSON(), now: now).messages
            if publisher.publishedRoom(of: p.beacon) == .some(p.room) { resumed += 1 }
        }
        return (out, resumed)
    }
}
