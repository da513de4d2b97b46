import Shared

/// Turns room decisions into the aggregator's output messages: retained
/// presence per beacon and per person (`PeopleTracker`), retained occupancy per room
/// (people once each, plus the beacons that are nobody's), enter/leave events, and the
/// other ecosystems' layouts turned on (`DecisionOutput`: mqtt_room). Pure: it remembers what it has
/// published so it publishes on change only, plus a periodic refresh.
public struct PresencePublisher: Sendable {
    public let topics: Topics
    public let site: SiteModel
    /// Other ecosystems' layouts published beside Roomcast's own (`output:`).
    public var outputs: [DecisionOutput]

    /// The room each beacon was last published in (nil = away).
    private var roomOf: [BeaconID: String?] = [:]
    /// The room each beacon was last placed in (`PresenceDecision.lastRoom`), and when it was
    /// last heard by the word that said so: kept while it is away, and for a listed beacon or a
    /// person's, whose away presence is refreshed for good, after it is forgotten too.
    private var lastRoomOf: [BeaconID: (room: String, seen: Double)] = [:]
    /// The listed beacons and the people's: their last room outlives their being forgotten.
    private let listedBeacons: Set<BeaconID>
    /// Members per room, as last published.
    private var members: [String: Set<BeaconID>] = [:]
    /// Moves whenever a beacon's published room changes, or whether it rests there: the state
    /// file's placements (`LearnedRoomsPersistence`) are older than this.
    public private(set) var roomsRevision: UInt64 = 0
    /// The beacons last published resting (`restingReason`): a tag resumed resting after a
    /// restart rests on, one resumed otherwise may have been carried off.
    private var resting: Set<BeaconID> = []
    private let floorOf: [String: Int]
    /// The rooms the site lists, and those fusion made of nodes it does not (`roomMade`).
    public private(set) var listedRooms: Set<String>
    /// Where each person is.
    public private(set) var people: PeopleTracker

    public init(topics: Topics, site: SiteModel, outputs: [DecisionOutput] = []) {
        self.topics = topics
        self.site = site
        self.outputs = outputs
        var floors: [String: Int] = [:]
        for r in site.rooms { floors[r.name] = r.floor }
        self.floorOf = floors
        self.listedRooms = Set(site.rooms.map(\.name))
        self.people = PeopleTracker(site: site)
        self.listedBeacons = Set(site.beacons.map(\.id) + site.people.flatMap(\.beacons))
    }

    /// Seeds the publisher with decisions already on the broker (retained
    /// presence read at start-up), so a restart publishes no spurious events. A beacon it has
    /// published or resumed already is left as it is: the broker resends what it retains at
    /// every reconnect, and a stale copy fed to the people tracker could move a person of two
    /// beacons silently, until the next refresh.
    public mutating func resume(from decisions: [PresenceDecision]) {
        let fresh = decisions.filter { roomOf[$0.id] == nil }
        for d in fresh {
            roomOf[d.id] = .some(d.room)
            if let last = d.room ?? d.lastRoom { lastRoomOf[d.id] = (last, d.lastSeen ?? -.infinity) }
            if let room = d.room { members[room, default: []].insert(d.id) }
            people.observe(d)
        }
        people.rework(owning: fresh.map(\.id))
        // What was published before the restart, worked out again: nothing to publish now.
        _ = people.update(now: decisions.map(\.ts).max() ?? 0)
    }

    /// A person's presence as published before a restart (`PeopleTracker.resumeRetained`).
    public mutating func resumeRetained(_ person: PersonPresence, now: Double) {
        people.resumeRetained(person, now: now)
    }

    /// Another partition has `id` in one of its rooms since `since`, heard at `seen` (`PeopleTracker`).
    public mutating func placedElsewhere(_ id: BeaconID, since: Double, seen: Double) {
        people.placedElsewhere(id, since: since, seen: seen)
    }

    /// A partition said `id` away, last heard at `seen`.
    public mutating func awayElsewhere(_ id: BeaconID, seen: Double) {
        people.awayElsewhere(id, seen: seen)
    }

    /// Forgets what was published of `id` (the engine no longer tracks it); true when it had
    /// been published or resumed. A person keeps the last away of a beacon of theirs: it says
    /// when and why they left, which their other beacons (never heard, say) may not.
    public mutating func forget(_ id: BeaconID) -> Bool {
        if roomOf[id] != .some(nil) { people.forget(id) }
        resting.remove(id)
        if !listedBeacons.contains(id) { lastRoomOf[id] = nil }
        guard let room = roomOf.removeValue(forKey: id) else { return false }
        if let room { members[room]?.remove(id) }
        return true
    }

    /// The presence reason of a listed beacon away because no node has heard it since the
    /// aggregator started (`AggregatorCore.awayForNeverHeard`).
    public static var neverHeardReason: String { "never_heard" }
    /// The reason of a beacon that sleeps when still, silent where it was put down.
    public static var restingReason: String { "resting" }

    /// Messages that clear the retained topics of `id` (presence and plain-text room).
    public func clearRetained(_ id: BeaconID) -> [OutboundMessage] {
        [OutboundMessage(topic: topics.presence(id), payload: [], retain: true, qos: 1),
         OutboundMessage(topic: topics.presenceRoom(id), payload: [], retain: true, qos: 1)]
    }

    /// The room a beacon is published in; `.none` when never published.
    public func publishedRoom(of id: BeaconID) -> String?? { roomOf[id] }

    /// Another partition's word on `id`, the beacon last heard at `seen`: `room` is where it was
    /// last placed (there, or here as that partition heard it). Taken when no older than the
    /// word held, and only for a beacon this publisher follows, or a listed one: the partitions
    /// then say the same `last_room`.
    public mutating func placedLastElsewhere(_ id: BeaconID, room: String, seen: Double) {
        guard roomOf[id] != nil || listedBeacons.contains(id), seen >= lastRoomOf[id]?.seen ?? -.infinity else { return }
        lastRoomOf[id] = (room, seen)
    }

    /// `d` as its presence topic carries it: with the room the beacon was last placed in.
    public func withLastRoom(_ d: PresenceDecision) -> PresenceDecision {
        var d = d
        d.lastRoom = d.room ?? lastRoomOf[d.id]?.room ?? d.lastRoom
        return d
    }

    /// Every beacon published (or resumed) in a room, with that room.
    public var placedBeacons: [(id: BeaconID, room: String)] {
        roomOf.compactMap { id, room in room.map { (id, $0) } }
    }

    /// Messages for decisions that changed at `now`. `handedOver`: beacons another partition has
    /// (`AggregatorCore+Handover`): they leave this partition's rooms and their person's place
    /// here, and their presence and person topics are that partition's to publish.
    public mutating func publish(_ decisions: [PresenceDecision], now: Double,
                                 handedOver: Set<BeaconID> = []) throws -> [OutboundMessage] {
        var out: [OutboundMessage] = []
        var touchedRooms: Set<String> = []
        for d in decisions {
            let handed = handedOver.contains(d.id)
            if !handed, let room = d.room { lastRoomOf[d.id] = (room, d.lastSeen ?? -.infinity) }
            let d = withLastRoom(d)
            if !handed { out.append(OutboundMessage(topic: topics.presence(d.id), payload: try d.wireJSON(), retain: true, qos: 1)) }
            let previous: String? = roomOf[d.id] ?? nil
            let known = roomOf[d.id] != nil
            roomOf[d.id] = .some(d.room)
            let moved = previous != d.room || !known
            if (d.reason == Self.restingReason) != resting.contains(d.id) {
                if d.reason == Self.restingReason { resting.insert(d.id) } else { resting.remove(d.id) }
                roomsRevision &+= 1
            }
            if moved {
                roomsRevision &+= 1
                if !handed { out.append(roomText(d)) }
                if let old = previous {
                    members[old]?.remove(d.id)
                    touchedRooms.insert(old)
                }
                if let new = d.room {
                    members[new, default: []].insert(d.id)
                    touchedRooms.insert(new)
                }
                out += try moveEvents(d.id, name: d.name, from: previous, to: d.room, now: now)
            }
            if handed {
                people.forget(d.id)
                continue
            }
            people.observe(d)
            // Other ecosystems' layouts name an away as Home Assistant does (`not_home`).
            let shown = known ? previous ?? Self.awayText : nil
            let current = d.room ?? Self.awayText
            for output in outputs { out += try output.changed(d, shown, shown != current) }
        }
        return out + (try updatePeople(now: now, touching: touchedRooms))
    }

    /// The events of a beacon's move from `old` to `new`: a leave, an enter, or both (nil: away).
    func moveEvents(_ id: BeaconID, name: String?, from old: String?, to new: String?, now: Double) throws -> [OutboundMessage] {
        var out: [OutboundMessage] = []
        if let old {
            out.append(try OutboundMessage(topic: topics.events, json: RoomEvent(
                ts: now, event: .leave, id: id, name: name, room: old, other: new), qos: 1))
        }
        if let new {
            out.append(try OutboundMessage(topic: topics.events, json: RoomEvent(
                ts: now, event: .enter, id: id, name: name, room: new, other: old), qos: 1))
        }
        return out
    }

    /// A person's beacon's decision in force, fresh (`lastSeen`, confidence) though its room did
    /// not change: who decides a person's room weighs how recently and how surely each of their
    /// beacons was placed, and the engine reports a decision only when its room changes.
    public mutating func observeOwned(_ d: PresenceDecision, handedOver: Bool) {
        if handedOver { people.forget(d.id) } else { people.observe(withLastRoom(d)) }
    }

    /// Works the people out again at `now`: the messages of those whose place changed, and the
    /// occupancy of every room they (or the decisions before, `touching`) left or entered.
    public mutating func updatePeople(now: Double, touching rooms: Set<String> = []) throws -> [OutboundMessage] {
        var out: [OutboundMessage] = []
        var touchedRooms = rooms
        for (old, new) in people.update(now: now) {
            if let new { out.append(try personMessage(new)) }
            if let room = old?.room { touchedRooms.insert(room) }
            if let room = new?.room { touchedRooms.insert(room) }
        }
        for room in touchedRooms.sorted() {
            out.append(try occupancy(room, now: now))
        }
        return out
    }

    /// The retained presence of the person `id` belongs to, as now placed (none for a beacon of
    /// nobody's, or a person not placed).
    func personMessages(owning id: BeaconID) throws -> [OutboundMessage] {
        guard let owner = people.ownerOf[id], let person = people.current[owner] else { return [] }
        return [try personMessage(person)]
    }

    /// A person's retained presence message.
    func personMessage(_ p: PersonPresence) throws -> OutboundMessage {
        try OutboundMessage(topic: topics.person(p.id), json: p, retain: true, qos: 1)
    }

    /// Every retained output again (presence, plain-text room, rooms) and each output's refresh
    /// (mqtt_room: a report for every beacon, in its room or `not_home`, since those reports are
    /// not retained).
    public func refresh(_ decisions: [PresenceDecision], now: Double, handedOver: Set<BeaconID> = []) throws -> [OutboundMessage] {
        let ours = handedOver.isEmpty ? decisions : decisions.filter { !handedOver.contains($0.id) }
        var out: [OutboundMessage] = []
        for d in ours { out += try retained(d) }
        out += try people.everyone(now: now).map(personMessage)
        out += try roomNames().map { try occupancy($0, now: now) }
        for output in outputs { out += try output.refresh(ours) }
        return out
    }

    /// A room fusion made of a node the site does not list (`auto_nodes`): its occupancy is
    /// published with every refresh from now on, as a listed room's is, empty or not.
    mutating func roomMade(_ room: String) {
        listedRooms.insert(room)
    }

    /// The refresh of each output alone (`refresh`'s last part).
    public func outputsRefresh(_ decisions: [PresenceDecision], handedOver: Set<BeaconID> = []) throws -> [OutboundMessage] {
        let ours = handedOver.isEmpty ? decisions : decisions.filter { !handedOver.contains($0.id) }
        return try outputs.flatMap { try $0.refresh(ours) }
    }

    /// Occupancy of every configured room (and rooms seen in decisions).
    public func roomNames() -> [String] {
        listedRooms.union(members.keys).sorted()
    }

    /// A decision's retained messages: its presence and its plain-text room.
    public func retained(_ d: PresenceDecision) throws -> [OutboundMessage] {
        [OutboundMessage(topic: topics.presence(d.id), payload: try withLastRoom(d).wireJSON(), retain: true, qos: 1), roomText(d)]
    }

    /// The plain-text room topic: the room name, or `not_home` (Home Assistant's word) when away.
    func roomText(_ d: PresenceDecision) -> OutboundMessage {
        OutboundMessage(topic: topics.presenceRoom(d.id), text: d.room ?? Self.awayText, retain: true, qos: 1)
    }

    /// What the plain-text room topic, and the mqtt_room output, say while a beacon is away
    /// (Home Assistant's word; a site's room may not be named so).
    public static let awayText = "not_home"

    func occupancy(_ room: String, now: Double) throws -> OutboundMessage {
        let beacons = Array(members[room] ?? [])
        // A room fusion made of a node the site does not list is on floor 0, as its beacons' presence says.
        let o = RoomOccupancy(room: room, floor: floorOf[room] ?? 0, beacons: beacons, people: people.people(in: room),
                              unassigned: beacons.filter { people.ownerOf[$0] == nil }, ts: now)
        return OutboundMessage(topic: topics.room(room), payload: try o.payload(), retain: true, qos: 1)
    }
}
