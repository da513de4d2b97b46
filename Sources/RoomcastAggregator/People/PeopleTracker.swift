import Shared

/// Places people from their beacons' decisions. Pure: it keeps each assigned beacon's latest
/// decision and works out where each person is when asked.
///
/// A person is in the room of the beacon placed most recently and most confidently: among their
/// beacons that are in a room, those last heard within `recentWindow` of the newest, the most
/// confident — and the one already deciding keeps deciding unless another leads it by
/// `switchMargin`, so a tag and a phone in two rooms do not flip the person at every reading.
/// A beacon held without evidence (`nodes_offline`, confidence 0) still places its person, so no
/// evidence is never away. A beacon resting (`sleeps_when_still`: lying where it was put down)
/// places them only until another of theirs is heard after it fell silent: keys left on the hook
/// do not keep at home someone who left with their phone. Away (`not_home`) only once every beacon of theirs with a decision is away.
public struct PeopleTracker: Sendable {
    public let people: [SiteModel.Person]
    /// The person each assigned beacon belongs to.
    public let ownerOf: [BeaconID: String]
    /// Seconds within the newest placement that another beacon's placement still counts as recent.
    public static let recentWindow: Double = 15
    /// The confidence lead another beacon needs over the deciding one to take over.
    public static let switchMargin: Double = 0.1

    private var latest: [BeaconID: PresenceDecision] = [:]
    /// Per assigned beacon, since when another partition has it in one of its rooms
    /// (`partition:`) and when it heard it then, as that partition said, until it says away. A
    /// person is placed by the partition whose beacon of theirs arrived in its room last
    /// (`isPlacedElsewhere`): every partition hears every room change as it is published, so
    /// all compare the same stamps and one places the person. Bounded by the beacons assigned
    /// to people.
    private var placedElsewhere: [BeaconID: (since: Double, seen: Double)] = [:]
    /// Each person's presence as last worked out (nil until one of their beacons has a decision).
    public private(set) var current: [String: PersonPresence] = [:]
    /// Each person's presence as published before a restart (their retained topic): worked out
    /// afresh where it was, a person keeps its `since` rather than take their deciding beacon's
    /// (a phone that arrived after the tag). Bounded by the site's people.
    private var retained: [String: PersonPresence] = [:]
    private let rooms: [String: SiteModel.Room]

    public init(site: SiteModel) {
        self.people = site.people
        self.ownerOf = site.personOfBeacon
        var rooms: [String: SiteModel.Room] = [:]
        for r in site.rooms { rooms[r.name] = r }
        self.rooms = rooms
    }

    /// Records a beacon's decision; true when the beacon belongs to someone.
    @discardableResult
    public mutating func observe(_ d: PresenceDecision) -> Bool {
        guard ownerOf[d.id] != nil else { return false }
        latest[d.id] = d
        return true
    }

    /// Another partition has `beacon` in one of its rooms since `since`, heard at `seen`.
    public mutating func placedElsewhere(_ beacon: BeaconID, since: Double, seen: Double) {
        guard ownerOf[beacon] != nil, since.isFinite, seen.isFinite else { return }
        placedElsewhere[beacon] = (since, seen)
    }

    /// Another partition said `beacon` is away, last heard at `seen`: a placement there heard no
    /// later no longer holds (both stamps are capture times, on the nodes' clocks).
    public mutating func awayElsewhere(_ beacon: BeaconID, seen: Double) {
        guard let placed = placedElsewhere[beacon], seen >= placed.seen else { return }
        placedElsewhere[beacon] = nil
    }

    /// The person's presence as published before a restart (read back from the broker). One
    /// already worked out where it was keeps that `since`; one worked out later does then.
    public mutating func resumeRetained(_ p: PersonPresence, now: Double) {
        guard people.contains(where: { $0.id == p.id }), p.since.isFinite, p.since <= now else { return }
        retained[p.id] = p
        if var cur = current[p.id], cur.state == p.state, cur.room == p.room, p.ts >= cur.since {
            cur.since = p.since
            if cur.lastRoom == nil, let last = p.lastRoom {
                cur.lastRoom = last
                cur.lastRoomName = title(of: last)
            }
            current[p.id] = cur
        }
    }

    /// The `since` published before a restart for `person` in `state` and `room`, if that was it
    /// and it was published during this stay (`stayBegan`: when its beacons' decisions say it
    /// began), not a stay before one they have left since.
    private func retainedSince(_ person: String, _ state: PersonPresence.State, _ room: String?, stayBegan: Double) -> Double? {
        guard let p = retained[person], p.state == state, p.room == room, p.ts >= stayBegan else { return nil }
        return p.since
    }

    /// Works the owners of `beacons` out afresh at the next `update`, as if never placed: at a
    /// start their beacons' decisions are resumed one retained message at a time, and each says
    /// since when it has been where it is.
    public mutating func rework(owning beacons: [BeaconID]) {
        for id in beacons { if let owner = ownerOf[id] { current[owner] = nil } }
    }

    /// Forgets a beacon's decision (the engine no longer tracks it).
    public mutating func forget(_ id: BeaconID) { latest.removeValue(forKey: id) }

    /// Works everyone out again at `now`; returns the people whose state, room, deciding beacon or
    /// reason changed, with what they were before (nil: never worked out) and are now (nil: no
    /// longer placed here).
    public mutating func update(now: Double) -> [(old: PersonPresence?, new: PersonPresence?)] {
        var changed: [(old: PersonPresence?, new: PersonPresence?)] = []
        for person in people {
            let old = current[person.id]
            guard let new = place(person, previous: old, now: now) else {
                // None of their beacons has a decision here any more, or another partition has
                // them: not placed here, and nothing to publish for them; a room they were in
                // here no longer lists them.
                current[person.id] = nil
                if old?.room != nil { changed.append((old, nil)) }
                continue
            }
            current[person.id] = new
            // Once elsewhere, what was published before the restart is of a stay that ended.
            if let r = retained[person.id], r.state != new.state || r.room != new.room { retained[person.id] = nil }
            if old.map({ $0.state != new.state || $0.room != new.room || $0.beacon != new.beacon || $0.reason != new.reason }) ?? true {
                changed.append((old, new))
            }
        }
        return changed
    }

    /// Everyone's presence with fresh values (refresh).
    public func everyone(now: Double) -> [PersonPresence] {
        people.compactMap { p in place(p, previous: current[p.id], now: now).map { var x = $0; x.ts = now; return x } }
    }

    /// The ids of the people in `room`.
    public func people(in room: String) -> [String] {
        current.values.filter { $0.room == room }.map(\.id).sorted()
    }

    /// Whether another partition places `person` (`placedElsewhere`). With beacons of theirs
    /// placed here: when one arrived in a room there after every one here did. Both partitions
    /// compare the same two stamps, so exactly one places them, whatever their clocks say.
    /// With none placed here: while another partition has one placed that it heard after this
    /// one last did.
    func isPlacedElsewhere(_ person: SiteModel.Person, placedHere: [PresenceDecision]) -> Bool {
        let elsewhere = person.beacons.compactMap { b in placedElsewhere[b].map { (beacon: b, since: $0.since, seen: $0.seen) } }
        guard !elsewhere.isEmpty else { return false }
        if let arrived = placedHere.map({ ($0.since, $0.id.rawValue) }).max(by: <) {
            return elsewhere.contains { ($0.since, $0.beacon.rawValue) > arrived }
        }
        return elsewhere.contains { there in latest[there.beacon].map { ($0.lastSeen ?? -.infinity) <= there.seen } ?? true }
    }

    /// A room's display name: the config's, or made from its id.
    private func title(of room: String) -> String { rooms[room]?.title ?? DisplayName.title(for: room) }

    func place(_ person: SiteModel.Person, previous: PersonPresence?, now: Double) -> PersonPresence? {
        let decisions = person.beacons.compactMap { latest[$0] }
        guard !decisions.isEmpty else { return nil }
        let lastSeen = decisions.compactMap(\.lastSeen).max()
        let placed = decisions.filter { d in
            d.room != nil && !(d.reason == PresencePublisher.restingReason
                               && decisions.contains { ($0.lastSeen ?? -.infinity) > (d.lastSeen ?? -.infinity) })
        }
        if isPlacedElsewhere(person, placedHere: placed) { return nil }
        func seen(_ d: PresenceDecision) -> Double { d.lastSeen ?? -.infinity }
        guard let newest = placed.map(seen).max() else {
            // Worked out afresh (resumed at a start, or back from another partition): away
            // since the last of them left. A beacon never heard left nothing: it counts only
            // when all of them are.
            let left = decisions.filter { $0.reason != PresencePublisher.neverHeardReason }
            let away = left.isEmpty ? decisions : left
            let since = previous.map { $0.state == .notHome ? $0.since : now }
                ?? retainedSince(person.id, .notHome, nil, stayBegan: away.map(\.since).max() ?? now)
                ?? min(away.map(\.since).max() ?? now, now)
            let reason = away.max { ($0.since, $1.id.rawValue) < ($1.since, $0.id.rawValue) }?.reason ?? "timeout"
            var p = PersonPresence(id: person.id, name: person.name, state: .notHome, room: nil, roomName: nil, floor: nil,
                                   confidence: 0, beacon: nil, reason: reason, since: since, lastSeen: lastSeen, ts: now)
            // Where they were last: the room they were worked out in before, else (after a
            // restart) the one their presence on the broker says, else (placed by another
            // partition until they left) the last room of the beacon of theirs heard last.
            if let last = previous?.room ?? previous?.lastRoom ?? retained[person.id].flatMap({ $0.room ?? $0.lastRoom })
                ?? decisions.filter({ $0.lastRoom != nil }).max(by: { seen($0) < seen($1) })?.lastRoom {
                p.lastRoom = last
                p.lastRoomName = title(of: last)
            }
            return p
        }
        let recent = placed.filter { seen($0) >= newest - Self.recentWindow }
        // Most confident; then most recently heard; then the smaller id, so the choice is deterministic.
        var best = recent.max { a, b in
            (a.confidence, seen(a), b.id.rawValue) < (b.confidence, seen(b), a.id.rawValue)
        }!
        if let deciding = previous?.beacon, let keep = recent.first(where: { $0.id == deciding }),
           keep.confidence + Self.switchMargin >= best.confidence {
            best = keep
        }
        let room = best.room!
        // Worked out afresh: in the room since its deciding beacon is.
        let since = previous.map { $0.room == room ? $0.since : now } ?? retainedSince(person.id, .home, room, stayBegan: best.since)
            ?? min(best.since, now)
        let roomName = title(of: room)
        var p = PersonPresence(id: person.id, name: person.name, state: .home, room: room, roomName: roomName,
                               floor: best.floor ?? rooms[room]?.floor, confidence: best.confidence, beacon: best.id,
                               reason: best.reason, since: since, lastSeen: lastSeen, ts: now)
        p.lastRoom = room
        p.lastRoomName = roomName
        return p
    }
}
