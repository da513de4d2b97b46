import Foundation
import Shared

/// Fuses the readings of every node into one room decision per beacon.
///
/// Per beacon and node it keeps a fast and a slow RSSI average; at most every
/// `evaluationInterval` it turns the fresh evidence into a likelihood per room — from the
/// knowledge the site has: node membership, positions and room polygons, rooms taught with
/// `aggregator learn`, the nodes' own beacons — and a motion likelihood, and steps the
/// beacon's `RoomMotionFilter` with them. The room shown is the filter's likeliest. A pure
/// state machine: time enters only through `now` and capture times, so replays are
/// deterministic. docs/fusion.md has the design.
public struct FusionEngine: PresenceEstimator, CalibratingEstimator, Sendable {
    /// The site this engine was built for.
    public let site: SiteModel
    /// The settings in force.
    public let settings: FusionSettings
    /// The model's constants.
    public let model: FusionModel
    /// What happened to the input so far.
    public internal(set) var counters = FusionCounters()
    /// Why positions and polygons, though configured, cannot be used (nil: they are, or
    /// none are configured).
    var geometryUnused: String?

    // Rooms: site rooms first, then rooms of auto-registered nodes.
    var roomNames: [String] = []
    var roomFloors: [Int] = []
    var roomIndex: [String: Int] = [:]

    // Nodes.
    var nodes: [NodeState] = []
    var nodeIndex: [String: Int] = [:]
    /// On a site that makes its nodes (`auto_nodes`), nodes heard of only as offline, and since
    /// when: a node taken away leaves its retained `offline` on the broker, read at every start,
    /// and made on that word alone it would be a room of its own for good (a room no node hears, in
    /// every beacon's filter). Made when something else names it (a reading, its `online`, a
    /// resumed decision in its room), and offline from then. At most `automaticNodeLimit`, the
    /// oldest dropped first.
    var offlineBeforeMade: [String: Double] = [:]

    // Beacons and their per-node evidence (`slots[beacon * nodeStride + node]`).
    var beacons: [BeaconState] = []
    var beaconIndex: [BeaconID: Int] = [:]
    /// Decisions resumed in a room, not heard since: the nodes that heard each last (up to four),
    /// missing while offline or not yet heard by this process. At most one entry per tracked
    /// beacon; gone when it is heard or dropped.
    var heldAcrossRestart: [BeaconID: [Int]] = [:]
    var freeBeacons: [Int] = []
    /// Bumped each time a beacon slot is reused: stale eviction-queue entries are recognised.
    var beaconGenerations: [UInt32] = []
    /// Unlisted beacons by eviction pool (0: resumed ones, 1 + n: those node n heard first),
    /// for sharing `max_beacons` out under a flood (`FusionEngine+Capacity`).
    var pools: [EvictionPool] = []
    var dropped: [DroppedBeacon] = []
    var slots: [EvidenceSlot] = []
    var nodeStride: Int
    var known: [BeaconID: SiteModel.KnownBeacon] = [:]

    var geometry: SiteGeometry?
    /// The nodes' own beacons: which node transmits each.
    var nodeOfBeacon: [BeaconID: Int] = [:]
    var calibration = NodeCalibration()
    var nextCalibration = -Double.infinity
    var lastSweep = -Double.infinity
    var sweepForced = false
    /// When the aggregator last started hearing the nodes again after being deaf
    /// (`hearingRestored`): silence counts from here at the earliest.
    var hearingSince = -Double.infinity
    /// Rooms the user teaches: labels running and what they taught (`FusionEngine+Training`).
    var training = RoomTraining()
    /// `training.learned`, indexed for the likelihood (`FusionEngine+LearnedRooms`).
    var taught = TaughtRooms()

    // Scratch reused by evaluations.
    var scratchNodes: [Int] = []
    /// Online nodes that heard the beacon within the away timeout but have no fresh reading:
    /// their evidence is missing, not silent.
    var scratchStale: [Int] = []
    /// Per node, whether it is in `scratchNodes` (set and cleared by the taught-room likelihood).
    var scratchFresh: [Bool] = []
    var scratchColumns: [Int] = []
    var scratchMeasurements: [Double] = []
    var scratchUnheardColumns: [Int] = []
    var scratchUnheardFloors: [Double] = []
    /// Which rooms beacons leave the site from (`RoomDepartures`).
    var departures = RoomDepartures()
    var scratchRoomLL: [Double] = []
    var scratchLL: [Double] = []
    var scratchFingerprint: [Double] = []
    var scratchLevels: [Double] = []

    /// Builds an engine for `site`; nodes and rooms are indexed once here.
    public init(site: SiteModel, settings: FusionSettings = FusionSettings(), model: FusionModel = .standard) {
        self.site = site
        self.settings = settings
        self.model = model
        for room in site.rooms where roomIndex[room.name] == nil {
            roomIndex[room.name] = roomNames.count
            roomNames.append(room.name)
            roomFloors.append(room.floor)
        }
        for node in site.nodes where nodeIndex[node.name] == nil {
            var room = -1
            if let name = node.room { room = Self.ensureRoom(name, floor: 0, names: &roomNames, floors: &roomFloors, index: &roomIndex) }
            nodeIndex[node.name] = nodes.count
            nodes.append(NodeState(name: node.name, room: room, rxAdjust: node.rxAdjust))
        }
        for beacon in site.beacons { known[beacon.id] = beacon }
        for node in site.nodes {
            if let id = node.beacon, let n = nodeIndex[node.name], nodeOfBeacon[id] == nil { nodeOfBeacon[id] = n }
        }
        for n in nodeOfBeacon.values { nodes[n].transmits = true }
        nodeStride = max(8, nodes.count)
        geometry = nil
        buildGeometry()
    }

    static func ensureRoom(_ name: String, floor: Int, names: inout [String], floors: inout [Int],
                           index: inout [String: Int]) -> Int {
        if let i = index[name] { return i }
        index[name] = names.count
        names.append(name)
        floors.append(floor)
        return names.count - 1
    }

    private mutating func buildGeometry() {
        guard settings.useGeometry else { return }
        var outlines: [SiteGeometry.Outline] = []
        // Zones of one open plan share a space: no wall stands where they meet.
        var spaceOfPlan: [String: Int] = [:]
        for room in site.rooms {
            guard let plan = room.openPlan, let r = roomIndex[room.name] else { continue }
            spaceOfPlan[plan] = min(spaceOfPlan[plan] ?? r, r)
        }
        for room in site.rooms {
            guard let polygon = room.polygon, let r = roomIndex[room.name] else { continue }
            let points = polygon.compactMap { p -> (x: Double, y: Double)? in
                p.count >= 2 && p[0].isFinite && p[1].isFinite ? (p[0], p[1]) : nil
            }
            let space = room.openPlan.flatMap { spaceOfPlan[$0] } ?? r
            let doorways = (room.doorways ?? []).compactMap { ends -> Doorway? in
                guard ends.count == 2, ends.allSatisfy({ $0.count >= 2 && $0[0].isFinite && $0[1].isFinite }) else { return nil }
                return Doorway(x0: ends[0][0], y0: ends[0][1], x1: ends[1][0], y1: ends[1][1])
            }
            if points.count >= 3 {
                outlines.append(.init(room: r, space: space, floor: room.floor, points: points, doorways: doorways))
            }
        }
        var placed: [SiteGeometry.PlacedNode] = []
        for node in site.nodes {
            guard let p = node.position, p.count >= 2, p.allSatisfy(\.isFinite), let i = nodeIndex[node.name] else { continue }
            let z = p.count >= 3 ? p[2] : model.defaultNodeHeight
            let floor = nodes[i].room >= 0 ? roomFloors[nodes[i].room] : model.floor(atHeight: z)
            placed.append(.init(engineIndex: i, x: p[0], y: p[1], z: z, floor: floor))
        }
        if outlines.isEmpty && placed.isEmpty { return }
        // Geometry can only choose rooms it can draw: every room a node sits in
        // needs a polygon, or that room would become unreachable.
        let drawn = Set(outlines.map(\.room))
        for node in nodes where node.room >= 0 && !drawn.contains(node.room) {
            geometryUnused = "room '\(roomNames[node.room])' has a node but no polygon"
            return
        }
        guard placed.count >= 2 else {
            geometryUnused = "fewer than two nodes have a position"
            return
        }
        geometry = SiteGeometry(outlines: outlines, roomCount: roomNames.count, nodes: placed,
                                nodeCount: nodes.count, settings: settings, model: model)
        if geometry == nil { geometryUnused = "room polygons contain no grid cell" }
    }

    /// Whether position estimation is in use.
    public var usesGeometry: Bool { geometry != nil }

    /// How this engine decides, in a line for the start-up log: which knowledge of the site
    /// the room likelihood comes from, and what the nodes' own beacons are used for.
    public var modeSummary: String {
        var parts: [String] = []
        if usesGeometry {
            let plans = Set(site.rooms.compactMap(\.openPlan)).sorted()
            let doorways = site.rooms.reduce(0) { $0 + ($1.polygon == nil ? 0 : $1.doorways?.count ?? 0) }
            parts.append("positions and room polygons" + (plans.isEmpty ? "" : ", open plan\(plans.count == 1 ? "" : "s") "
                + plans.map { "'\($0)'" }.joined(separator: ", "))
                + (doorways == 0 ? "" : ", \(doorways) doorway\(doorways == 1 ? "" : "s")"))
        } else {
            parts.append("node membership" + (geometryUnused.map { " (\($0))" } ?? ""))
        }
        let transmitters = nodes.filter(\.transmits).count
        let beacons = "\(transmitters) node beacon\(transmitters == 1 ? "" : "s")"
        if transmitters > 0 && nodes.count < 3 {
            // A node's beacon counts once two other nodes hear it (calibration and fingerprints alike).
            parts.append("node beacons unused (each needs two other nodes to hear it)")
        } else if transmitters > 0 {
            if usesGeometry {
                parts.append(settings.learnCalibration ? "receiver calibration from \(beacons)" : "node beacons ignored (learn_calibration off)")
            } else {
                parts.append(settings.fingerprints ? "room fingerprints from \(beacons)" : "node beacons ignored (fingerprints off)")
            }
        }
        let taught = learnedRoomCount
        if taught > 0 { parts.append("\(taught) taught room\(taught == 1 ? "" : "s")\(settings.learnedRooms ? "" : " ignored (learned_rooms off)")") }
        return parts.joined(separator: "; ")
    }

    /// Seeds learned offsets from a retained calibration report (`CalibratingEstimator`), for the
    /// nodes whose offsets this run can learn again: placed, on a site whose geometry is in use,
    /// with two other placed nodes transmitting beacons of their own (`NodeCalibration` solves a
    /// node's offset from two links at least). Elsewhere nothing would ever replace one, and a
    /// report from a run with positions or node beacons since removed, or a forged one, would
    /// bias those nodes' rooms for good.
    public mutating func resume(_ report: ReceiverCalibrationReport) {
        guard settings.learnCalibration, let g = geometry else { return }
        let placed = { (n: Int) in n < g.columnOfNode.count && g.columnOfNode[n] >= 0 }
        let transmitters = nodes.indices.filter { placed($0) && nodes[$0].transmits }
        for entry in report.nodes {
            guard let n = nodeIndex[entry.node], placed(n), transmitters.filter({ $0 != n }).count >= 2,
                  !nodes[n].calibratedByLinks, entry.offsetDb.isFinite else { continue }
            let bound = model.maxLearnedOffset
            // Node links solved in this run replace it.
            nodes[n].learnedOffset = min(bound, max(-bound, entry.offsetDb))
            nodes[n].offsetOrigin = .resumed(entry.source)
        }
    }

    /// The learned RSSI offset of `node` (dB, subtracted from its readings), if known.
    public func learnedOffset(of node: String) -> Double? {
        nodeIndex[node].map { nodes[$0].learnedOffset }
    }

    /// The learned offset of every node that has one, in node order, with where it came from. A
    /// node nothing was learned for is left out, so a site whose nodes have no beacons reports
    /// no calibration from node beacons it does not have.
    public var receiverCalibration: [ReceiverCalibrationReport.Node] {
        nodes.compactMap { n in n.offsetOrigin.map { .init(node: n.name, offsetDb: n.learnedOffset, source: $0.source) } }
    }

    /// Whether `node`'s offset was learned from the nodes' own beacons.
    public func isCalibratedByLinks(_ node: String) -> Bool {
        nodeIndex[node].map { nodes[$0].calibratedByLinks } ?? false
    }

    // MARK: Input

    public mutating func ingest(_ reading: BeaconReading, now: Double) {
        // The node's filtered RSSI: its median and Kalman filter take out what one packet
        // gets wrong (the raw value alone was noisier on every recording).
        let rssi = reading.rssiFiltered.isFinite ? reading.rssiFiltered : Double(reading.rssi)
        guard reading.ts.isFinite, now.isFinite, rssi >= model.minRSSI, rssi <= model.maxRSSI else {
            counters.count(.invalid); return
        }
        // Capture time against the aggregator clock.
        var ts = reading.ts
        let ahead = ts - now
        if ahead > model.maxFuture { counters.count(.tooFarFuture); return }
        if now - ts > settings.maxAge { counters.count(.tooOld); return }
        if ahead > 0 {
            if ahead > model.skewBound { counters.clampedSkew &+= 1 }
            ts = now
        }
        guard let n = node(named: reading.node) else { counters.count(.unknownNode); return }
        guard nodes[n].online else { counters.count(.nodeOffline); return }
        nodes[n].heardSinceOnline = true
        if nodes[n].heardSince == .infinity { nodes[n].heardSince = now }
        if let tx = nodeOfBeacon[reading.id] {
            // Another node's own beacon: a link of known length, for calibration and fingerprints.
            calibration.observe(tx: tx, rx: n, rssi: rssi + nodes[n].rxAdjust)
            counters.calibrationReadings &+= 1
            return
        }
        guard let b = beacon(for: reading.id, node: n, now: now) else { return }

        let slotIndex = b * nodeStride + n
        var slot = slots[slotIndex]
        if slot.count > 0 {
            if reading.seq == slot.seq {
                counters.count(.duplicate); return
            }
            // A lower sequence number that is also newer in time is an agent restart.
            if reading.seq < slot.seq && ts <= slot.ts {
                counters.count(.outOfOrder); return
            }
        }
        let adjusted = rssi + nodes[n].rxAdjust
        trackHearingFloor(n, adjusted)
        nodes[n].lastHeard = max(nodes[n].lastHeard, ts)
        if slot.count == 0 || ts - slot.ts > settings.maxAge {
            // A link heard again after `max_age` starts over: its averages warm up again, and
            // motion is not judged on it until it has a few readings.
            slot.fast = adjusted
            slot.slow = adjusted
            slot.gap = 0
            slot.count = 0
        } else {
            let dt = max(0, ts - slot.ts)
            // Readings stamped at the same instant (two antennas, batching) still
            // each count a little.
            let step = max(dt, 0.05)
            slot.fast += (1 - exp(-step / model.fastTimeConstant)) * (adjusted - slot.fast)
            // While few readings are in, a plain running mean: the slow average of a link
            // just heard is not its first packet for a whole time constant.
            let warmUp = 1 / Double(slot.count + 1)
            slot.slow += max(1 - exp(-step / model.slowTimeConstant), warmUp) * (adjusted - slot.slow)
            if dt > 0 { slot.gap = slot.gap == 0 ? dt : slot.gap + 0.1 * (dt - slot.gap) }
        }
        if reading.distance.isFinite && reading.distance >= 0 { slot.distance = reading.distance }
        slot.variance = reading.rssiSD.map { $0 * $0 } ?? 0
        slot.seq = reading.seq
        slot.ts = max(slot.ts, ts)
        slot.count &+= 1
        slots[slotIndex] = slot

        var state = beacons[b]
        state.lastSeen = max(state.lastSeen, ts)
        if !heldAcrossRestart.isEmpty { heldAcrossRestart[state.id] = nil }
        state.firstHeard = min(state.firstHeard, ts)
        // Heard again after timing out never placed (`evaluate`): its initial wait starts now.
        state.firstSeen = min(state.firstSeen, now)
        if let interval = reading.interval, interval.isFinite, interval > 0, interval < 3600 {
            state.interval = state.interval == 0 ? interval : state.interval + 0.2 * (interval - state.interval)
        }
        // The beacon's own power, as a Roomcast node decodes it, beats a node's reference: in a
        // mixed fleet each message would flip it, moving every level the model compares.
        if state.powerOverride == nil && (!reading.powerIsNodesReference || !state.powerIsBeacons) {
            state.power = Double(reading.power)
            state.powerIsBeacons = !reading.powerIsNodesReference
        }
        if reading.name != nil && state.name == nil { state.name = reading.name }
        beacons[b] = state
        counters.accepted &+= 1
    }

    /// Moves node `n`'s hearing floor towards the low quantile of what it hears: down a step
    /// when a level is below it, up by the quantile's share of a step otherwise.
    mutating func trackHearingFloor(_ n: Int, _ level: Double) {
        guard level.isFinite else { return }
        if nodes[n].hearingFloor.isNaN {
            nodes[n].hearingFloor = level
        } else {
            let q = model.hearingFloorQuantile
            nodes[n].hearingFloor += model.hearingFloorStep * (level < nodes[n].hearingFloor ? -(1 - q) : q)
        }
    }

    public mutating func hearingRestored(at now: Double) {
        guard now.isFinite, now > hearingSince else { return }
        hearingSince = now
        // Unobserved time, not silence: away counts from here, and each filter's next
        // prediction runs over the whole gap as the model says (the beacon may have moved).
        sweepForced = true
    }

    public mutating func nodeStatus(_ node: String, online: Bool, now: Double) {
        if !online && nodeIndex[node] == nil {
            guard settings.autoNodes, offlineBeforeMade[node] == nil else { return }
            // Full, the oldest word goes: names any client can announce never lock a real node's
            // `offline` out.
            if offlineBeforeMade.count >= automaticNodeLimit,
               let oldest = offlineBeforeMade.min(by: { $0.value < $1.value })?.key {
                offlineBeforeMade.removeValue(forKey: oldest)
            }
            offlineBeforeMade[node] = now
            return
        }
        guard let n = self.node(named: node) else { return }
        guard nodes[n].online != online else { return }
        nodes[n].online = online
        sweepForced = true
        if online {
            nodes[n].onlineSince = now
            nodes[n].heardSinceOnline = false
        } else if nodes[n].heardSinceOnline || !nodes[n].offlineSince.isFinite {
            nodes[n].offlineSince = now
        }
    }

    public func madeNode(_ node: String) -> Bool {
        makesNodes && nodeIndex[node] != nil
    }

    public var makesNodes: Bool { site.nodes.isEmpty && settings.autoNodes }

    /// `node` is listening (its heartbeat): after a restart, the beacons it heard last count their
    /// silence from when it is first heard.
    public mutating func nodeHeard(_ node: String, now: Double) {
        guard let n = nodeIndex[node], nodes[n].heardSince == .infinity else { return }
        nodes[n].heardSince = now
    }

    /// Evidence slots (64 bytes each, one per beacon and node) that nodes made automatically may
    /// ask for at most: `max_beacons` and `max_nodes` each bound a table, but the slots are
    /// their product, and 512 nodes announced by any client on an open site made 655 MB of them
    /// at the default table size. 128 MiB of slots; each beacon's filter has a few numbers per
    /// room besides (an automatic node is a room), about 50 bytes a room.
    static let automaticSlotBudget = 2_097_152

    /// Nodes at most once nodes are made automatically (`auto_nodes`): `max_nodes`, and no more
    /// than the slot budget allows for a full beacon table.
    var automaticNodeLimit: Int {
        min(settings.maxNodes, max(16, Self.automaticSlotBudget / max(1, settings.maxBeacons)))
    }

    private mutating func node(named name: String) -> Int? {
        if let i = nodeIndex[name] { return i }
        guard settings.autoNodes, nodes.count < automaticNodeLimit else { return nil }
        // An unconfigured node stands for a room of its own name (zero-config).
        let known = roomIndex[name] != nil
        let room = Self.ensureRoom(name, floor: 0, names: &roomNames, floors: &roomFloors, index: &roomIndex)
        if !known { departures.roomAdded(name, at: room) }
        nodeIndex[name] = nodes.count
        nodes.append(NodeState(name: name, room: room, rxAdjust: 0))
        if let since = offlineBeforeMade.removeValue(forKey: name) {
            nodes[nodes.count - 1].online = false
            nodes[nodes.count - 1].offlineSince = since
        }
        // Doubled, amortising the copy, but never past the limit: at 65 of 104 nodes a stride
        // of 128 would spend the budget's slots 23 % over.
        if nodes.count > nodeStride { growStride(to: min(max(nodeStride * 2, nodes.count), max(automaticNodeLimit, nodes.count))) }
        return nodes.count - 1
    }

    private mutating func growStride(to stride: Int) {
        var grown = [EvidenceSlot](repeating: EvidenceSlot(), count: beacons.count * stride)
        for b in 0..<beacons.count {
            for n in 0..<nodeStride { grown[b * stride + n] = slots[b * nodeStride + n] }
        }
        slots = grown
        nodeStride = stride
    }

    /// The slot of beacon `id`, tracking it if it is new; `node` heard it first (-1: resumed).
    mutating func beacon(for id: BeaconID, node: Int, now: Double) -> Int? {
        if let b = beaconIndex[id] { return b }
        let knownBeacon = known[id]
        if !known.isEmpty && knownBeacon == nil { counters.count(.unknownBeacon); return nil }
        if beaconIndex.count >= settings.maxBeacons {
            guard evictForNewcomer(now: now) else { counters.count(.capacity); return nil }
        }
        var state = BeaconState(id: id, roomCount: roomNames.count)
        state.firstSeen = now
        state.listed = knownBeacon != nil
        state.name = knownBeacon?.name
        if let p = knownBeacon?.power { state.powerOverride = Double(p); state.power = Double(p) }
        state.sleepsWhenStill = knownBeacon?.sleepsWhenStill ?? false
        let b: Int
        if let free = freeBeacons.popLast() {
            b = free
            beacons[b] = state
            beaconGenerations[b] &+= 1
            for n in 0..<nodeStride { slots[b * nodeStride + n] = EvidenceSlot() }
        } else {
            b = beacons.count
            beacons.append(state)
            beaconGenerations.append(0)
            slots.append(contentsOf: repeatElement(EvidenceSlot(), count: nodeStride))
        }
        beaconIndex[id] = b
        // Listed beacons are the site's own: never evicted for strangers.
        if !state.listed { enrolStranger(b, node: node) }
        return b
    }
}

extension FusionEngine: ResumablePresenceEstimator {
    /// Seeds a beacon from the aggregator's own retained decision after a
    /// restart: its published room (or away), `since`, and a room filter that
    /// already leans to that room, so fresh readings must beat it by the usual
    /// margin before the room changes — a restart is not a move.
    public mutating func resume(_ decision: PresenceDecision, now: Double) {
        // On a site that lists no nodes every room is a node's own, made when the node is
        // first heard from; a node that sends no status (an ESPresense node) is not heard
        // from before its beacons' retained decisions are read, so its room is made here.
        if let name = decision.room, roomIndex[name] == nil, site.nodes.isEmpty, decision.node == name {
            _ = node(named: name)
        }
        // A room this engine does not have is another partition's decision (they share
        // the presence topics): not ours to resume, or a refresh would publish it as away.
        if let name = decision.room, roomIndex[name] == nil { return }
        // A node's own beacon is never a presence, on a site that lists no beacons too (its
        // decision is from before it was named a node's: `RetainedLeftovers` clears it).
        if nodeOfBeacon[decision.id] != nil { return }
        guard let b = beacon(for: decision.id, node: -1, now: now), !beacons[b].decided else { return }
        let room = decision.room.flatMap { roomIndex[$0] } ?? -1
        var s = beacons[b]
        s.room = room
        s.decided = true
        // Times from a retained message are no later than now: one from the future would keep
        // the beacon from ever being forgotten or evicted (`now - lastSeen` stays negative).
        s.since = min(decision.since, now)
        s.reason = "resumed"
        s.confidence = min(max(decision.confidence, 0), 1)
        // The nodes that heard it last: until one of them is heard (or says it is back), nothing
        // that could hear it is known to be listening. After a power cut the aggregator may be up
        // long before the Pis, whose retained statuses still say `online`: resumed as in force,
        // every beacon would go away after the timeout, and every person `not_home`. Held for nodes
        // that were offline when it was published, it is still held, as before the restart.
        if room >= 0 {
            var held: [Int] = []
            for name in [decision.node].compactMap({ $0 }) + decision.evidence.map(\.node) where held.count < 4 {
                if let n = nodeIndex[name], !held.contains(n) { held.append(n) }
            }
            if !held.isEmpty {
                heldAcrossRestart[decision.id] = held
                // Published again (a refresh, the hold's mark) it names its node, so a second
                // restart before that node is back holds it too.
                s.node = held[0]
                if decision.reason == "nodes_offline" {
                    s.reason = "nodes_offline"
                    s.confidence = 0
                }
            }
            // Resting, it rests on: it has not moved since, or it would have been heard.
            if decision.reason == "resting" && s.sleepsWhenStill { s.reason = "resting" }
        }
        // The resumed decision is in force from now: decision(for:) stamps it with
        // this time, and the room filter's first step runs from here.
        s.lastEvaluation = now
        s.resumedAt = now
        if let seen = decision.lastSeen, seen.isFinite { s.lastSeen = min(seen, now) }
        if room >= 0 && s.logPosterior.count > 1 {
            s.filter.lean(to: room, probability: 0.8)
            s.filter.roomLogPosterior(into: &s.logPosterior)
        }
        if s.name == nil { s.name = decision.name }
        beacons[b] = s
        // Resumed in a room: it was placed before the restart.
        if room >= 0 { settle(b) }
    }
}
