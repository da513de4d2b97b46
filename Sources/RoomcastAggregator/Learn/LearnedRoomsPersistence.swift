import RoomcastFusion
import Shared
import RoomcastLogging

/// Keeps what was taught, the rooms beacons leave the site from, and the room each beacon was
/// last published in, in the state file (`learn.state_file`, `LearnedRoomsStore`) while the
/// aggregator runs: read once at the start, written after every room taught or forgotten, the
/// published rooms at most every `placementsSaveInterval` (a big file less often, within
/// `placementsWriteBudget`), the departure counts at most every `departuresSaveInterval` or as
/// seldom as the published rooms, and at a graceful stop. A file that cannot be read at the start is
/// left as it is and never overwritten; one that cannot be written is tried again every
/// `retryInterval`, said at most once a minute.
struct LearnedRoomsPersistence {
    /// Where the learned rooms are kept (nil: nowhere; they last until the process stops).
    let store: LearnedRoomsStore?
    /// False when the state file could not be read at start.
    private var writable = true
    /// The core's revisions of the taught rooms and of the departure counts as last written, and when.
    private var savedRevision: UInt64 = 0
    private var savedDepartures: UInt64 = 0
    private var savedPlacements: UInt64 = 0
    private var savedAt = -Double.infinity
    /// A change of the published rooms is written no sooner than this after the last write: one
    /// `placementsSaveInterval`, longer for a file bigger than `placementsWriteBudget`.
    private var placementsWait = LearnedRoomsPersistence.placementsSaveInterval
    /// After a failed write, the next is tried no sooner than this: `persist` runs at every
    /// inbound message, and a full or read-only disk must not turn each reading into a file
    /// created and removed.
    private var retryAt = -Double.infinity
    /// Writes of the state file that failed (`/metrics`).
    private(set) var saveFailures: UInt64 = 0
    private let logger: Logger
    /// Shared with the runtime's other learn lines (`RateLimitedLog` is a reference).
    private let log: RateLimitedLog

    /// The departure counts change each time a beacon leaves or comes back: they are written
    /// at most this often (seconds) and when the aggregator stops, not a disk write per
    /// person through the door. A crash loses at most this much of them.
    static var departuresSaveInterval: Double { 300 }

    /// The published rooms change as people walk about: written at most this often (seconds)
    /// and when the aggregator stops. A power cut loses at most this much of them: a beacon that
    /// moved in that time resumes in the room it left, and moves again when heard.
    static var placementsSaveInterval: Double { 60 }

    /// Bytes a `placementsSaveInterval` the published rooms may cost the disk, on average: a home's
    /// file of a few kB is written a minute after a change, a site of thousands of beacons less
    /// often (every file write wears an SD card, and is synced while the aggregator waits).
    static var placementsWriteBudget: Int { 64 * 1024 }

    /// Seconds between attempts to write a state file that could not be written.
    static var retryInterval: Double { 10 }

    /// Reads the state file into `core` (a file that cannot be read is logged and left alone:
    /// this run learns without it and does not overwrite it).
    init<Engine>(store: LearnedRoomsStore?, core: inout AggregatorCore<Engine>, log: RateLimitedLog, logger: Logger) {
        self.store = store
        self.log = log
        self.logger = logger
        if let store {
            do {
                if let learned = try store.load() {
                    core.restoreLearned(learned)
                    core.holdPlacements(learned.placed)
                    logger.info("learned rooms loaded", metadata: [
                        "learn.state_file": store.path, "rooms": "\(learned.rooms.map(\.name).joined(separator: ", "))"])
                    Self.warnOfRenames(learned, site: core.wholeSite, logger: logger)
                } else {
                    logger.info("no learned rooms yet", metadata: ["learn.state_file": store.path])
                }
            } catch {
                writable = false
                core.learningUnavailable("the state file \(store.path) could not be read at start: "
                                         + "fix or move it away, then restart the aggregator")
                logger.error("cannot read the learned rooms: running without them; the file is left as it is and not overwritten", metadata: [
                    "learn.state_file": store.path, "error": "\(error.message)",
                    "hint": "fix or move the file away, then restart the aggregator"])
            }
        }
        savedRevision = core.learnedRevision
        savedDepartures = core.departuresRevision
        savedPlacements = core.placementsRevision
    }

    /// Rooms and nodes that were taught and that the config no longer has (renamed, replaced,
    /// taken away): what was taught of them is not used, and a node taught under another name
    /// hears the beacon in no taught room, which counts against each. Said once, at the start.
    static func warnOfRenames(_ learned: LearnedRooms, site: SiteModel, logger: Logger) {
        let rooms = Set(site.rooms.map(\.name)), nodes = Set(site.nodes.map(\.name))
        // A site that lists no rooms or no nodes makes them as it hears them: nothing to compare.
        let goneRooms = rooms.isEmpty ? [] : learned.rooms.map(\.name).filter { !rooms.contains($0) }
        let goneNodes = nodes.isEmpty ? [] : Set(learned.rooms.flatMap { $0.nodes.map(\.node) }).subtracting(nodes).sorted()
        if !goneRooms.isEmpty {
            logger.warning("rooms taught that the config no longer has: what was taught of them is not used", metadata: [
                "rooms": "\(goneRooms.joined(separator: ", "))",
                "hint": "teach a renamed room again (aggregator learn --room NEW), and forget the old name (aggregator learn --forget OLD)"])
        }
        if !goneNodes.isEmpty {
            logger.warning("nodes heard while teaching that the config no longer has: the rooms taught with them match less well", metadata: [
                "nodes": "\(goneNodes.joined(separator: ", "))",
                "hint": "after renaming or replacing a node, teach the rooms around it again"])
        }
        // As fusion judges it (`FusionEngine.moved`): taught in a room the site still has, and
        // standing in another now, or in none. A room renamed is said above.
        let roomOf = Dictionary(site.nodes.map { ($0.name, $0.room) }, uniquingKeysWith: { a, _ in a })
        let moved = Set(learned.rooms.flatMap { $0.nodes.compactMap { l -> String? in
            guard let was = l.room, rooms.contains(was), let now = roomOf[l.node], now != was else { return nil }
            return "\(l.node) (\(was) → \(now ?? "no room"))"
        } }).sorted()
        if !moved.isEmpty {
            logger.warning("nodes taught in another room than the config puts them in now: their taught levels are not used", metadata: [
                "nodes": "\(moved.joined(separator: ", "))",
                "hint": "after moving a node, teach the rooms around it again (aggregator learn --room ROOM)"])
        }
    }

    /// Whether `persist` has anything to write for these revisions: asked at every inbound
    /// message, so the core is handed over only when it does.
    func isDue(learnedRevision: UInt64, departuresRevision: UInt64, placementsRevision: UInt64, now: Double, stopping: Bool) -> Bool {
        learnedRevision != savedRevision
            || (departuresRevision != savedDepartures && (stopping || now - savedAt >= max(Self.departuresSaveInterval, placementsWait)))
            || (placementsRevision != savedPlacements && (stopping || now - savedAt >= placementsWait))
    }

    /// Writes the learned rooms when a room was taught or forgotten since the last write, the
    /// departure counts and the published rooms when they changed and their wait has passed
    /// (`isDue`), or when `stopping`.
    mutating func persist<Engine>(_ core: AggregatorCore<Engine>, now: Double, stopping: Bool = false) {
        guard isDue(learnedRevision: core.learnedRevision, departuresRevision: core.departuresRevision,
                    placementsRevision: core.placementsRevision, now: now, stopping: stopping)
        else { return }
        let taught = core.learnedRevision != savedRevision
        let marked = (core.learnedRevision, core.departuresRevision, core.placementsRevision)
        guard let store else {
            (savedRevision, savedDepartures, savedPlacements) = marked
            if taught, log.admit("nowhere", now: now).admit {
                logger.notice("learned rooms are kept in memory only: set learn.state_file to keep them across restarts")
            }
            return
        }
        guard writable else {
            (savedRevision, savedDepartures, savedPlacements) = marked
            if taught {
                logger.error("learned rooms not saved: the state file could not be read at start and is left as it is", metadata: [
                    "learn.state_file": store.path, "hint": "fix or move the file away, then restart the aggregator"])
            }
            return
        }
        guard stopping || now >= retryAt else { return }
        do {
            var learned = core.learnedRooms
            learned.placed = core.placementsToKeep()
            let bytes = try store.save(learned)
            (savedRevision, savedDepartures, savedPlacements) = marked
            savedAt = now
            placementsWait = Self.placementsSaveInterval * max(1, Double(bytes) / Double(Self.placementsWriteBudget))
            retryAt = -.infinity
            logger.log(level: taught ? .info : .debug, "learned rooms saved", metadata: [
                "learn.state_file": store.path, "rooms": "\(learned.rooms.count)",
                "departure_rooms": "\(learned.departures.count)", "placed": "\(learned.placed.count)"])
        } catch {
            // Tried again `retryInterval` later; said at most once a minute.
            savedAt = now
            retryAt = now + Self.retryInterval
            saveFailures &+= 1
            let (admit, suppressed) = log.admit("save", now: now)
            if admit {
                logger.error("cannot save the learned rooms", metadata: ["learn.state_file": store.path,
                                                                         "error": "\(error.message)", "suppressed": "\(suppressed)"])
            }
        }
    }

    /// The wall clock stepped back by `step`: the times kept move back by as much.
    mutating func clockSteppedBack(by step: Double) {
        savedAt -= step
        retryAt -= step
    }
}
