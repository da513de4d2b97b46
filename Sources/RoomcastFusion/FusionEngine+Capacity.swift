import Shared

/// A beacon the engine no longer tracks, for the aggregator to tidy up after it.
public struct DroppedBeacon: Sendable, Equatable {
    public enum Reason: Sendable, Equatable {
        /// Away for `forget_after`.
        case forgotten
        /// Evicted at `max_beacons` before it was ever placed in a room: a stranger (one of a
        /// flood of random ids, most likely), so nothing it left on the broker is worth keeping.
        case evictedStranger
        /// Evicted at `max_beacons` when no stranger was left: a beacon the site does not list,
        /// placed before but silent now. What it left on the broker stays, as for a forgotten one.
        case evictedSilent
    }
    public var id: BeaconID
    public var reason: Reason
    /// Its name and newest capture time when dropped: the away it is published with keeps them.
    public var name: String?
    public var lastSeen: Double?
    /// The decision in force when it was dropped (nil: never decided): what its retained
    /// presence says, which the aggregator goes on refreshing for a beacon the site awaits.
    public var decision: PresenceDecision?

    public init(id: BeaconID, reason: Reason, name: String? = nil, lastSeen: Double? = nil, decision: PresenceDecision? = nil) {
        self.id = id
        self.reason = reason
        self.name = name
        self.lastSeen = lastSeen
        self.decision = decision
    }
}

/// Beacons of one eviction pool in the order they joined it. Entries are checked when popped
/// (a beacon may since have been placed, dropped or its slot reused) and the queue is
/// compacted when stale entries outnumber live ones, so it stays within a small multiple of
/// the live count.
struct EvictionQueue {
    private var items: [(beacon: Int, generation: UInt32)] = []
    private var head = 0

    var count: Int { items.count - head }

    mutating func push(_ beacon: Int, generation: UInt32) { items.append((beacon, generation)) }

    mutating func popFront() -> (beacon: Int, generation: UInt32)? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }

    /// Keeps only the entries `isLive` accepts, in order.
    mutating func compact(_ isLive: (Int, UInt32) -> Bool) {
        items = items[head...].filter { isLive($0.beacon, $0.generation) }
        head = 0
    }
}

/// The beacons one node brought in (the first to hear them) that the site does not list:
/// strangers, never placed in a room, and the placed ones. Capacity is shared out by pool,
/// so a flood through one node churns that node's own newcomers.
struct EvictionPool {
    var strangers = EvictionQueue()
    var strangerCount = 0
    var placed = EvictionQueue()
    var placedCount = 0
    var evictions: UInt64 = 0
}

extension FusionEngine {
    /// Entries spared per eviction (strangers heard again, placed beacons still heard): a
    /// bound on the cost of one newcomer.
    static var placedScanLimit: Int { 64 }

    /// Makes room for a new beacon when `max_beacons` are tracked. First a stranger: the oldest
    /// beacon never placed in a room (sparing those heard more than once), from the pool
    /// (first-hearing node) that holds the most of them, so a flood of new ids through one node
    /// only churns that node's own newcomers and a beacon new to another node still gets in. Failing that, an unlisted beacon no node has
    /// heard for `freshness`, again from the pool with the most. False when every tracked beacon
    /// is listed or being heard: those are never evicted for a newcomer.
    mutating func evictForNewcomer(now: Double) -> Bool {
        while let p = busiestPool(\.strangerCount) {
            var spared = 0
            while let (b, generation) = pools[p].strangers.popFront() {
                guard generation == beaconGenerations[b], beacons[b].active, beacons[b].stranger else { continue }
                // A stranger heard more than once may be a beacon on its way to a room (one
                // advertisement of a random id is the flood's): it gets a second chance, as far
                // as the scan limit allows.
                if beacons[b].lastSeen > beacons[b].firstHeard && spared < Self.placedScanLimit {
                    spared += 1
                    pools[p].strangers.push(b, generation: generation)
                    continue
                }
                evict(b, pool: p, reason: .evictedStranger)
                return true
            }
            // The count and the queue disagree only if an entry was lost; trust the queue.
            pools[p].strangerCount = 0
        }
        guard let p = busiestPool(\.placedCount) else { return false }
        for _ in 0..<Self.placedScanLimit {
            guard let (b, generation) = pools[p].placed.popFront() else { break }
            guard generation == beaconGenerations[b], beacons[b].active, beacons[b].pool == p, !beacons[b].stranger else { continue }
            if now - beacons[b].lastSeen >= model.freshness {
                evict(b, pool: p, reason: .evictedSilent)
                return true
            }
            pools[p].placed.push(b, generation: generation)  // heard: a second chance
        }
        return false
    }

    private func busiestPool(_ count: KeyPath<EvictionPool, Int>) -> Int? {
        var best: Int?
        for p in pools.indices where pools[p][keyPath: count] > 0 {
            if best == nil || pools[p][keyPath: count] > pools[best!][keyPath: count] { best = p }
        }
        return best
    }

    private mutating func evict(_ b: Int, pool p: Int, reason: DroppedBeacon.Reason) {
        drop(b, reason: reason)
        counters.evicted &+= 1
        pools[p].evictions &+= 1
    }

    /// Enrols a newly tracked unlisted beacon `b`, first heard by node `n` (-1: resumed, heard
    /// by none), as a stranger until it is placed in a room.
    mutating func enrolStranger(_ b: Int, node n: Int) {
        let p = n + 1
        while pools.count <= p { pools.append(EvictionPool()) }
        beacons[b].stranger = true
        beacons[b].pool = p
        pools[p].strangerCount += 1
        pools[p].strangers.push(b, generation: beaconGenerations[b])
        if pools[p].strangers.count > 2 * pools[p].strangerCount + 64 {
            let generations = beaconGenerations, states = beacons
            pools[p].strangers.compact { b, g in g == generations[b] && states[b].active && states[b].stranger }
        }
    }

    /// Beacon `b` was placed in a room (or resumed into one): no stranger any more.
    mutating func settle(_ b: Int) {
        guard beacons[b].stranger else { return }
        let p = beacons[b].pool
        beacons[b].stranger = false
        pools[p].strangerCount -= 1
        pools[p].placedCount += 1
        pools[p].placed.push(b, generation: beaconGenerations[b])
        if pools[p].placed.count > 2 * pools[p].placedCount + 64 {
            let generations = beaconGenerations, states = beacons
            pools[p].placed.compact { b, g in g == generations[b] && states[b].active && states[b].pool == p && !states[b].stranger }
        }
    }

    /// Stops tracking beacon `b` and reports it (`takeDropped`).
    mutating func drop(_ b: Int, reason: DroppedBeacon.Reason) {
        let last = beacons[b].decided ? makeDecision(b, at: beacons[b].lastEvaluation) : nil
        let p = beacons[b].pool
        if p >= 0 {
            if beacons[b].stranger { pools[p].strangerCount -= 1 } else { pools[p].placedCount -= 1 }
        }
        beacons[b].pool = -1
        beacons[b].stranger = false
        beaconIndex[beacons[b].id] = nil
        if !heldAcrossRestart.isEmpty { heldAcrossRestart[beacons[b].id] = nil }
        beacons[b].active = false
        beacons[b].logPosterior = []
        freeBeacons.append(b)
        if dropped.count < Self.maximumDroppedReports {
            let seen = beacons[b].lastSeen
            dropped.append(DroppedBeacon(id: beacons[b].id, reason: reason, name: beacons[b].name, lastSeen: seen.isFinite ? seen : nil,
                                         decision: last))
        } else {
            counters.droppedUnreported &+= 1
        }
    }

    /// Reports kept for a caller that does not collect them (`takeDropped`).
    static var maximumDroppedReports: Int { 65_536 }

    /// The beacons dropped since the last call: the aggregator forgets what it published of
    /// them, and clears the retained topics of evicted strangers.
    public mutating func takeDropped() -> [DroppedBeacon] {
        // Called after every reading: the common case touches nothing.
        guard !dropped.isEmpty else { return [] }
        defer { dropped.removeAll(keepingCapacity: true) }
        return dropped
    }

    /// Evictions so far per node that brought the evicted beacons in (resumed beacons as "resumed").
    public var evictionsByNode: [String: UInt64] {
        var out: [String: UInt64] = [:]
        for p in pools.indices where pools[p].evictions > 0 {
            out[p == 0 ? "resumed" : nodes[p - 1].name] = pools[p].evictions
        }
        return out
    }

    public var capacityUse: CapacityUse? {
        let most = evictionsByNode.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }
        return CapacityUse(tracked: beaconIndex.count, limit: settings.maxBeacons, evicted: counters.evicted,
                           refused: counters.rejected(.capacity), mostEvictedNode: most?.key, mostEvictedCount: most?.value ?? 0)
    }
}
