import RoomcastFusion
import Shared

/// A beacon that walks from one partition's rooms into another's (`partition:`). The partition
/// it left stops hearing it and, after the away timeout, decides it away; the one it reached
/// has placed it in a room by then. Both publish on the same presence topic, so the away would
/// overwrite the room, until the next refresh put it back and the next refresh of the first
/// took it away again. A partition whose beacon goes away where another partition has heard it
/// since, in one of its rooms, hands it over instead: the beacon leaves this partition's rooms
/// (their occupancy and a leave event) and its person's place here, and its presence and
/// person topics are left to the partition that has it.
extension AggregatorCore {
    /// Another partition's presence heard live on the shared topic (the service passes every
    /// presence after the start; our own echo places the beacon in none of the other rooms).
    /// Returns what to publish in answer: when it says away a beacon this partition has in one of
    /// its rooms, heard here since that partition last heard it (a walk across the border: the
    /// partition left behind heard the beacon a little longer than this one's last word), this
    /// partition's presence and person go out again at once. Left to the next refresh (a minute
    /// by default), the overwritten away stood that long.
    public mutating func otherPartitionsPresence(_ payload: [UInt8], id: BeaconID, now: Double) throws -> [OutboundMessage] {
        guard isPartition, let d = try? WireFormat.decode(PresenceDecision.self, from: payload), d.id == id else { return [] }
        noteClaim(d, now: now)
        guard d.room == nil, let ours = engine.decision(for: id), let room = ours.room, !otherPartitionsRooms.contains(room),
              (ours.lastSeen ?? -.infinity) > (d.lastSeen ?? -.infinity) else { return [] }
        return try republish(id) + publisher.personMessages(owning: id)
    }

    /// Records a decision of another partition that places a beacon this partition tracks in
    /// one of its rooms: when it last heard the beacon, at most `now` (a claim from the future,
    /// a peer's clock ahead or a forged message, would silence this partition's word until then).
    /// Bounded by the beacons the engine tracks. For people, also where any beacon of theirs is
    /// placed elsewhere, and another partition's away that ends such a placement.
    mutating func noteClaim(_ d: PresenceDecision, now: Double) {
        // Where it was last, by a word as new as this partition's: both then say the same. Its
        // stamp is taken as at most `now`, as a claim's: one from the future would hold for good.
        if let last = d.room ?? d.lastRoom, isSiteRoom(last), let heard = d.lastSeen, heard.isFinite,
           min(heard, now) >= (engine.decision(for: d.id)?.lastSeen ?? -.infinity) {
            publisher.placedLastElsewhere(d.id, room: last, seen: min(heard, now))
        }
        guard let room = d.room else {
            // Another partition's away: its placement, heard no later, no longer holds. This
            // partition's own away, echoed, says nothing of another's.
            if let ours = engine.decision(for: d.id), ours.room == nil, ours.lastSeen == d.lastSeen { return }
            let seen = min(d.lastSeen ?? -.infinity, now)
            publisher.awayElsewhere(d.id, seen: seen)
            // Nobody has it since: a return here is a return, not a hand-back.
            if let claimed = claims[d.id], seen >= claimed { claims[d.id] = nil }
            return
        }
        guard otherPartitionsRooms.contains(room), let heard = d.lastSeen, heard.isFinite else { return }
        let seen = min(heard, now)
        // A person of several beacons: one this partition does not track placed elsewhere
        // still means the person may be there (bounded by the people configured). Its `since`
        // as sent: every partition must compare the same stamps.
        publisher.placedElsewhere(d.id, since: d.since, seen: seen)
        guard engine.decision(for: d.id) != nil else { return }
        claims[d.id] = max(claims[d.id] ?? -.infinity, seen)
    }

    /// True when `d` is away here and another partition has heard the beacon since, in one of
    /// its rooms. Heard by neither since the other's last word, both publish away.
    func isHandedOver(_ d: PresenceDecision) -> Bool {
        guard d.room == nil, let claimed = claims[d.id] else { return false }
        return claimed > (d.lastSeen ?? -.infinity)
    }

    func handedOver(_ decisions: [PresenceDecision]) -> Set<BeaconID> {
        claims.isEmpty ? [] : Set(decisions.filter(isHandedOver).map(\.id))
    }

    /// The decisions of `decisions` that place here a beacon another partition has placed and
    /// not said away since: handed back, not a return.
    func handedBack(_ decisions: [PresenceDecision]) -> Set<BeaconID> {
        claims.isEmpty ? [] : Set(decisions.filter { $0.room != nil && claims[$0.id] != nil }.map(\.id))
    }
}
