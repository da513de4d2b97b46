/// Where beacons leave the site from, learned as the site runs: per room, how many silences
/// there ended in the beacon leaving (away) and how many in its being heard again in time.
///
/// Why: people leave through an entrance, and a beacon that falls silent there has most
/// likely gone; one that falls silent in a bedroom has most likely been missed for a moment
/// (a body in the way, a phone's radio asleep: the Kolakowski robot went unheard for 20 s in
/// the middle of the flat). A room that has seen more departures than returns after a silence
/// lets a beacon go after a few of its advertising intervals, not the whole away timeout; a
/// room that has seen no long silence yet goes by the site's count, and every other room keeps
/// the timeout. It needs no setting, and a room mistaken for an entrance corrects itself: each
/// beacon that comes back in time counts a return there. The counts are kept in the learned
/// rooms' state file (`LearnedRooms.departures`), so a restart does not start them over.
///
/// A room remembers its recent silences only (`memory`): a household's habits change (a door
/// used no more, a node moved to another room under the same name), and a year of departures
/// must not outweigh a month of returns.
struct RoomDepartures {
    /// How many silences a room remembers: past this, both counts are halved, so the newest
    /// weigh as much as all before them. At two silences a day that is about two weeks to follow
    /// a change; few enough that a room's new habit shows within a month, many enough that a
    /// day's odd silences do not turn an entrance around.
    static let memory = 32

    private var departures: [Int] = []
    private var returns: [Int] = []
    /// Counts read back for rooms the engine does not have yet: on a site that lists no nodes a
    /// room is made when its node is first heard, after the state file was read. They are
    /// taken up then (`roomAdded`) and written back meanwhile, never dropped.
    private var waiting: [String: LearnedRooms.Departures] = [:]
    /// Moves whenever a count changes: the state file needs writing.
    private(set) var revision: UInt64 = 0

    /// A silence in `room` is taken as leaving once it is longer than a few advertising
    /// intervals: more silences there have ended in leaving than in coming back, by at least one.
    /// A room that has seen no such silence yet goes by the whole site's: once beacons have
    /// left from one room, a beacon that falls silent in a room nobody has been silent in has
    /// most likely left too (a tag carried out while shown in the room next to the door).
    func favoursLeaving(_ room: Int) -> Bool {
        guard room >= 0 else { return false }
        if room < departures.count && departures[room] + returns[room] > 0 {
            return departures[room] >= returns[room] + 1
        }
        // Read only while a beacon's silence outlasts a few intervals, so summing is cheap.
        return departures.reduce(0, +) >= returns.reduce(0, +) + 1
    }

    /// A beacon last shown in `room` went away.
    mutating func left(_ room: Int) {
        guard room >= 0 else { return }
        grow(to: room + 1)
        departures[room] += 1
        forgetOldest(room)
        revision &+= 1
    }

    /// A beacon silent in `room` for longer than a few advertising intervals was heard again;
    /// `undoingDeparture` when it had been let go already (it came back within the timeout).
    mutating func returned(_ room: Int, undoingDeparture: Bool) {
        guard room >= 0 else { return }
        grow(to: room + 1)
        if undoingDeparture { departures[room] = max(0, departures[room] - 1) }
        returns[room] += 1
        forgetOldest(room)
        revision &+= 1
    }

    /// Halves `room`'s counts until they are within `memory`: what it has seen lately keeps its
    /// share, and what came before weighs less with each halving. Counts read back (from a
    /// state file written before) are halved at the room's next silence, so a file reads back as
    /// it was written.
    private mutating func forgetOldest(_ room: Int) {
        // Each rounds half up, and the one behind stays behind: which of the two is ahead, and a
        // lone return, survive the halving.
        while departures[room] + returns[room] > Self.memory {
            let (d, r) = (departures[room], returns[room])
            departures[room] = (d + 1) / 2
            returns[room] = (r + 1) / 2
            if d > r { returns[room] = min(returns[room], departures[room] - 1) }
            if r > d { departures[room] = min(departures[room], returns[room] - 1) }
        }
    }

    /// The counts, by room name (`names[i]` is room `i`), sorted by name as the state file keeps
    /// them: at most `LearnedRooms.maximumDepartureRooms`, the most counted, so the file reads back.
    func record(names: [String]) -> [LearnedRooms.Departures] {
        var all = departures.indices.compactMap { r -> LearnedRooms.Departures? in
            guard r < names.count, departures[r] + returns[r] > 0 else { return nil }
            return .init(room: names[r], left: departures[r], returned: returns[r])
        }
        all += waiting.values
        if all.count > LearnedRooms.maximumDepartureRooms {
            all.sort { $0.left + $0.returned != $1.left + $1.returned ? $0.left + $0.returned > $1.left + $1.returned : $0.room < $1.room }
            all.removeLast(all.count - LearnedRooms.maximumDepartureRooms)
        }
        return all.sorted { $0.room < $1.room }
    }

    /// Replaces the counts with `record`'s (read back from the state file). Those of rooms the
    /// engine does not have wait for them (`roomAdded`) where `roomsComeLater` (a site that lists
    /// no nodes); elsewhere such a room is no longer the site's, and its counts are dropped.
    mutating func restore(_ record: [LearnedRooms.Departures], roomIndex: [String: Int], roomsComeLater: Bool) {
        departures = []
        returns = []
        waiting = [:]
        for entry in record {
            guard let r = roomIndex[entry.room] else {
                if roomsComeLater { waiting[entry.room] = entry }
                continue
            }
            set(entry, at: r)
        }
        revision &+= 1
    }

    /// The engine made room `index` named `name` (its node was first heard): the counts read
    /// back for it apply from now.
    mutating func roomAdded(_ name: String, at index: Int) {
        guard let entry = waiting.removeValue(forKey: name) else { return }
        set(entry, at: index)
    }

    private mutating func set(_ entry: LearnedRooms.Departures, at r: Int) {
        grow(to: r + 1)
        departures[r] = entry.left
        returns[r] = entry.returned
    }

    private mutating func grow(to count: Int) {
        guard departures.count < count else { return }
        departures += [Int](repeating: 0, count: count - departures.count)
        returns += [Int](repeating: 0, count: count - returns.count)
    }
}
