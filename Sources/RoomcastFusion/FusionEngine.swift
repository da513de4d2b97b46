import Foundation
import Shared

/// Fuses the readings of every node into one room decision per beacon.
///
/// Per beacon and node it keeps a time-aware RSSI average; at most every
/// `evaluation_interval` it turns the fresh evidence into a likelihood per room
/// (a position grid with a log-distance, wall- and floor-aware model when node
/// positions and room polygons are configured, otherwise the strongest node per
/// room), runs a room-level hidden Markov filter over it, and switches the
/// published room only when a challenger leads by `switch_margin` for
/// `min_dwell`. A pure state machine: time enters only through `now` and
/// capture times, so replays are deterministic. docs/fusion.md has the design.
public struct FusionEngine: PresenceEstimator, CalibratingEstimator, Sendable {
    /// The site this engine was built for.
    public let site: SiteModel
    /// The settings in force.
    public let settings: FusionSettings
    /// What happened to the input so far.
    public internal(set) var counters = FusionCounters()
    /// Why geometry is off, when the site has positions or polygons but they cannot be used.
    public var geometryNote: String? { geometryUnused.map { "\($0); using nearest-node rules" } }
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

    // Beacons and their per-node evidence (`slots[beacon * nodeStride + node]`).
    var beacons: [BeaconState] = []
    var beaconIndex: [BeaconID: Int] = [:]
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
    var spotCalibration: SpotCalibration
    var nextSpotSolve = -Double.infinity
    var lastSweep = -Double.infinity
    var sweepForced = false
    /// When the aggregator last started hearing the nodes again after being deaf
    /// (`hearingRestored`): silence counts from here at the earliest.
    var hearingSince = -Double.infinity
    /// Rooms the user teaches: labels running and what they taught (`FusionEngine+Training`).
    var training = RoomTraining()

    // Scratch reused by evaluations.
    var scratchNodes: [Int] = []
    var scratchColumns: [Int] = []
    var scratchMeasurements: [Double] = []
    var scratchRoomLL: [Double] = []
    var scratchParticleNodes: [Int] = []
    var particleScratch = ParticleRoomFilter.Scratch()
    var scratchFingerprint: [Double] = []

    /// Builds an engine for `site`; nodes and rooms are indexed once here.
    public init(site: SiteModel, settings: FusionSettings = FusionSettings()) {
        self.site = site
        self.settings = settings
        spotCalibration = SpotCalibration(minimumSeconds: max(settings.stillRecordAfter, 10))
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
        for room in site.rooms {
            guard let polygon = room.polygon, let r = roomIndex[room.name] else { continue }
            let points = polygon.compactMap { p -> (x: Double, y: Double)? in
                p.count >= 2 && p[0].isFinite && p[1].isFinite ? (p[0], p[1]) : nil
            }
            if points.count >= 3 { outlines.append(.init(room: r, floor: room.floor, points: points)) }
        }
        var placed: [SiteGeometry.PlacedNode] = []
        for node in site.nodes {
            guard let p = node.position, p.count >= 2, p.allSatisfy(\.isFinite), let i = nodeIndex[node.name] else { continue }
            let z = p.count >= 3 ? p[2] : settings.floorHeight * 0.7
            let floor = nodes[i].room >= 0 ? roomFloors[nodes[i].room]
                                          : Int((z / settings.floorHeight).rounded(.down))
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
                                nodeCount: nodes.count, settings: settings)
        if geometry == nil { geometryUnused = "room polygons contain no grid cell" }
    }

    /// Whether position estimation is in use.
    public var usesGeometry: Bool { geometry != nil }

    /// How this engine decides, in a line for the start-up log: geometry or nearest-node
    /// rules (and why), and what the nodes' own beacons are used for.
    public var modeSummary: String {
        var parts: [String] = []
        if usesGeometry {
            parts.append("geometry (positions and room polygons)")
        } else {
            parts.append("nearest-node rules" + (geometryUnused.map { " (\($0))" } ?? ""))
        }
        let transmitters = nodes.filter(\.transmits).count
        let beacons = "\(transmitters) node beacon\(transmitters == 1 ? "" : "s")"
        if transmitters > 0 {
            if usesGeometry {
                parts.append(settings.learnCalibration ? "receiver calibration from \(beacons)" : "node beacons ignored (learn_calibration off)")
            } else {
                parts.append(settings.fingerprints ? "room fingerprints from \(beacons)" : "node beacons ignored (fingerprints off)")
            }
        }
        // Positioned receivers that hear no node beacon at a known place of its own learn
        // from where tracked beacons hold still (SpotCalibration).
        if usesGeometry && settings.learnCalibration, let g = geometry {
            let fromSpots = nodes.indices.filter { !nodes[$0].transmits && $0 < g.columnOfNode.count && g.columnOfNode[$0] >= 0 }.count
            if fromSpots > 0 && transmitters == 0 {
                parts.append("receiver calibration from where tracked beacons hold still")
            } else if fromSpots > 0 {
                parts.append("\(fromSpots) more from where tracked beacons hold still")
            }
        }
        if settings.motionGate { parts.append("motion gate") }
        return parts.joined(separator: "; ")
    }

    /// Seeds learned offsets from a retained calibration report (`CalibratingEstimator`).
    public mutating func resume(_ report: ReceiverCalibrationReport) {
        guard settings.learnCalibration else { return }
        for entry in report.nodes {
            guard let n = nodeIndex[entry.node], nodes[n].learnedSamples == 0, !nodes[n].calibratedByLinks,
                  entry.offsetDb.isFinite else { continue }
            let bound = settings.maxLearnedOffset
            let offset = min(bound, max(-bound, entry.offsetDb))
            nodes[n].learnedOffset = offset
            // Spots learned in this run refine it rather than start from 0: it becomes the
            // centre of their prior. Node links know better and replace it.
            nodes[n].resumedOffset = offset
        }
    }

    /// The learned RSSI offset of `node` (dB, subtracted from its readings), if known.
    public func learnedOffset(of node: String) -> Double? {
        nodeIndex[node].map { nodes[$0].learnedOffset }
    }

    /// Every node's learned offset, in node order.
    public var receiverCalibration: [ReceiverCalibrationReport.Node] {
        nodes.map { .init(node: $0.name, offsetDb: $0.learnedOffset, source: $0.calibratedByLinks ? .nodeBeacons : .beacons) }
    }

    /// Whether `node`'s offset was learned from the nodes' own beacons.
    public func isCalibratedByLinks(_ node: String) -> Bool {
        nodeIndex[node].map { nodes[$0].calibratedByLinks } ?? false
    }

    // MARK: Input

    public mutating func ingest(_ reading: BeaconReading, now: Double) {
        let raw = Double(reading.rssi)
        let rssi = settings.rssiInput == .filtered && reading.rssiFiltered.isFinite
            ? reading.rssiFiltered + settings.rawWeight * (raw - reading.rssiFiltered) : raw
        guard reading.ts.isFinite, now.isFinite, rssi >= settings.minRSSI, rssi <= settings.maxRSSI else {
            counters.count(.invalid); return
        }
        // Capture time against the aggregator clock.
        var ts = reading.ts
        let ahead = ts - now
        if ahead > settings.maxFuture { counters.count(.tooFarFuture); return }
        if now - ts > settings.maxAge { counters.count(.tooOld); return }
        if ahead > 0 {
            if ahead > settings.skewBound { counters.clampedSkew &+= 1 }
            ts = now
        }
        guard let n = node(named: reading.node) else { counters.count(.unknownNode); return }
        guard nodes[n].online else { counters.count(.nodeOffline); return }
        if let tx = nodeOfBeacon[reading.id] {
            // Another node's own beacon: a link of known length, for calibration only.
            if settings.learnCalibration { calibration.observe(tx: tx, rx: n, rssi: rssi + nodes[n].rxAdjust) }
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
        if slot.count == 0 || ts - slot.ts > settings.maxAge {
            slot.rssi = adjusted
            slot.fast = adjusted
            slot.slow = adjusted
            slot.long = adjusted
            slot.gap = 0
        } else {
            let dt = max(0, ts - slot.ts)
            // Readings stamped at the same instant (two antennas, batching) still
            // each count a little.
            let step = max(dt, 0.05)
            let tau = adjusted > slot.fast ? settings.riseTimeConstant : settings.fallTimeConstant
            let deviation = adjusted - slot.fast
            // Spread of single readings around the average, over ~10 s: how much one
            // node's evidence can be trusted (noisy links weigh less).
            slot.variance += (1 - exp(-step / 10)) * (min(deviation * deviation, 400) - slot.variance)
            slot.fast += (1 - exp(-step / tau)) * deviation
            slot.slow += (1 - exp(-step / settings.motionTimeConstant)) * (adjusted - slot.slow)
            slot.long += (1 - exp(-step / settings.creepTimeConstant)) * (adjusted - slot.long)
            // The evidence average is slow while the signal is steady (a still beacon
            // stays put) and jumps to the fast one when they part by more than the
            // noise explains (a real move is followed at the fast filter's pace).
            // While few readings are in, a plain running mean: a new beacon is not
            // judged on its first packet for a whole time constant.
            let warmUp = 1 / Double(slot.count + 1)
            slot.rssi += max(1 - exp(-step / settings.steadyTimeConstant), warmUp) * (adjusted - slot.rssi)
            let apart = slot.fast - slot.rssi
            if abs(apart) > settings.changeThreshold * slot.variance.squareRoot() {
                // Only a parting that lasts is a change; noise parts them briefly.
                let sign: Double = apart > 0 ? 1 : -1
                if slot.changeSign != sign { slot.changeSign = sign; slot.changeSince = ts }
                if ts - slot.changeSince >= settings.changePersistence {
                    slot.rssi = slot.fast
                    slot.changeSign = 0
                }
            } else {
                slot.changeSign = 0
            }
            if dt > 0 { slot.gap = slot.gap == 0 ? dt : slot.gap + 0.1 * (dt - slot.gap) }
        }
        if reading.distance.isFinite && reading.distance >= 0 { slot.distance = reading.distance }
        slot.seq = reading.seq
        slot.ts = max(slot.ts, ts)
        slot.count &+= 1
        slots[slotIndex] = slot

        var state = beacons[b]
        state.lastSeen = max(state.lastSeen, ts)
        state.firstHeard = min(state.firstHeard, ts)
        if let interval = reading.interval, interval.isFinite, interval > 0, interval < 3600 {
            state.interval = state.interval == 0 ? interval : state.interval + 0.2 * (interval - state.interval)
        }
        if state.powerOverride == nil {
            state.power = Double(reading.power)
        }
        if reading.name != nil && state.name == nil { state.name = reading.name }
        beacons[b] = state
        counters.accepted &+= 1
    }

    public mutating func hearingRestored(at now: Double) {
        guard now.isFinite, now > hearingSince else { return }
        hearingSince = now
        // Unobserved time, not silence: the room filter's prediction step runs over the gap as
        // the model says (the beacon may have moved), and what was known about its stillness
        // no longer holds, so the fresh evidence is judged at the moving pace.
        for b in beacons.indices where beacons[b].active {
            var s = beacons[b]
            for r in s.stillRecord.indices { s.stillRecord[r] = 0 }
            for r in s.recentRecord.indices { s.recentRecord[r] = 0 }
            s.stillSeconds = 0
            s.recentSeconds = 0
            s.recordLoudest = -1
            s.swingSince = -.infinity
            if settings.motionGate { s.movingUntil = max(s.movingUntil, now + settings.motionHold) }
            beacons[b] = s
        }
        sweepForced = true
    }

    public mutating func nodeStatus(_ node: String, online: Bool, now: Double) {
        guard let n = self.node(named: node) else { return }
        guard nodes[n].online != online else { return }
        nodes[n].online = online
        sweepForced = true
        guard !online else {
            nodes[n].onlineSince = now
            return
        }
        // The room filter of every beacon this node was hearing carries its
        // evidence; restart those from what the remaining nodes say.
        for b in 0..<beacons.count where beacons[b].active && slots[b * nodeStride + n].count > 0 {
            let slot = slots[b * nodeStride + n]
            if now - slot.ts <= freshWindow(beacons[b], slot, awayAfter: awayAfter(beacons[b])) {
                beacons[b].restart = true
            }
        }
    }

    private mutating func node(named name: String) -> Int? {
        if let i = nodeIndex[name] { return i }
        guard settings.autoNodes, nodes.count < settings.maxNodes else { return nil }
        // An unconfigured node stands for a room of its own name (zero-config).
        let room = Self.ensureRoom(name, floor: 0, names: &roomNames, floors: &roomFloors, index: &roomIndex)
        nodeIndex[name] = nodes.count
        nodes.append(NodeState(name: name, room: room, rxAdjust: 0))
        if nodes.count > nodeStride { growStride(to: max(nodeStride * 2, nodes.count)) }
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

/// One receiver node.
struct NodeState {
    var name: String
    /// Engine room index, -1 when the node is in no room.
    var room: Int
    var rxAdjust: Double
    var online = true
    /// When it last came online (-inf: online from the start): its silence counts from then.
    var onlineSince = -Double.infinity
    /// Learned bias (dB) subtracted from this node's RSSI.
    var learnedOffset = 0.0
    var learnedSamples = 0
    /// The offset resumed from the retained calibration report (0 when none): the centre
    /// of the spot solve's prior.
    var resumedOffset = 0.0
    /// The offset comes from the nodes' own beacons (`NodeCalibration`), not from
    /// tracked beacons.
    var calibratedByLinks = false
    /// It transmits a beacon of its own (`nodes[].beacon`).
    var transmits = false

    init(name: String, room: Int, rxAdjust: Double) {
        self.name = name
        self.room = room
        self.rxAdjust = rxAdjust.isFinite ? rxAdjust : 0
    }
}

/// What one node has recently heard of one beacon. Fixed size, stored inline.
struct EvidenceSlot {
    /// Newest capture time, -inf when never heard.
    var ts = -Double.infinity
    var seq: UInt64 = 0
    /// The evidence: an adaptive average of RSSI (with rx_adjust), dBm.
    var rssi = 0.0
    /// Fast, asymmetric average that detects changes.
    var fast = 0.0
    /// Slow plain average (`motion_time_constant`) the motion gate compares with.
    var slow = 0.0
    /// Longer plain average (`creep_time_constant`) the creep test compares `slow` with.
    var long = 0.0
    /// Direction (+1/-1, 0 none) and start of the current fast/evidence parting.
    var changeSign = 0.0
    var changeSince = 0.0
    var distance = -1.0
    /// Running variance of single readings around `rssi` (dB²).
    var variance = 16.0
    /// Average gap between this node's readings of this beacon (seconds).
    var gap = 0.0
    /// When this node's evidence first and last counted in a still beacon's record (the
    /// record's lost-link test).
    var recordJoined = -Double.infinity
    var recordedAt = -Double.infinity
    var count: UInt32 = 0
}

/// One tracked beacon's decision state.
struct BeaconState {
    var id: BeaconID
    var name: String?
    var active = true
    var powerOverride: Double?
    var power = -59.0
    /// Advertising interval reported by the nodes (seconds); 0 when unknown.
    var interval = 0.0
    var lastSeen = -Double.infinity
    /// Its first reading's arrival (`initial_wait`), and the earliest capture time heard.
    var firstSeen = -Double.infinity
    var firstHeard = Double.infinity
    /// On the site's `beacons:` list.
    var listed = false
    /// Unlisted and never placed in a room yet; its eviction pool (-1: listed).
    var stranger = false
    var pool = -1
    /// When two or more fresh nodes last heard the beacon, and the loudest of them then
    /// and its level (`lone_node_hold`).
    var lastWide = -Double.infinity
    var wideLoudest = -1
    var wideLoudestLevel = -Double.infinity

    /// Room filter: log posterior per engine room.
    var logPosterior: [Double]
    var lastEvaluation = -Double.infinity
    /// Position filter when `room_filter` is `particles`.
    var particles: ParticleRoomFilter?

    // The published decision.
    var room = -1
    var decided = false
    var since = 0.0
    var reason = "initial"
    var challenger = -1
    var challengerSince = 0.0
    /// When the room of the latest switch began to lead (`switchEvidenceSince`; -inf: no switch yet).
    var switchLedSince = -Double.infinity
    /// Evidence behind the room filter vanished (a node went offline): decide afresh.
    var restart = false
    /// Since when its two links have swung apart (`motion_swing_threshold`; -inf: not).
    var swingSince = -Double.infinity
    /// Until when the beacon counts as moving (motion gate).
    var movingUntil = -Double.infinity
    /// When its decision was resumed from retained presence (-inf: never).
    var resumedAt = -Double.infinity
    /// Integral of the challenger's posterior lead over time (seconds).
    var challengerLead = 0.0
    /// Per room, the evidence (log-likelihood relative to the best room, per second) summed
    /// over the current stillness, and how many seconds it covers (`still_record_after`).
    var stillRecord: [Double] = []
    var stillSeconds = 0.0
    /// The same record fading with `still_recent_time_constant`: what the last minute or
    /// so of the stillness said.
    var recentRecord: [Double] = []
    var recentSeconds = 0.0
    /// The loudest fresh node when the record last grew, and when the record began: the
    /// record is evidence from the links the beacon held still on, and ends when that
    /// node no longer hears it.
    var recordLoudest = -1
    var recordSince = -Double.infinity

    // Explanation of the latest evaluation.
    var confidence = 0.0
    var runnerUp = -1
    var margin = 0.0
    var node = -1
    var distance: Double?
    var position: (x: Double, y: Double, z: Double)?

    init(id: BeaconID, roomCount: Int) {
        self.id = id
        logPosterior = [Double](repeating: -log(Double(max(roomCount, 1))), count: roomCount)
    }
}

extension FusionEngine: ResumablePresenceEstimator {
    /// Seeds a beacon from the aggregator's own retained decision after a
    /// restart: its published room (or away), `since`, and a room filter that
    /// already leans to that room, so fresh readings must beat it by the usual
    /// margin before the room changes — a restart is not a move.
    public mutating func resume(_ decision: PresenceDecision, now: Double) {
        // A room this engine does not have is another partition's decision (they share
        // the presence topics): not ours to resume, or a refresh would publish it as away.
        if let name = decision.room, roomIndex[name] == nil { return }
        guard let b = beacon(for: decision.id, node: -1, now: now), !beacons[b].decided else { return }
        let room = decision.room.flatMap { roomIndex[$0] } ?? -1
        var s = beacons[b]
        s.room = room
        s.decided = true
        s.since = decision.since
        s.reason = "resumed"
        s.confidence = decision.confidence
        // The resumed decision is in force from now: decision(for:) stamps it with
        // this time, and the room filter's first step runs from here.
        s.lastEvaluation = now
        s.resumedAt = now
        if let seen = decision.lastSeen { s.lastSeen = seen }
        if room >= 0 && s.logPosterior.count > 1 {
            let lean = 0.8
            let rest = log((1 - lean) / Double(s.logPosterior.count - 1))
            for i in s.logPosterior.indices { s.logPosterior[i] = i == room ? log(lean) : rest }
        }
        if s.name == nil { s.name = decision.name }
        beacons[b] = s
        // Resumed in a room: it was placed before the restart.
        if room >= 0 { settle(b) }
    }
}
