import RoomcastFusion
import Shared

/// The aggregator's whole decision path without I/O: input checks, fusion,
/// output. The live service and `aggregator replay` both drive this one type
/// with (time, message), so a replay reproduces what the service would do.
public struct AggregatorCore<Engine: PresenceEstimator>: Sendable where Engine: Sendable {
    public internal(set) var engine: Engine
    public internal(set) var intake: InputIntake
    public internal(set) var publisher: PresencePublisher
    public let discovery: HomeAssistantDiscovery?
    public let site: SiteModel
    public let topics: Topics
    /// How often fusion is ticked, in seconds.
    public let tickInterval: Double
    private var nextTick: Double?
    private var announcedBeacons: Set<BeaconID> = []
    let knownBeacons: [BeaconID: SiteModel.KnownBeacon]
    /// The nodes' own beacons: not tracked, but the engine calibrates receivers with them.
    private let nodeBeacons: Set<BeaconID>
    /// Every person's beacons, listed under `beacons:` or not.
    let peoplesBeacons: Set<BeaconID>
    /// Each node's clock against ours, judged over windows of its readings.
    public private(set) var clocks = NodeClockWatch()
    /// Nodes whose clock is off (a steady median lag beyond `NodeClockWatch.limit`), with the
    /// offset (s, positive: behind). A link whose readings queue is named in the log only.
    public var skewedNodes: [String: Double] { clocks.offsets }
    /// Beacons whose id two transmitters advertise at once.
    var sharedIDs: SharedIDWatch
    /// Beacons heard from two transmitters at once now (`SharedIDWatch`).
    public var sharedIDBeacons: Int { sharedIDs.shared.count }
    /// Nodes marked offline by their status topic; a reading from one brings it back.
    private var offlineNodes: [String: Double] = [:]
    /// No decisions before this time: while the aggregator cannot hear the nodes, and for a
    /// grace period after it hears them again, missing readings say nothing about the beacons.
    public private(set) var decisionsHeldUntil: Double = 0
    /// When hearing came back (`regainedHearing`), until the engine has been told at the
    /// first tick after the hold.
    private var hearingBackAt: Double?
    /// Also take ESPresense nodes' readings (`inputs.espresense`).
    public var acceptsESPresense = false
    /// Home Assistant's status topic (its birth message, `HomeAssistantDiscovery.birthTopic`), read
    /// where an output's messages are not retained (`output.mqtt_room`): Home Assistant back
    /// from a restart gets them again at once (`outputsRefresh`) rather than at the next
    /// refresh, up to a minute of everyone shown away.
    public var homeAssistantStatusTopic: String?
    /// With discovery off (`discovery.enabled: false`), what tells this site's configs on the
    /// broker, which a run with it on left: they are emptied after the start, as configs no
    /// longer wanted are, or Home Assistant would keep every entity for good (it removes one only
    /// when its config is emptied), and go on updating it.
    public var discoveryToClear: HomeAssistantDiscovery?
    /// The site's rooms that other aggregators' partitions decide (`partition:`): every
    /// partition hears each learn command, and one naming such a room is theirs to answer,
    /// not a mistake to refuse here.
    public var otherPartitionsRooms: Set<String> = []
    /// True when `site` is one partition of the site (`partition:`): the shared retained topics
    /// carry the other partitions' parts too.
    var isPartition: Bool { !otherPartitionsRooms.isEmpty }
    /// The whole site where `site` is one partition's: the Home Assistant configs on the
    /// broker that are no longer wanted are those none of the partitions publishes (another
    /// partition's room and node devices are its own, not stale).
    public var wholeSite: SiteModel
    /// Under `partition:`, the other partitions' nodes in the shared receiver calibration, as
    /// last heard on its topic, and our own nodes' as we published them last.
    var othersCalibration: [ReceiverCalibrationReport.Node] = []
    var publishedCalibration: [ReceiverCalibrationReport.Node]?
    /// Under `partition:`, this partition's answers to a shared calibration that left out its nodes.
    var calibrationAnswer = PacedAnswer()
    /// Under `partition:`, for beacons this partition tracks, when another partition last heard
    /// the beacon it placed in one of its rooms (`AggregatorCore+Handover`).
    var claims: [BeaconID: Double] = [:]
    /// Under `partition:` on a site that lists no beacons (one that lists them has no stranger
    /// of any partition's), beacons whose retained presence this partition does not resume
    /// (another partition's, in its rooms or away): their Home Assistant devices
    /// are another partition's, which announces each once per run, so the clean-up after the
    /// start keeps them (`wantedDiscovery`). Bounded: retained topics come from the network.
    var othersBeacons: Set<BeaconID> = []
    /// Nodes fusion made a room of, on a site that lists no nodes (`auto_nodes`), announced to
    /// Home Assistant with their rooms: from then on in the start's configs and kept by the
    /// clean-up. Bounded by the engine's nodes.
    public private(set) var announcedNodes: Set<String> = []
    /// The Home Assistant id of each node in `announcedNodes`, to the node.
    private var madeNodeSlugs: [String: String] = [:]
    private var espresense = ESPresenseInput()
    /// Readings accepted per node and when each last arrived (the dashboard, `/metrics`).
    public private(set) var nodeActivity = NodeActivity()
    /// Nodes that promised a heartbeat, and those of them gone quiet: missing, not silent.
    public private(set) var liveness = NodeLiveness()
    /// Moves whenever a node goes quiet or is heard again (`liveness`): the runtime says so.
    public private(set) var livenessRevision: UInt64 = 0
    /// Since when the aggregator has been listening (`regainedHearing`): a node's quiet from
    /// before is the aggregator's own.
    private var listeningSince = -Double.infinity
    /// What the published decisions did (`/metrics`).
    public private(set) var presenceStats = PresenceStats()
    /// Learn commands in flight and what they changed (`AggregatorCore+Learning`).
    var learning = LearnSession()
    /// State topics cleared once Home Assistant has removed the entities reading them.
    private var deferredClears = DeferredClears()
    /// Listed beacons published away at the start as never heard, and when (`awayForNeverHeard`).
    private var neverHeard: (since: Double, ids: Set<BeaconID>)?
    /// When a node was first heard listening in this run (a reading, or a heartbeat): a retained
    /// `online` is no sign of it (it outlives a power cut on a broker that keeps it).
    private(set) var firstNodeHeardAt: Double?
    /// Listening time since the first node was heard: the listed nodes are waited for during
    /// `FirstNodeWait.patience` of it, not of wall time, which a broker outage would use up.
    private var nodeWait: ListeningClock?
    /// The listed nodes heard listening in this run, or said offline, until every one has been
    /// (`everyNodeHeardFromAt`).
    private var nodesHeardFrom: Set<String> = []
    /// When the last listed node was first heard listening, or said offline, in this run.
    private var everyNodeHeardFromAt: Double?
    /// Listed beacons heard, or resumed from retained presence, in this run until the never
    /// heard were published: known, whatever the engine has forgotten of them since.
    private var knownThisRun: Set<BeaconID> = []
    /// How long the nodes may not have heard a beacon before it is away (`fusion.away_timeout_s`):
    /// a listed beacon is published as never heard no sooner after decisions are current.
    public var awayTimeout: Double = 30

    public init(engine: Engine, site: SiteModel, topics: Topics, discovery: HomeAssistantDiscovery?,
                outputs: [DecisionOutput] = [], tickInterval: Double = 1.0, restrictToKnownNodes: Bool = true) {
        self.engine = engine
        self.site = site
        self.wholeSite = site
        self.topics = topics
        self.discovery = discovery
        self.tickInterval = tickInterval
        self.intake = InputIntake(topics: topics, knownNodes: restrictToKnownNodes && !site.nodes.isEmpty ? Set(site.nodes.map(\.name)) : nil)
        self.publisher = PresencePublisher(topics: topics, site: site, outputs: outputs)
        var known: [BeaconID: SiteModel.KnownBeacon] = [:]
        for b in site.beacons { known[b.id] = b }
        self.knownBeacons = known
        self.nodeBeacons = Set(site.nodes.compactMap(\.beacon))
        self.peoplesBeacons = Set(site.people.flatMap(\.beacons))
        self.sharedIDs = SharedIDWatch(limit: engine.capacityUse?.limit ?? 100_000)
    }

    /// Whether a reading of `id` goes to the engine: every beacon when the site lists none,
    /// else the listed ones and the nodes' own.
    private func feeds(_ id: BeaconID) -> Bool {
        knownBeacons.isEmpty || knownBeacons[id] != nil || nodeBeacons.contains(id)
    }

    /// Messages to publish when the service starts: online status and discovery. `existing`: our
    /// discovery configs read back from the broker; those of the other discovery mode that ours
    /// replace are migrated (`HomeAssistantDiscovery.migrating`), not duplicated, now or when
    /// their beacon is announced. `configs`: `startConfigs()`, when the caller has them already.
    public mutating func start(now: Double, existing: Set<String> = [], configs: [OutboundMessage]? = nil) throws -> [OutboundMessage] {
        var out = [OutboundMessage(topic: topics.aggregatorStatus, text: "online", retain: true, qos: 1)]
        if let discovery {
            legacyDiscovery = existing.filter(discovery.isOtherModeTopic).subtracting(migratedTopics)
            out += migrating(try configs ?? startConfigs())
            announcedBeacons.formUnion(site.beacons.map(\.id))
        }
        started = true
        out += try learnStateAtStart(now: now)
        return out
    }

    /// The discovery configs `start` publishes: the site's, and those of the beacons announced.
    public func startConfigs() throws -> [OutboundMessage] {
        guard let discovery else { return [] }
        return try discovery.siteConfigs(site) + announcedConfigs() + madeNodeConfigs(announcedNodes)
    }

    /// The clean-up after the start has run: of the other mode's configs, only `remaining` are
    /// still on the broker to migrate when their beacon is announced.
    public mutating func discoveryCleanedUp(remaining: Set<String>) {
        legacyDiscovery.formIntersection(remaining)
    }

    /// A beacon the site does not list, resumed from the retained presence: announced like one
    /// placed in this run, so it is refreshed and the clean-up after the start
    /// (`wantedDiscovery`) keeps its config. Listed beacons are announced by `start`, which also
    /// migrates their per-entity configs.
    private mutating func announceResumed(_ d: PresenceDecision) throws -> [OutboundMessage] {
        knownBeacons[d.id] == nil ? try announce(d.id, name: d.name) : []
    }

    /// Marks a beacon announced: from then on it is refreshed, and the first time its discovery
    /// configs go out (unless a person's device carries it). Before the start they go out with
    /// the start's, after what the broker holds has been handed over and migrated.
    private mutating func announce(_ id: BeaconID, name: String?) throws -> [OutboundMessage] {
        guard announcedBeacons.insert(id).inserted, started, let discovery, ownedBeacons[id] == nil else { return [] }
        return migrating(try discovery.beaconConfigs(id: id, name: name))
    }

    /// `configs` with the migration of their configs of the other discovery mode found at the
    /// start: a beacon the site does not list is migrated when it is announced.
    private mutating func migrating(_ configs: [OutboundMessage]) -> [OutboundMessage] {
        guard let discovery else { return configs }
        let (messages, migrated) = discovery.migrating(configs, legacy: legacyDiscovery)
        migratedTopics.formUnion(migrated)
        legacyDiscovery.subtract(migrated)
        return messages
    }

    /// Discovery configs of the beacons announced as they were placed that the site does not
    /// list: a standby that takes over publishes them again at its start.
    private func announcedConfigs() throws -> [OutboundMessage] {
        try beaconDevices(announcedBeacons.subtracting(site.beacons.map(\.id)))
    }

    /// The discovery configs of `ids`' own devices (a person's beacon has none), by id.
    private func beaconDevices(_ ids: Set<BeaconID>) throws -> [OutboundMessage] {
        guard let discovery else { return [] }
        return try ids.sorted().filter { ownedBeacons[$0] == nil }.flatMap { id in
            try discovery.beaconConfigs(id: id, name: engine.decision(for: id)?.name ?? knownBeacons[id]?.name)
        }
    }

    /// Every discovery config this aggregator, or another partition of the site, publishes, and
    /// those of the nodes said to be offline where nodes are made of what is heard (their devices
    /// outlast a restart while the broker holds their status): what the clean-up after the start keeps.
    public func wantedDiscovery() throws -> [OutboundMessage] {
        guard let discovery else { return [] }
        return try discovery.siteConfigs(wholeSite) + announcedConfigs() + beaconDevices(othersBeacons.subtracting(announcedBeacons))
            + madeNodeConfigs(announcedNodes.union(engine.makesNodes ? Set(offlineNodes.keys) : []))
    }

    /// The Home Assistant devices of `nodes`, each a node fusion made a room of, and its room.
    private func madeNodeConfigs(_ nodes: Set<String>) throws -> [OutboundMessage] {
        guard let discovery else { return [] }
        return try nodes.sorted().flatMap(discovery.madeNodeConfigs)
    }

    /// A node fusion has just made a room of (`madeNode`): its devices and its room's go to
    /// Home Assistant, as a listed node's do at the start, and its room's occupancy is published
    /// with every refresh from then on, as a listed room's is.
    /// A node whose devices' ids would be another's (`hall-pi` and `hall_pi`, or a listed room's
    /// of another spelling: Home Assistant ids keep letters and digits alone) gets none: they would
    /// share one config, each overwriting the other's.
    private mutating func announceNode(_ node: String) throws -> [OutboundMessage] {
        guard site.nodes.isEmpty, !announcedNodes.contains(node), engine.madeNode(node) else { return [] }
        let slug = HomeAssistantDiscovery.discoveryID(node)
        if let other = madeNodeSlugs[slug] ?? site.rooms.first(where: { HomeAssistantDiscovery.discoveryID($0.name) == slug })?.name,
           other != node {
            return []
        }
        madeNodeSlugs[slug] = node
        announcedNodes.insert(node)
        publisher.roomMade(node)
        guard started, let discovery else { return [] }
        return try discovery.madeNodeConfigs(node)
    }

    /// Beacons remembered in `othersBeacons` at most.
    static var maximumOthersBeacons: Int { 16_384 }
    /// Announced beacons past which one forgotten is no longer kept announced (its device then
    /// goes at the next start's clean-up): beacons a site does not list come from the air.
    static var maximumAnnouncedBeacons: Int { 16_384 }

    /// Discovery topics of the other mode already migrated in this run.
    public private(set) var migratedTopics: Set<String> = []
    /// The other discovery mode's configs on the broker at the start, less those migrated: a
    /// beacon announced later has its among them.
    private var legacyDiscovery: Set<String> = []
    /// The state file's rooms last published (`AggregatorCore+Placements`) not yet resumed: each
    /// goes in when its beacon's retained presence arrives (whichever is newer wins), when it is
    /// first heard, or at the end of the start's resume window.
    var pendingPlacements: [BeaconID: LearnedRooms.Placement] = [:]
    /// Beacons resumed from the state file's placements in this run that the broker held no
    /// retained presence of.
    public internal(set) var placementsResumed = 0
    /// Beacons the engine dropped in this run (forgotten, evicted): their retained presence,
    /// which the broker sends again at every reconnect, is not resumed again. Resumed, each was
    /// tracked anew, announced again, and gave its person the retained message's old time.
    private var droppedThisRun: Set<BeaconID> = []
    /// The last decision of each awaited beacon (listed, or a person's) the engine forgot after
    /// `forget_after_s` away: the refresh goes on republishing it, or a broker that lost its
    /// retained messages would hold no presence for it, and Home Assistant show it unavailable.
    /// Bounded by the config; a decision of the engine's, once the beacon is heard again, wins.
    /// Empty under `partition:`, as the away of a beacon never heard is.
    private var forgottenAwaited: [BeaconID: PresenceDecision] = [:]
    /// Beacons remembered in `droppedThisRun` at most (a flood of strangers fills it).
    static var maximumDroppedThisRun: Int { 65_536 }
    /// Whether `start` has run: what the core answers before it (announced configs, a stale
    /// learn state) goes out with the start's messages, which a standby publishes only when it
    /// takes over.
    private(set) var started = false
    /// Beacons that belong to a person: placed like any other, but in Home Assistant only through their person.
    private var ownedBeacons: [BeaconID: String] { publisher.people.ownerOf }

    /// Resumes from our own retained presence read back at start-up.
    public mutating func resume(from decisions: [PresenceDecision]) {
        publisher.resume(from: decisions.map(withSiteLastRoom))
    }

    /// Whether `room` is one of the whole site's: this partition's (those made of nodes among
    /// them) or another's, or on a site that lists no nodes (whose rooms are made of the nodes
    /// heard) any a node could be named after. A `last_room` read back
    /// from the broker names one, or is dropped.
    func isSiteRoom(_ room: String) -> Bool {
        if publisher.listedRooms.contains(room) || otherPartitionsRooms.contains(room) { return true }
        return wholeSite.nodes.isEmpty && TopicName.isValid(room) && room != PresencePublisher.awayText
    }

    /// `d` with its `last_room` only where that is a room of the site's: one taken out of the
    /// config, or anything written on the topic, is not shown for good.
    func withSiteLastRoom(_ d: PresenceDecision) -> PresenceDecision {
        guard let last = d.lastRoom, !isSiteRoom(last) else { return d }
        var d = d
        d.lastRoom = nil
        return d
    }

    /// One inbound message at `now`; returns what to publish because of it
    /// (including the ticks that fell due before `now`).
    public mutating func handle(topic: String, payload: [UInt8], now: Double) throws -> (messages: [OutboundMessage], rejection: InputIntake.RejectionDetail?) {
        var out = try advance(to: now)
        if acceptsESPresense && topic.hasPrefix(Topics.Compatibility.espresenseDevicePrefix) {
            var outcome: InputIntake.RejectionDetail?
            switch espresense.reading(topic: topic, payload: payload, now: now) {
            case .failure(let why): outcome = why
            case .success(let r) where !intake.isKnown(node: r.node):
                outcome = intake.refusal(ofNode: r.node, kind: "ESPresense node")
            case .success(let r):
                nodeActivity.heard(r.node, now: now)
                heardListening(r.node, now: now)
                intake.count(nil)
                // Stamped on arrival, so captured after any `offline` before it.
                var note = nodeAlive(r.node, capturedAt: now, now: now)
                if let note { intake.count(note) }
                if feeds(r.id) {
                    // ESPresense gives no address where it has none: nothing to tell transmitters by.
                    if r.mac != ESPresenseInput.noAddress, note == nil { note = transmitterClash(r, now: now) }
                    out += try ingest(r, now: now)
                    out += try announceNode(r.node)
                } else {
                    engine.nodeHeard(r.node, now: now)
                }
                return (out, note)
            }
            intake.count(outcome)
            return (out, outcome)
        }
        if acceptsESPresense && topic.hasPrefix(Topics.Compatibility.espresenseRoomPrefix),
           let status = ESPresenseInput.status(topic: topic, payload: payload) {
            var outcome: InputIntake.RejectionDetail?
            switch status {
            case .failure(let why): outcome = why
            case .success(let s) where !intake.isKnown(node: s.node):
                outcome = intake.refusal(ofNode: s.node, kind: "ESPresense node")
            case .success(let s):
                out += try nodeStatus(s.node, online: s.online, now: now)
            }
            intake.count(outcome)
            return (out, outcome)
        }
        switch intake.accept(topic: topic, payload: payload) {
        case .failure(let why):
            if topic == topics.aggregatorLearn { out += try learnRefused(payload: payload, why: why, now: now) }
            return (out, why)
        case .success(.reading(var r)):
            nodeActivity.heard(r.node, now: now)
            heardListening(r.node, now: now)
            nodeHeard(r.node, now: now)
            var note: InputIntake.RejectionDetail?
            // Fusion judges readings by capture time, and counts one for only a few seconds: a
            // node whose clock is off (a Pi without a clock battery or NTP, minutes or hours out
            // after a reboot) would count for nothing, or be refused, and its rooms empty. Once a
            // window of its readings agrees on a steady offset (`NodeClockWatch`: one forged time
            // cannot move it, and a queue's delay is not steady), its capture times are put on
            // this clock. Not judged while deaf: what arrives then (a backlog) is late because of us.
            if !decisionsHeld(at: now), let verdict = clocks.observe(node: r.node, captured: r.ts, now: now), verdict.off {
                let seconds = String(format: "%.0f", abs(verdict.offset))
                let ours = verdict.steady && clocks.everyNodeAgrees(with: verdict, now: now)
                let message = switch (verdict.steady, verdict.offset > 0) {
                case (true, _) where ours:
                    "its clock, like every node's, is \(seconds) s \(verdict.offset > 0 ? "behind" : "ahead of") this aggregator's: "
                        + "most likely this aggregator's clock is \(seconds) s \(verdict.offset > 0 ? "ahead" : "behind"); "
                        + "check its clock (NTP). Readings are counted as of their arrival"
                case (true, true): "its clock is \(seconds) s behind: its readings are counted as of their arrival; check its clock (NTP)"
                case (true, false): "its clock is \(seconds) s ahead: its readings are counted as of their arrival; check its clock (NTP)"
                case (false, true): "its readings arrive \(seconds) s late, by a delay that varies (a slow link, or a clock that drifts): "
                    + "fusion counts a reading \(Int(NodeClockWatch.readingLife)) s from its capture"
                case (false, false): "its readings come \(seconds) s ahead of this clock, by an amount that varies (a clock that drifts); check its clock (NTP)"
                }
                // The aggregator's own clock is one condition, not one per node: said once for all.
                note = .init(reason: .clockSkew, message: "node '\(r.node)': " + message, node: ours ? nil : r.node)
            }
            if !clocks.offsets.isEmpty, let offset = clocks.offsets[r.node] { r.ts += offset }
            // Captured on this clock: a node whose clock is off is judged by its corrected time.
            note = note ?? nodeAlive(r.node, capturedAt: r.ts, now: now)
            if let note { intake.count(note) }
            if feeds(r.id), r.hasLevel {
                if note == nil { note = transmitterClash(r, now: now) }
                out += try ingest(r, now: now)
                out += try announceNode(r.node)
            } else {
                engine.nodeHeard(r.node, now: now)
            }
            return (out, note)
        case .success(.nodeHeartbeat(let node)):
            heardListening(node, now: now)
            if liveness.heartbeat(node, now: now) { nodeBack(node, now: now) }
            engine.nodeHeard(node, now: now)
        case .success(.nodeStatus(let node, let online)):
            out += try nodeStatus(node, online: online, now: now)
        case .success(.retainedPresence(let retained)):
            // The state file's room of the beacon, when newer (a broker that saves its retained
            // messages only now and then) and another room of this site's, is what was published
            // last. In the same room the retained copy says more (every node that heard it).
            if !pendingPlacements.isEmpty, let p = pendingPlacements.removeValue(forKey: retained.id), p.at > retained.ts,
               p.room != retained.room, publisher.listedRooms.contains(p.room) {
                out += try resumeRetained(Self.decision(of: p), now: now)
            } else {
                out += try resumeRetained(retained, now: now)
            }
        case .success(.retainedCalibration(let report)):
            withFusionEngine { $0.resume(report) }
            out += try calibrationHeard(report, now: now)
        case .success(.learnCommand(let command)):
            out += try learn(command, now: now)
        case .success(.learnState(let state)):
            out += try learnStateHeard(state, now: now)
        case .success(.aggregatorStatus), .success(.lease), .success(.ignored):
            break
        }
        return (out, nil)
    }

    /// Resumes a decision published before a restart (retained presence, or the state file's
    /// placement): the beacon is in force where it was, with no event and its `since`.
    mutating func resumeRetained(_ d: PresenceDecision, now: Double) throws -> [OutboundMessage] {
        let d = withSiteLastRoom(d)
        var out: [OutboundMessage] = []
        // Only a decision this aggregator could have published is resumed: of a beacon it
        // follows, and where the engine takes it, in a room the engine has. Another
        // partition's decision, or one in a room no longer configured, is not its own:
        // resumed, the next change would publish that room's occupancy.
        if isPartition, knownBeacons.isEmpty, d.room.map(otherPartitionsRooms.contains) ?? true,
           othersBeacons.count < Self.maximumOthersBeacons {
            othersBeacons.insert(d.id)
        }
        // A room named as away (`not_home`, which no node may be named) is no room to resume
        // into: on a site that lists no nodes the engine would make it.
        guard feeds(d.id), !droppedThisRun.contains(d.id), d.room != PresencePublisher.awayText else { return [] }
        noteClaim(d, now: now)
        if withFusionEngine({ $0.resume(d, now: now) }) != nil {
            // Resumed only when the engine took it (a full table, or a node's own beacon,
            // leaves it out: an away decision would match its absence). One not resumed (in
            // a room taken out of the config) counts as never heard: its retained room goes.
            if let resumed = engine.decision(for: d.id), resumed.room == d.room {
                noteHeard(d.id)
                publisher.resume(from: [d])
                out += try announceResumed(d)
            }
            out += try tidyDropped(now: now)
        } else {
            noteHeard(d.id)
            publisher.resume(from: [d])
            out += try announceResumed(d)
        }
        return out
    }

    /// The note to give when `r`'s id turns out to be advertised by two transmitters at once
    /// (`SharedIDWatch`), counted; nil otherwise.
    private mutating func transmitterClash(_ r: BeaconReading, now: Double) -> InputIntake.RejectionDetail? {
        guard let clash = sharedIDs.observe(r, now: now) else { return nil }
        sharedIDs.told(r.id, now: now)
        let note = InputIntake.RejectionDetail(reason: .sharedID, message: clash.message, node: r.id.rawValue)
        intake.count(note)
        return note
    }

    /// One reading of a beacon this aggregator follows, from a Roomcast or an ESPresense node.
    private mutating func ingest(_ r: BeaconReading, now: Double) throws -> [OutboundMessage] {
        // Heard before the state file's rooms were resumed: its own first, or its first decision
        // would be an `enter` of the room it never left.
        var out: [OutboundMessage] = []
        if !pendingPlacements.isEmpty, let p = pendingPlacements.removeValue(forKey: r.id) {
            out += try resume(p, now: now)
        }
        engine.ingest(r, now: now)
        // Heard is taken in by the engine: a reading it refused (too old for it) leaves a listed
        // beacon to be published never heard, not with no presence at all.
        if engine.isTracking(r.id) { noteHeard(r.id) }
        return try out + tidyDropped(now: now)
    }

    /// A listed beacon heard or resumed: it is not published as never heard, or no longer. Only
    /// the start pays for the bookkeeping: it stops once the list published is empty.
    private mutating func noteHeard(_ id: BeaconID) {
        if let listed = neverHeard {
            if !listed.ids.isEmpty { neverHeard?.ids.remove(id) }
        } else if knownBeacons[id] != nil || peoplesBeacons.contains(id) {
            knownThisRun.insert(id)
        }
    }

    /// The beacons awaited from the start: those listed, and people's (a site may list people
    /// and no beacons, tracking every one it hears). One nothing is known of is published away
    /// once the nodes have listened (`awayForNeverHeard`): someone away when the aggregator first
    /// starts reads away, not nothing at all.
    private var awaitedBeacons: [SiteModel.KnownBeacon] {
        site.beacons + peoplesBeacons.subtracting(knownBeacons.keys).sorted().map { SiteModel.KnownBeacon(id: $0) }
    }

    /// Offline nodes remembered: status topics come from the network, so the set is bounded
    /// (the intake admits only configured nodes when the site lists any).
    static var maximumOfflineNodes: Int { 4096 }

    /// The aggregator stops hearing the nodes (its broker connection is gone, or it finds it was
    /// paused): no decisions until `regainedHearing`, since missing readings are our silence.
    public mutating func lostHearing(at now: Double) {
        nodeWait?.stop(at: now)
        decisionsHeldUntil = .infinity
        hearingBackAt = nil
        clocks.restartWindows()
    }

    /// The aggregator hears the nodes again at `now` (reconnected, and the broker's backlog
    /// read): decisions resume `grace` seconds later, once fresh readings had time to arrive,
    /// and the engine counts no silence from before `now`.
    public mutating func regainedHearing(at now: Double, grace: Double) {
        decisionsHeldUntil = now + max(0, grace)
        hearingBackAt = now
        nodeWait?.resume(at: now)
        listening(since: now)
    }

    /// The aggregator has listened since `now` only (it was deaf, paused or stalled before): no
    /// node's quiet counts from earlier (`NodeLiveness`).
    public mutating func listening(since now: Double) {
        listeningSince = max(listeningSince, now)
    }

    /// A reading of anything from `node`, captured at `ts`: the node is listening (fusion learns
    /// that from the reading, or from `nodeHeard` where the reading is not fusion's). A node's status
    /// follows its traffic: a Last Will comes after the node's last message, so a reading captured
    /// after `offline` arrived means a live node (and a forged `offline` must not silence it until
    /// it reconnects); one captured before is in flight from before, and stays ignored. Returns
    /// the note when it brought the node back.
    private mutating func nodeAlive(_ node: String, capturedAt ts: Double, now: Double) -> InputIntake.RejectionDetail? {
        guard !offlineNodes.isEmpty, let since = offlineNodes[node], ts > since else { return nil }
        offlineNodes[node] = nil
        engine.nodeStatus(node, online: true, now: now)
        return .init(reason: .nodeBackOnline, message: "node '\(node)' sends readings after an offline status; counted as online", node: node)
    }

    /// A node's status, a Roomcast node's or an ESPresense node's: `online` (retained) or
    /// `offline` (its own, or its Last Will); returns what to publish because of it.
    private mutating func nodeStatus(_ node: String, online: Bool, now: Double) throws -> [OutboundMessage] {
        if online {
            offlineNodes[node] = nil
        } else if offlineNodes[node] == nil, offlineNodes.count < Self.maximumOfflineNodes {
            offlineNodes[node] = now
        }
        if online { nodeHeard(node, now: now) } else { heardFrom(node, now: now) }
        // Offline by its own word: its status says the rest; its next heartbeat promises again.
        if !online && liveness.quiet[node] != nil { livenessRevision &+= 1 }
        if !online { liveness.forget(node) }
        engine.nodeStatus(node, online: online, now: now)
        if online { return try announceNode(node) }
        return !decisionsHeld(at: now) ? try publishChanges(now: now) : []
    }

    /// Anything from `node` but a heartbeat: one that had gone quiet is back.
    private mutating func nodeHeard(_ node: String, now: Double) {
        if liveness.heard(node, now: now) { nodeBack(node, now: now) }
    }

    /// A node that had gone quiet (`liveness`) is heard again: it listens, and its silence about a
    /// beacon counts from here as any online node's does.
    private mutating func nodeBack(_ node: String, now: Double) {
        livenessRevision &+= 1
        if offlineNodes[node] == nil { engine.nodeStatus(node, online: true, now: now) }
    }

    /// Nodes that promised a heartbeat and have sent nothing for `NodeLiveness.quietAfter` are
    /// missing, not silent: fusion takes them as offline from their last message, and a beacon
    /// only they heard is held where it was (`nodes_offline`) instead of going away.
    private mutating func markQuietNodes(now: Double) {
        for (node, since) in liveness.goneQuiet(at: now, listeningSince: listeningSince) {
            livenessRevision &+= 1
            engine.nodeStatus(node, online: false, now: since)
        }
    }

    /// Whether decisions are held at `now` (see `lostHearing`), or the hold is over but no tick
    /// has decided since: until then every decision in force is from before.
    public func decisionsHeld(at now: Double) -> Bool { now < decisionsHeldUntil || hearingBackAt != nil }

    private func gridTick(after now: Double) -> Double {
        (now / tickInterval).rounded(.down) * tickInterval + tickInterval
    }

    /// Runs the ticks due up to `now`.
    public mutating func advance(to now: Double) throws -> [OutboundMessage] {
        guard let due = nextTick else {
            nextTick = gridTick(after: now)
            return []
        }
        if now < decisionsHeldUntil {
            // Deaf, or just back: skip the ticks that fall due (no burst of catch-up ticks
            // later) but keep the schedule running, so deciding resumes on its own when the
            // hold ends.
            if due <= now { nextTick = gridTick(after: now) }
            return []
        }
        var out = deferredClears.due(now: now).filter(isStillToClear)
        var t = due
        if t <= now, let back = hearingBackAt {
            hearingBackAt = nil
            engine.hearingRestored(at: back)
        }
        // A gap longer than a day (a replay whose lines jump ahead, a clock set far forward) is
        // ticked through for its first day, where a silence's away and forgetting fall, and
        // then once at its end. Ticking a year of seconds would stall; far enough out,
        // `t + tickInterval` is `t` again and it would never end.
        let last = min(now, t + Self.longestCatchUp)
        while t <= last {
            out += try publishChanges(now: t)
            let next = t + tickInterval
            guard next > t else { break }  // past 2^53 s a tick no longer moves the clock
            t = next
        }
        if t <= now {
            out += try publishChanges(now: now)
            t = gridTick(after: now)
        }
        nextTick = t > now ? t : .infinity
        return try out + pacedAnswers(now: now)
    }

    /// Hands the people tracker the decision in force of every beacon someone carries.
    private mutating func observeOwnedBeacons() {
        for id in ownedBeacons.keys {
            guard var d = engine.decision(for: id) else { continue }
            if d.name == nil { d.name = knownBeacons[id]?.name }
            publisher.observeOwned(d, handedOver: isHandedOver(d))
        }
    }

    /// Runs `body` on the engine in place when it is the fusion engine (nil otherwise: the
    /// baseline rules neither resume, calibrate nor learn). Cast to a protocol instead
    /// (`engine as? any ResumablePresenceEstimator`), the engine was copied into a box that
    /// shared its storage, and the first change copied all of it, every beacon's evidence:
    /// per retained presence read at a start, and per tick while a label ran.
    @discardableResult
    mutating func withFusionEngine<T>(_ body: (inout FusionEngine) throws -> T) rethrows -> T? {
        guard Engine.self == FusionEngine.self else { return nil }
        return try withUnsafeMutablePointer(to: &engine) { pointer in
            try pointer.withMemoryRebound(to: FusionEngine.self, capacity: 1) { try body(&$0.pointee) }
        }
    }

    /// The longest stretch of a gap `advance` ticks through second by second (seconds).
    static var longestCatchUp: Double { 86_400 }

    /// The wall clock stepped back by `seconds`: the tick schedule, the hold on decisions and
    /// every time the engine keeps move back by as much (`FusionEngine.clockSteppedBack`), so
    /// deciding goes on at once instead of waiting for the clock to catch up. The nodes' clock
    /// offsets are judged afresh: lags measured across the step say nothing.
    public mutating func clockSteppedBack(by seconds: Double) {
        guard seconds.isFinite, seconds > 0 else { return }
        engine.clockSteppedBack(by: seconds)
        if let due = nextTick, due.isFinite { nextTick = due - seconds }
        decisionsHeldUntil -= seconds
        if let back = hearingBackAt { hearingBackAt = back - seconds }
        for (node, since) in offlineNodes { offlineNodes[node] = since - seconds }
        liveness.clockSteppedBack(by: seconds)
        listeningSince -= seconds
        clocks.restart()
        nodeActivity.clockSteppedBack(by: seconds)
        presenceStats.clockSteppedBack(by: seconds)
        deferredClears.clockSteppedBack(by: seconds)
        if let heard = firstNodeHeardAt { firstNodeHeardAt = heard - seconds }
        nodeWait?.clockSteppedBack(by: seconds)
        if let every = everyNodeHeardFromAt { everyNodeHeardFromAt = every - seconds }
        sharedIDs.clockSteppedBack(by: seconds)
    }

    /// False for a held clear of a beacon's presence published again meanwhile (a stranger
    /// evicted, heard again and placed): clearing it would wipe the new presence.
    private func isStillToClear(_ clear: OutboundMessage) -> Bool {
        let head = topics.presencePrefix
        guard clear.topic.hasPrefix(head),
              let id = BeaconID(String(clear.topic.dropFirst(head.count).prefix { $0 != "/" })) else { return true }
        if case .none = publisher.publishedRoom(of: id) { return true }
        return false
    }

    /// Sends `clears` (empty retained payloads of state topics) `DeferredClears.delay` seconds
    /// after `now`, once Home Assistant has removed the entities reading them, whose discovery
    /// configs were cleared at `now`; returns any that cannot wait, to send at once.
    public mutating func clearAfterEntitiesGo(_ clears: [OutboundMessage], now: Double) -> [OutboundMessage] {
        deferredClears.add(clears, now: now)
    }

    /// Periodic refresh of every retained output.
    public func refresh(now: Double) throws -> [OutboundMessage] {
        let all = publishedDecisions(now: now)
        return try publisher.refresh(all + neverHeardDecisions(now: now), now: now, handedOver: handedOver(all))
    }

    /// The messages of the outputs for other ecosystems alone (`output.mqtt_room`), as the
    /// refresh has them: what Home Assistant back from a restart has not kept.
    public func outputsRefresh(now: Double) throws -> [OutboundMessage] {
        let all = publishedDecisions(now: now)
        return try publisher.outputsRefresh(all + neverHeardDecisions(now: now), handedOver: handedOver(all))
    }

    /// The retained messages of one beacon's decision in force (none when it has none, or
    /// another partition has it).
    public func republish(_ id: BeaconID) throws -> [OutboundMessage] {
        guard var d = engine.decision(for: id), !isHandedOver(d) else { return [] }
        if d.name == nil { d.name = knownBeacons[id]?.name }
        return try publisher.retained(d)
    }

    /// A person's retained presence read while resuming: what this site published of them before
    /// a restart. When they are worked out in the same room again, their `since` stays. True
    /// when `topic` is a person's (taken or not: a payload of another person, or none, is nobody's).
    public mutating func resumeRetainedPerson(topic: String, payload: [UInt8], now: Double) -> Bool {
        guard case .person(let id) = topics.parse(topic) else { return false }
        if var person = try? WireFormat.decode(PersonPresence.self, from: payload), person.id == id {
            if let last = person.lastRoom, !isSiteRoom(last) { person.lastRoom = nil }
            // A room taken out of the config is nowhere they could be now, nor where they were last.
            if let room = person.room, !isSiteRoom(room) { person.room = nil }
            publisher.resumeRetained(person, now: now)
        }
        return true
    }

    /// A beacon resumed from its retained presence after the resume's refresh went out (a big
    /// site's retained messages still arriving): its presence, its person, and the occupancy of
    /// the rooms it and its person are in, and of `personWasIn` (the person's room before), as
    /// the refresh would have published them.
    public func republishResumed(_ id: BeaconID, personWasIn: String?, now: Double) throws -> [OutboundMessage] {
        guard let d = engine.decision(for: id), !isHandedOver(d) else { return [] }
        var rooms: Set<String> = personWasIn.map { [$0] } ?? []
        let out = try republishWithPerson(id, touching: &rooms)
        return try out + rooms.sorted().map { try publisher.occupancy($0, now: now) }
    }

    /// A beacon's retained messages and its person's; the rooms whose occupancy they bear on
    /// (the beacon's, its person's) are added to `rooms`.
    private func republishWithPerson(_ id: BeaconID, touching rooms: inout Set<String>) throws -> [OutboundMessage] {
        for room in [engine.decision(for: id)?.room, personRoom(owning: id)] { if let room { rooms.insert(room) } }
        return try republish(id) + publisher.personMessages(owning: id)
    }

    /// The room the person `id` belongs to is placed in (nil: nobody's beacon, or not placed).
    public func personRoom(owning id: BeaconID) -> String? {
        publisher.people.ownerOf[id].flatMap { publisher.people.current[$0]?.room }
    }

    /// What a take-over publishes of the moves this instance decided while it stood by: `peer`
    /// is the room the active instance last published for each beacon (`PeerPresence`). Each
    /// beacon whose room differs gets its leave and enter events, its presence, its person, and
    /// the occupancy of both rooms, at once: without them a beacon that moved after the active
    /// instance died would change room with no event.
    public func takeOverMessages(after peer: [BeaconID: String?], now: Double) throws -> [OutboundMessage] {
        var out: [OutboundMessage] = []
        var rooms: Set<String> = []
        for (id, theirs) in peer.sorted(by: { $0.key < $1.key }) {
            guard case .some(let ours) = publisher.publishedRoom(of: id), ours != theirs else { continue }
            let decision = engine.decision(for: id)
            if let decision, isHandedOver(decision) { continue }
            out += try publisher.moveEvents(id, name: decision?.name ?? knownBeacons[id]?.name, from: theirs, to: ours, now: now)
            for room in [theirs, ours] { if let room { rooms.insert(room) } }
            out += try republishWithPerson(id, touching: &rooms)
        }
        return try out + rooms.sorted().map { try publisher.occupancy($0, now: now) }
    }

    /// Nodes offline by their status (and that sent no reading since), or quiet past their
    /// heartbeat (`liveness`).
    public var offline: Set<String> { Set(offlineNodes.keys).union(liveness.quiet.keys) }

    /// Every decision in force, with the names the site gives: what `refresh` republishes (the
    /// dashboard's beacons, `/metrics`' occupancy and away count). A beacon handed over to another
    /// partition is not among them: it is not away, only not here.
    public func currentDecisions() -> [PresenceDecision] {
        publishedDecisions().filter { !isHandedOver($0) }.map { d in
            var d = d
            if d.name == nil { d.name = knownBeacons[d.id]?.name }
            return d
        }
    }

    /// Every decision in force; an awaited beacon the engine forgot keeps its last, stamped `now`
    /// when given (a refresh's).
    func publishedDecisions(now: Double? = nil) -> [PresenceDecision] {
        var ids = Set(knownBeacons.keys)
        ids.formUnion(announcedBeacons)
        ids.formUnion(forgottenAwaited.keys)
        return ids.sorted().compactMap { id in
            engine.decision(for: id) ?? forgottenAwaited[id].map { d in
                var d = d
                d.ts = now ?? d.ts
                return d
            }
        }
    }

    /// Tidies up after the beacons the engine dropped: forgets what was published of them and,
    /// for evicted strangers (never placed in a room: a flood of random ids), clears the
    /// retained topics and discovery configs they left, so the broker does not keep them.
    private mutating func tidyDropped(now: Double) throws -> [OutboundMessage] {
        let dropped = engine.takeDropped()
        guard !dropped.isEmpty else { return [] }
        var out: [OutboundMessage] = []
        for d in dropped {
            // Evicted from a full table while still shown in a room (silent a few seconds): it
            // is not followed any more, so it goes away (`reason: evicted`); left as it was, its
            // presence, its room's occupancy and its person would say it is there until it is
            // heard again. One another partition has leaves this partition's room only.
            if d.reason == .evictedSilent, case .some(.some) = publisher.publishedRoom(of: d.id) {
                let away = Self.away(d.id, name: knownBeacons[d.id]?.name ?? d.name, reason: Self.evictedReason, since: now, now: now,
                                     lastSeen: d.lastSeen)
                out += try publisher.publish([away], now: now, handedOver: claims[d.id] == nil ? [] : [d.id])
            }
            if droppedThisRun.count < Self.maximumDroppedThisRun { droppedThisRun.insert(d.id) }
            // A forgotten beacon, or one evicted silent, leaves its presence and its device on the
            // broker: it stays announced, so the clean-up after a start (this run's, or the next
            // one's, which resumes and then forgets it) and a standby's take-over keep its
            // device, up to a bound. An evicted stranger's go.
            let announced = announcedBeacons.contains(d.id)
            if d.reason == .evictedStranger || announcedBeacons.count > Self.maximumAnnouncedBeacons { announcedBeacons.remove(d.id) }
            let published = publisher.forget(d.id)
            presenceStats.forget(d.id)
            // Another partition's retained presence is its own to clear.
            guard claims.removeValue(forKey: d.id) == nil else { continue }
            // Not under `partition:`: another partition may have placed the beacon since.
            if d.reason == .forgotten, !isPartition, knownBeacons[d.id] != nil || peoplesBeacons.contains(d.id), let last = d.decision {
                forgottenAwaited[d.id] = last
            }
            guard d.reason == .evictedStranger, knownBeacons[d.id] == nil else { continue }
            evictedBeacons &+= 1
            let clears = published ? publisher.clearRetained(d.id) : []
            if announced, ownedBeacons[d.id] == nil, let discovery {
                out += try discovery.beaconRemovals(id: d.id)
                out += clearAfterEntitiesGo(clears, now: now)
            } else {
                out += clears
            }
        }
        return out
    }

    /// The presence reason of a beacon evicted from a full table while it was shown in a room.
    public static var evictedReason: String { "evicted" }

    /// Away decisions for the listed beacons nothing is known of: not heard in this run, no
    /// retained presence. Their Home Assistant entities follow the presence topic's availability
    /// too, and would read unavailable while it holds nothing; away is what the nodes say, once
    /// they have listened for the away timeout since decisions are current (`neverHeardDue`: from
    /// the last listed node heard from). Before any node is heard (the Pis still booting after a
    /// power cut, while the broker's host is up), nothing says anyone left. Nil until then;
    /// published once. Not under `partition:`: another partition may have the beacon. Nor for a
    /// beacon that sleeps when still: it may lie where it was put down, saying nothing.
    public mutating func awayForNeverHeard(now: Double) throws -> [OutboundMessage]? {
        guard let due = neverHeardDue, now >= due else { return nil }
        guard !isPartition else { return [] }
        // A tag that sleeps when still may lie where it was last put down, saying nothing: not
        // knowing where it is is not its being away (its entities read unavailable until it moves).
        let ids = Set(awaitedBeacons.filter { !$0.sleepsWhenStill }.map(\.id)).subtracting(knownThisRun)
        neverHeard = (now, ids)
        knownThisRun = []
        return try publisher.publish(neverHeardDecisions(now: now), now: now)
    }

    /// When the listed beacons nothing is known of may be published away; nil while no node
    /// has been heard. The nodes must have listened for the away timeout: where the site lists
    /// its nodes, from when the last of them was heard listening (or said it is offline), since
    /// after a power cut the Pis come up one by one (a bedroom's, a minute after the hall's, has
    /// not yet heard whoever sleeps there); a listed node not heard from within
    /// `FirstNodeWait.patience` of listening after the first (a Pi that is down) is waited for no
    /// longer.
    public var neverHeardDue: Double? {
        guard let first = firstNodeHeardAt, let wait = nodeWait else { return nil }
        let listening = site.nodes.isEmpty ? first : min(everyNodeHeardFromAt ?? .infinity, wait.reaches(FirstNodeWait.patience))
        return max(decisionsHeldUntil, listening) + awayTimeout
    }

    /// The listed nodes not heard from (listening, or saying they are offline) within
    /// `FirstNodeWait.patience` of listening after the first node heard: a Pi that is down, or
    /// whose agent goes by another name than the config's. Nil until the patience is over, and
    /// where every listed node was heard from.
    public func nodesNotHeard(now: Double) -> [String]? {
        guard everyNodeHeardFromAt == nil, !site.nodes.isEmpty, let wait = nodeWait,
              wait.listened(at: now) > FirstNodeWait.patience else { return nil }
        return site.nodes.map(\.name).filter { !nodesHeardFrom.contains($0) }.sorted()
    }

    /// A node heard listening (a reading, a heartbeat): the first of this run, and one the never
    /// heard wait for no more.
    private mutating func heardListening(_ node: String, now: Double) {
        if firstNodeHeardAt == nil {
            firstNodeHeardAt = now
            // Heard in the backlog read after a reconnect: the wait starts once hearing is back.
            nodeWait = ListeningClock(from: now, listening: decisionsHeldUntil.isFinite)
        }
        heardFrom(node, now: now)
    }

    /// A listed node heard listening, or said offline (it hears nothing, and says so): the never
    /// heard wait for it no more, and once every listed node has been, for none.
    private mutating func heardFrom(_ node: String, now: Double) {
        // Checked first: this runs at every reading, and past the patience nothing waits any more.
        guard everyNodeHeardFromAt == nil, !site.nodes.isEmpty,
              nodeWait.map({ $0.listened(at: now) <= FirstNodeWait.patience }) ?? true,
              !nodesHeardFrom.contains(node), site.nodes.contains(where: { $0.name == node }) else { return }
        nodesHeardFrom.insert(node)
        if nodesHeardFrom.count == site.nodes.count { everyNodeHeardFromAt = now }
    }

    /// An away decision published by the aggregator itself (evicted, never heard).
    static func away(_ id: BeaconID, name: String?, reason: String, since: Double, now: Double, lastSeen: Double? = nil) -> PresenceDecision {
        var d = PresenceDecision(id: id, name: name, room: nil, floor: nil, distance: nil, confidence: 0, node: nil,
                                 since: since, lastSeen: lastSeen, evidence: [], ts: now)
        d.reason = reason
        return d
    }

    /// The away decisions of the beacons published as never heard that no node has heard yet
    /// (a reading takes a beacon off the list), refreshed with every other decision.
    private func neverHeardDecisions(now: Double) -> [PresenceDecision] {
        guard let neverHeard else { return [] }
        return awaitedBeacons.filter { neverHeard.ids.contains($0.id) }.map {
            Self.away($0.id, name: $0.name, reason: PresencePublisher.neverHeardReason, since: neverHeard.since, now: now)
        }
    }

    /// Strangers evicted at capacity so far (`tidyDropped`).
    public private(set) var evictedBeacons: UInt64 = 0

    private mutating func publishChanges(now: Double) throws -> [OutboundMessage] {
        markQuietNodes(now: now)
        var changed = engine.tick(now: now)
        let tidied = try tidyDropped(now: now) + (learning.labelsRunning ? try labelsTicked(now: now) : [])
        let placesPeople = !site.people.isEmpty
        if placesPeople { observeOwnedBeacons() }
        guard !changed.isEmpty else { return placesPeople ? tidied + (try publisher.updatePeople(now: now)) : tidied }
        for i in changed.indices where changed[i].name == nil {
            changed[i].name = knownBeacons[changed[i].id]?.name
        }
        var out = tidied
        for d in changed { out += try announce(d.id, name: d.name) }
        let handed = handedOver(changed)
        presenceStats.observe(changed, now: now, crossings: handed.union(handedBack(changed))) { engine.switchEvidenceSince(for: $0) }
        out += try publisher.publish(changed, now: now, handedOver: handed)
        return out
    }
}
