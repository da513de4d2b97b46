import Shared

/// Retained topics of rooms, people and beacons that the site no longer has (taken out of the
/// config), found among the retained messages the broker delivers at the start, and the empty
/// retained payloads that clear them. Left alone they would stay on the broker for good: a
/// dashboard or an automation reading `rooms/+`, `people/+` or `presence/+` would keep showing a
/// room, a person or a beacon that is gone.
///
/// Only what the config decides is judged: rooms when the site lists its nodes (else rooms are
/// made of the nodes heard, `auto_nodes`), beacons when it lists its beacons, people always. A
/// site that lists no beacons tracks every beacon heard, so only a beacon's presence in a room
/// the site no longer has is left over: the engine does not resume it, and nothing else would
/// ever replace it if the beacon is not heard again. Under `partition:` the whole site counts,
/// so one partition never clears another's rooms.
struct RetainedLeftovers: Sendable {
    private let topics: Topics
    private let roomsPrefix: String
    private let peoplePrefix: String
    /// The rooms any partition of the site publishes; nil when the site makes rooms of its nodes.
    private let rooms: Set<String>?
    private let people: Set<String>
    /// The beacons the site tracks; nil when it tracks every beacon heard.
    private let beacons: Set<BeaconID>?
    /// The nodes' own beacons: never a presence, whatever the site lists.
    private let nodeBeacons: Set<BeaconID>
    /// Topics to clear, as found so far.
    private(set) var found: Set<String> = []

    /// Leftovers remembered at most: retained topics come from the network.
    static var maximumFound: Int { 65_536 }

    init(site: SiteModel, topics: Topics) {
        self.topics = topics
        self.roomsPrefix = topics.roomsPrefix
        self.peoplePrefix = topics.peoplePrefix
        self.rooms = site.nodes.isEmpty ? nil : Set(site.rooms.map(\.name))
        self.people = Set(site.people.map(\.id))
        self.beacons = site.beacons.isEmpty ? nil : Set(site.beacons.map(\.id))
        self.nodeBeacons = Set(site.nodes.compactMap(\.beacon))
    }

    /// The subscriptions that read the retained rooms and people back (presence is read to
    /// resume from it anyway).
    var filters: [String] { [topics.allRooms, topics.allPeople] }

    /// True for a room or person topic: nothing else reads those, and what arrives on them
    /// live is our own output echoed back.
    func isRoomOrPerson(_ topic: String) -> Bool {
        topic.hasPrefix(roomsPrefix) || topic.hasPrefix(peoplePrefix)
    }

    /// Notes one inbound message. `retained`: the broker's retain flag; only a retained
    /// message is what is left on the broker. An empty payload means the topic is clear.
    /// A presence that is no leftover (a beacon placed again in a room the site has) takes its
    /// topics off the list.
    mutating func observe(topic: String, payload: [UInt8], retained: Bool?) {
        guard let stale = leftover(topic, payload: payload) else { return }
        if stale.isLeftover, !payload.isEmpty, retained == true {
            if found.count + stale.topics.count <= Self.maximumFound { found.formUnion(stale.topics) }
        } else if !stale.isLeftover || payload.isEmpty {
            for t in stale.topics { found.remove(t) }
        }
    }

    /// The topics of what `topic` names, and whether the site no longer has it (so they are
    /// to clear); nil for a topic that is never judged.
    private func leftover(_ topic: String, payload: [UInt8]) -> (topics: [String], isLeftover: Bool)? {
        switch topics.parse(topic) {
        case .room(let room):
            // A name no config could hold (over 128 bytes, say) was never published by an
            // aggregator: not a leftover to clear, and not worth its memory.
            guard let rooms, !rooms.contains(room), TopicName.problem(with: room) == nil else { return nil }
            return ([topic], true)
        case .presence(let id):
            let stale = [topic, topics.presenceRoom(id)]
            if nodeBeacons.contains(id) { return (stale, true) }
            if let beacons { return beacons.contains(id) ? nil : (stale, true) }
            guard let rooms else { return nil }
            guard let room = (try? WireFormat.decode(PresenceDecision.self, from: payload))?.room else { return (stale, false) }
            return (stale, !rooms.contains(room))
        case .person(let person):
            guard !people.contains(person), TopicName.problem(with: person) == nil else { return nil }
            return ([topic], true)
        default:
            return nil
        }
    }

    /// Empty retained payloads for every leftover found, which are then forgotten.
    mutating func take() -> [OutboundMessage] {
        defer { found.removeAll() }
        return found.sorted().map { OutboundMessage(topic: $0, payload: [], retain: true, qos: 1) }
    }
}
