import Shared

/// Everything the agent keeps per tracked beacon (ranging filter, publishing state, what
/// the scan view shows), in one table with a fixed capacity: a radio input a stranger
/// controls must not be able to grow the agent's memory.
///
/// Storage is an array of slots, reused, and a dictionary from id to slot reserved to the
/// capacity: the count never passes the capacity, so neither grows once full (a Swift
/// dictionary never shrinks, so one that grew in a flood would keep the flood's size).
/// Each retention class has an intrusive doubly linked list through the slots, most
/// recently heard first; a new beacon in a full table takes the slot of the least recently
/// heard beacon of the lowest class that has any. Lookup, insert, touch and eviction are
/// O(1); expiry walks from the least recently heard end and stops at the first beacon still
/// in view, so a tick costs what it forgets.
public struct BeaconTable: Sendable {
    /// How strongly a beacon holds its place when the table is full; lower classes go first.
    public enum Retention: Int, Sendable, Comparable, CaseIterable {
        /// Heard once so far (and not known): a flood of one-off advertisers churns only these,
        /// so beacons heard again keep their place however fast the flood is.
        case heardOnce = 0
        /// Heard again, tracked because every beacon is (no regions or known beacons
        /// configured) or a fingerprint matched: anyone can advertise any number of these.
        case ordinary = 1
        /// Heard again, inside a configured region but not listed: the region is configured,
        /// its members are not (a spoofer can still make many).
        case region = 2
        /// Listed under `beacons:` or resolved with a configured IRK: the config names each
        /// one, so strangers cannot make more of them.
        case known = 3

        public static func < (a: Retention, b: Retention) -> Bool { a.rawValue < b.rawValue }
    }

    /// One tracked beacon.
    public struct Entry: Sendable {
        public let id: BeaconID
        public var retention: Retention
        /// Display name and kind of its latest identity (for the scan view).
        public var name: String?
        public var kind: BeaconKind
        /// Latest advertisement heard, with or without a usable RSSI.
        public var lastHeard: Double
        public var ranger: BeaconRanger
        public var published: PublishPolicy.State?
        /// The topic of its readings, built at its first reading (the id and node do not change).
        public var readingTopic: String? = nil
        /// The newest telemetry its address sent in advertisements of their own (an Eddystone
        /// beacon's TLM frames, which carry no id), for its readings (`AgentCore`).
        public var separateTelemetry: BeaconTelemetry? = nil
        /// When that telemetry was heard: readings carry it only while it is current.
        public var separateTelemetryHeard: Double = 0
    }

    private struct Slot: Sendable {
        var entry: Entry?
        /// Where the bytes of the entry's id string are (`storageAddress`), 0 when empty.
        var idAddress: UInt = 0
        /// Neighbours in the slot's list: `newer` towards the most recently heard end.
        var newer: Int32 = -1
        var older: Int32 = -1
    }

    /// Ends of one retention class's list (-1: empty).
    private struct Ends: Sendable {
        var newest: Int32 = -1
        var oldest: Int32 = -1
    }

    /// Most beacons held at once.
    public let capacity: Int
    private var slots: [Slot] = []
    private var index: [BeaconID: Int32] = [:]
    private var lists = [Ends](repeating: Ends(), count: Retention.allCases.count)
    /// Slots emptied by expiry, reused before the array grows.
    private var vacant: [Int32] = []
    /// Slots found lately, by where their id's bytes are (`recentIndex`); see `lookUp`.
    private var recent: [Int32]
    /// Beacons dropped to make room for a new one, by the retention class they had.
    public private(set) var evicted = [UInt64](repeating: 0, count: Retention.allCases.count)

    public init(capacity: Int) {
        self.capacity = max(1, min(capacity, Int(Int32.max)))
        index.reserveCapacity(self.capacity)
        slots.reserveCapacity(self.capacity)
        var n = 64
        while n < 2 * self.capacity && n < 8192 { n *= 2 }
        recent = [Int32](repeating: -1, count: n)
    }

    /// Beacons held.
    public var count: Int { index.count }
    /// Evictions of every class.
    public var evictedTotal: UInt64 { evicted.reduce(0, +) }

    /// The slot of `id`, or nil when it is not tracked.
    public func slot(of id: BeaconID) -> Int? { index[id].map(Int.init) }

    /// The slot of `id`, as `slot(of:)`, for the per-advertisement path: hashing the id string for
    /// every advertisement was a twentieth of the agent's instructions. The identifier hands out the
    /// same string (the same storage) for a beacon each time it is heard, so the slot is first looked
    /// for by where the string's bytes are: a slot whose entry's id has its bytes there holds that
    /// very string, as long as the entry holds it (a storage address is reused only once freed).
    /// Anything else (a small string, another copy of the same text) goes to the dictionary.
    public mutating func lookUp(_ id: BeaconID) -> Int? {
        let address = Self.storageAddress(id)
        let r = address == 0 ? -1 : recentIndex(address)
        if r >= 0 {
            let s = recent[r]
            if s >= 0, slots[Int(s)].idAddress == address { return Int(s) }
        }
        guard let s = index[id] else { return nil }
        if r >= 0, slots[Int(s)].idAddress == address { recent[r] = s }
        return Int(s)
    }

    /// Where the bytes of `id`'s string are, 0 when they have no place of their own: a small string
    /// (up to 15 bytes) is held inline, and reading its bytes copies them to the stack.
    private static func storageAddress(_ id: BeaconID) -> UInt {
        let text = id.rawValue
        guard text.utf8.count > 15 else { return 0 }
        return text.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) } ?? 0
    }

    private func recentIndex(_ address: UInt) -> Int {
        Int(truncatingIfNeeded: (address >> 4) ^ (address >> 13)) & (recent.count - 1)
    }

    /// The entry in `slot` (from `slot(of:)` or `insert`, before any later insert or expiry).
    public subscript(slot: Int) -> Entry {
        get { slots[slot].entry! }
        _modify { yield &slots[slot].entry! }
    }

    /// Runs `body` on the entry in `slot`, in place. Reading an entry through the subscript copies
    /// it whole out of its optional (its filter's arrays retained and released); the per-advertisement
    /// path reads and updates through this instead.
    @inline(__always)
    public mutating func withEntry<R>(_ slot: Int, _ body: (inout Entry) -> R) -> R {
        body(&slots[slot].entry!)
    }

    /// The entry of `id`, if tracked.
    public func entry(_ id: BeaconID) -> Entry? { index[id].flatMap { slots[Int($0)].entry } }

    /// Marks the beacon in `slot` as heard now: it moves to the most recently heard end of
    /// the list of `retention` (which may differ from the class it had).
    public mutating func touch(_ slot: Int, retention: Retention) {
        let s = Int32(slot)
        let old = withEntry(slot) { $0.retention }
        if old == retention && lists[retention.rawValue].newest == s { return }
        unlink(s, from: old)
        withEntry(slot) { $0.retention = retention }
        pushNewest(s, in: retention)
    }

    /// Adds `entry` as the most recently heard of its class; when the table is full, first
    /// drops the least recently heard beacon of the lowest class holding any and returns
    /// it. A beacon that is not known never takes a known one's place: with only known
    /// beacons tracked, it is not added (nil). `entry.id` must not be tracked already.
    public mutating func insert(_ entry: Entry) -> (slot: Int, evicted: Entry?)? {
        var dropped: Entry?
        let s: Int32
        if index.count >= capacity, let victim = victim() {
            let v = slots[Int(victim)].entry!
            if v.retention == .known && entry.retention != .known { return nil }
            unlink(victim, from: v.retention)
            index.removeValue(forKey: v.id)
            evicted[v.retention.rawValue] += 1
            dropped = v
            s = victim
        } else if let free = vacant.popLast() {
            s = free
        } else {
            slots.append(Slot())
            s = Int32(slots.count - 1)
        }
        slots[Int(s)].entry = entry
        let address = Self.storageAddress(entry.id)
        slots[Int(s)].idAddress = address
        if address != 0 { recent[recentIndex(address)] = s }
        index[entry.id] = s
        pushNewest(s, in: entry.retention)
        return (Int(s), dropped)
    }

    /// Forgets beacons not heard for more than `forgetAfter` seconds at `now`; returns how
    /// many. Each list is in the order heard, which is last-heard order on a clock that does
    /// not step back, so the walk stops at the first beacon still in view.
    @discardableResult
    public mutating func expire(now: Double, forgetAfter: Double) -> Int {
        guard now.isFinite else { return 0 }
        var forgotten = 0
        for r in Retention.allCases {
            while true {
                let s = lists[r.rawValue].oldest
                // Negated, so a beacon whose time is not a number goes rather than blocks the walk.
                guard s >= 0, !(now - slots[Int(s)].entry!.lastHeard <= forgetAfter) else { break }
                remove(s)
                forgotten += 1
            }
        }
        return forgotten
    }

    /// The clock stepped back by `seconds`: every beacon's times move back with it (the lists
    /// keep their order, so expiry still walks from the least recently heard).
    mutating func clockSteppedBack(by seconds: Double) {
        for i in slots.indices where slots[i].entry != nil {
            slots[i].entry!.lastHeard -= seconds
            slots[i].entry!.ranger.clockSteppedBack(by: seconds)
            slots[i].entry!.published?.at -= seconds
            slots[i].entry!.separateTelemetryHeard -= seconds
        }
    }

    /// Clears every beacon's publishing state, so each one's next advertisement goes out
    /// as a first reading (after a broker outage).
    public mutating func resetPublished() {
        for i in slots.indices where slots[i].entry != nil { slots[i].entry!.published = nil }
    }

    /// Every tracked beacon, least recently heard first within each class (lowest class first).
    public var entries: [Entry] {
        var out: [Entry] = []
        out.reserveCapacity(count)
        for r in Retention.allCases {
            var s = lists[r.rawValue].oldest
            while s >= 0 {
                out.append(slots[Int(s)].entry!)
                s = slots[Int(s)].newer
            }
        }
        return out
    }

    /// The least recently heard beacon of the lowest class that has any.
    private func victim() -> Int32? {
        for ends in lists where ends.oldest >= 0 { return ends.oldest }
        return nil
    }

    private mutating func remove(_ s: Int32) {
        let e = slots[Int(s)].entry!
        unlink(s, from: e.retention)
        index.removeValue(forKey: e.id)
        slots[Int(s)].entry = nil
        slots[Int(s)].idAddress = 0
        vacant.append(s)
    }

    private mutating func unlink(_ s: Int32, from r: Retention) {
        let newer = slots[Int(s)].newer, older = slots[Int(s)].older
        if newer >= 0 { slots[Int(newer)].older = older } else { lists[r.rawValue].newest = older }
        if older >= 0 { slots[Int(older)].newer = newer } else { lists[r.rawValue].oldest = newer }
        slots[Int(s)].newer = -1
        slots[Int(s)].older = -1
    }

    private mutating func pushNewest(_ s: Int32, in r: Retention) {
        let head = lists[r.rawValue].newest
        slots[Int(s)].older = head
        slots[Int(s)].newer = -1
        if head >= 0 { slots[Int(head)].newer = s } else { lists[r.rawValue].oldest = s }
        lists[r.rawValue].newest = s
    }
}
