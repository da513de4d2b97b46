import Shared

/// The room the active instance last published for each beacon, as a standby reads it on the
/// presence topics. A standby decides all along but publishes nothing; a beacon that moves
/// between the active instance's death and the take-over has its new room republished at the
/// take-over, and what the active instance published says which leave and enter events nobody
/// has sent (`AggregatorCore.takeOverMessages`).
struct PeerPresence: Sendable {
    /// Each beacon's room as last published (nil: away).
    private(set) var rooms: [BeaconID: String?] = [:]
    /// At most this many beacons (the engine's own limit): the topics come from the network.
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// A message on `id`'s presence topic, retained or live. An empty one clears what was read.
    /// Under `partition:` the topics carry every partition's decisions: a room of another
    /// partition's supersedes what this one's active instance said, and an away cannot be told
    /// from another partition's, so it leaves nothing known (no event at the take-over).
    /// A room not among `rooms` leaves nothing known either: the topics are open to any client
    /// the broker lets write them, and a room name is kept, and named in the take-over's events,
    /// only if it can be this instance's. `rooms` nil: they are made of the nodes heard (a site
    /// that lists no nodes), and any name a room can have is kept.
    mutating func observe(_ id: BeaconID, payload: [UInt8], otherPartitionsRooms: Set<String>, rooms known: Set<String>?) {
        if payload.isEmpty {
            rooms[id] = nil
            return
        }
        guard let d = try? WireFormat.decode(PresenceDecision.self, from: payload), d.id == id else { return }
        if let room = d.room, !(known?.contains(room) ?? (TopicName.problem(with: room) == nil)) {
            rooms[id] = nil
            return
        }
        if !otherPartitionsRooms.isEmpty, d.room.map(otherPartitionsRooms.contains) ?? true {
            rooms[id] = nil
            return
        }
        guard rooms[id] != nil || rooms.count < limit else { return }
        rooms[id] = .some(d.room)
    }

    mutating func removeAll() { rooms = [:] }
}
