import RoomcastFusion
import RoomcastMQTT
import Shared
import RoomcastLogging

/// Owns the aggregator core (and the standby election) while the service
/// runs: inbound messages and timer ticks both pass through this actor.
/// Outputs are returned to the caller, which publishes them only while this
/// instance is active.
public actor AggregatorRuntime<Engine: PresenceEstimator & Sendable> {
    /// Read by the dashboard and metrics extension; changed only here.
    private(set) var core: AggregatorCore<Engine>
    private var election: LeaseElection?
    /// Under hot standby, while this instance stands by: what the active one last published of
    /// each beacon, for the events of the moves decided before the take-over.
    private var peerPresence: PeerPresence
    private let refreshInterval: Double
    private var nextRefresh: Double = 0
    private var discoveryOnBroker: Set<String> = []
    /// The components of our device configs as the broker kept them from before this run
    /// (retained copies): what the configs published now leave out is removed explicitly.
    private var componentsOnBroker: [String: [String: String]] = [:]
    /// The device of each of our entity-mode configs read back before the start (bounded with
    /// `discoveryOnBroker`): an entity now on another device is handed over at the start.
    private var entityDevicesOnBroker: [String: String] = [:]
    /// Components counted into `componentsOnBroker` since the last connection.
    private(set) var componentsReadBack = 0
    /// Components of device configs read back at most (retained topics come from the network).
    static var maximumComponentsReadBack: Int { 200_000 }
    /// Our discovery configs seen on the broker and remembered (at most `maximumDiscoveryOnBroker`).
    public var discoveryConfigsOnBroker: Int { discoveryOnBroker.count }
    /// The discovery configs no longer wanted were cleared (when active, a resume window after
    /// the connection: `reconcileFrom`).
    private var discoveryReconciled = false
    /// The connection the clean-up follows. The clean-up is done again after each reconnect
    /// (`brokerDisconnected`): what it sent once may have gone with the link, and the broker sends
    /// what it still holds again with the subscriptions (what did go out leaves nothing to do).
    private var reconcileFrom = 0.0
    /// Retained topics of rooms, people and beacons the config no longer has, found until the
    /// discovery clean-up and cleared once Home Assistant has removed their entities.
    private var leftovers: RetainedLeftovers
    private var leftoversCleared = false
    /// The subscriptions that read back the retained rooms and people; the service adds them.
    public nonisolated let leftoverFilters: [String]
    /// Home Assistant's status topic, read where an output is not retained (`AggregatorCore`).
    public nonisolated let homeAssistantStatusTopic: String?
    /// When Home Assistant's birth message was last answered.
    private var birthAnswered = -Double.infinity
    /// Seconds between two answers to Home Assistant's birth message at least.
    static var birthAnswerGap: Double { 10 }
    /// Start-up time, moved to the first broker connection: the retained state arrives only then.
    private var startedAt: Double
    private var connectedOnce = false
    /// Whether the nodes' messages reach this aggregator at all (`FirstNodeWait`).
    private var firstNode = FirstNodeWait()
    /// The listed nodes not heard within `FirstNodeWait.patience` of the first were named (once a run).
    private var unheardNodesSaid = false
    /// Of those named, the ones not heard yet: each is said when it is at last.
    private var unheardNodes: Set<String> = []
    /// `<prefix>/nodes/`: every node's topics.
    private let nodesPrefix: String
    /// Retained output read back within this window after start is resumed from.
    private let resumeWindow: Double
    private let rejectLog = RateLimitedLog(interval: 10)
    /// What the log last said of the nodes' liveness (`reportLiveness`): the nodes it said are
    /// quiet, and whether a change is still to be said.
    private var livenessLogged: (revision: UInt64, quiet: Set<String>, pending: Bool) = (0, [], false)
    private let livenessLog = RateLimitedLog(interval: 60)
    private let logger: Logger
    private var wasActive = false
    /// The start waits until then for Home Assistant to let go of removed devices (`removeGoneBeforeStart`).
    private var startAfter = -Double.infinity
    /// Became active, and every decision is to be republished once decisions are current.
    private var refreshPending = false
    private var resumeRefreshed = false
    /// The listed beacons nothing is known of were published away (`AggregatorCore.awayForNeverHeard`).
    private var neverHeardPublished = false
    private nonisolated let leaseTopicValue: String
    /// `<prefix>/presence/`: only topics starting so are parsed for the echo check.
    private let presencePrefix: String
    /// `<prefix>/aggregator/instances/`: every instance's liveness under hot standby.
    private let instancesPrefix: String
    private nonisolated let instanceTopicValue: String?
    /// Other instances whose liveness topic says online (their Last Will says offline).
    private var peersOnline: Set<String> = []
    private var announceInstance = false
    /// The learned rooms' state file.
    private var learned: LearnedRoomsPersistence
    /// The state file's rooms still held at the end of the start's resume window were resumed
    /// (`resumePlacements`).
    private var placementsSettled = false
    /// Dashboard snapshots built so far: each one's `seq`, in the order the actor built them.
    var dashboardSnapshots: UInt64 = 0
    /// Writes of the state file that failed (`/metrics`).
    public var learnedSaveFailures: UInt64 { learned.saveFailures }
    private let learnLog = RateLimitedLog(interval: 60)
    /// The receiver calibration last logged, and when.
    private var loggedCalibration: [ReceiverCalibrationReport.Node] = []
    private var calibrationLoggedAt = -Double.infinity
    /// The receiver calibration as last published (`refresh` publishes it again).
    private var reportedCalibration: [ReceiverCalibrationReport.Node]?

    /// Whether this instance hears the nodes through the broker.
    private enum Hearing: Equatable {
        case hearing
        /// No broker connection.
        case deaf
        /// Connected again, or awake again after a pause: the marker published to `syncTopic`
        /// has not come back, so the broker may still be delivering what it held for us (the
        /// retained state, the backlog, another instance's lease). Nothing is decided or taken
        /// until it has.
        case draining(marker: [UInt8], since: Double, sentAt: Double)
    }
    /// Deaf until the first connection (`brokerConnected`).
    private var hearing: Hearing = .deaf
    private var markers: UInt64 = 0
    /// While hearing: the marker sent to `syncTopic` and not yet back, and when it went. A
    /// stalled link or a frozen broker keeps the connection up, with nothing arriving, until the
    /// keep-alive gives up (about two `mqtt.keepalive` periods): without this the silence of every
    /// node would be read as every beacon leaving.
    private var heartbeat: (marker: [UInt8], sentAt: Double)?
    private var lastHeartbeatAt = -Double.infinity
    /// Whether a marker came back on this connection: only then does one that does not come back
    /// say the broker stopped answering (a broker or ACL may drop them all).
    private var markersComeBack = false
    /// When the heartbeat that did not come back was sent (for the log when the broker answers).
    private var stalledSince: Double?
    /// The latest inbound message of any kind: a broker that delivers anything has not stalled.
    private var lastInbound = -Double.infinity
    /// `wantsStatusGuard` when hearing was last lost, kept until hearing again.
    private var guardWhenHearingLost = false
    private nonisolated let syncTopicValue: String
    /// The latest `tick` or `handle`: a longer gap than `pauseThreshold` before the next one
    /// means this process did not run (SIGSTOP, a suspended VM, a starved machine).
    private var lastActivity = -Double.infinity
    /// The broker refused this instance's subscription to the lease topic on the current
    /// connection (`leaseSubscription(refused:)`): it cannot see another holder, so it stands by.
    private(set) var leaseUnreadable = false
    private let leaseLog = RateLimitedLog(interval: 60)
    /// The beacon table's evictions and refusals when its capacity was last reported, and when.
    private var capacityLogged: (evicted: UInt64, refused: UInt64) = (0, 0)
    private var capacityLoggedAt = -Double.infinity

    /// `learnedStore`: the learned-rooms state file, read here (a file that cannot be read is
    /// logged and left alone: this run learns without it and does not overwrite it).
    public init(core: AggregatorCore<Engine>, election: LeaseElection?, refreshInterval: Double, startedAt: Double,
                resumeWindow: Double = AggregatorCore<Engine>.resumeWindow, learnedStore: LearnedRoomsStore? = nil, logger: Logger) {
        self.core = core
        self.leftovers = RetainedLeftovers(site: core.wholeSite, topics: core.topics)
        self.leftoverFilters = leftovers.filters
        self.homeAssistantStatusTopic = core.homeAssistantStatusTopic
        self.core.lostHearing(at: startedAt)
        self.learned = LearnedRoomsPersistence(store: learnedStore, core: &self.core, log: learnLog, logger: logger)
        self.election = election
        self.peerPresence = PeerPresence(limit: core.engine.capacityUse?.limit ?? 100_000)
        self.leaseTopicValue = election?.topic ?? core.topics.aggregatorLease
        self.presencePrefix = core.topics.presencePrefix
        self.nodesPrefix = core.topics.nodesPrefix
        self.instancesPrefix = core.topics.aggregatorInstancesPrefix
        self.instanceTopicValue = election.map { core.topics.aggregatorInstance($0.me) }
        self.refreshInterval = refreshInterval
        self.startedAt = startedAt
        self.reconcileFrom = startedAt
        self.resumeWindow = resumeWindow
        self.logger = logger
        // Per process, not per instance name: two processes started with one name must not
        // take each other's marker for their own.
        let name = election.map(\.me).flatMap { TopicName.problem(with: $0) == nil ? $0 + "-" : nil } ?? ""
        self.syncTopicValue = core.topics.aggregatorSync(name + String(UInt64.random(in: 0...UInt64.max), radix: 36))
    }

    /// This process's drain-marker topic; the service subscribes to it.
    public nonisolated var syncTopic: String { syncTopicValue }

    /// A gap between two runs of this actor longer than this means the process was paused.
    public let pauseThreshold = DeafTime.pauseThreshold

    /// Seconds to wait for the drain marker before deciding again anyway (a broker or ACL
    /// that drops it must not stop the aggregator for good).
    public let drainTimeout: Double = 10

    /// Seconds between heartbeats while hearing (`heartbeat`): one a tick.
    public let heartbeatInterval: Double = 0.5
    /// A heartbeat not back after this long, with nothing else delivered since it was sent, means
    /// the broker stopped answering: decisions are held until it answers again. The check runs
    /// before the engine's tick, so the engine counts at most interval + timeout (2.5 s) of a
    /// stall as silence: less than the shortest it reads as a beacon leaving (4 s, docs/fusion.md).
    public let stallTimeout: Double = 2

    /// A `now` earlier than the latest run of this actor by more than this is the wall clock
    /// stepped back (an NTP correction, a clock set by hand): every caller reads the clock on
    /// the actor, so runs see it in order otherwise.
    public let clockStepTolerance: Double = 1

    /// Notices the wall clock stepped back since the last run of this actor: every time kept
    /// moves back by as much (`AggregatorCore.clockSteppedBack`), or deciding, the lease and
    /// the refresh would all wait until the clock caught up.
    private func noticeClockStep(now: Double) {
        guard lastActivity.isFinite, now.isFinite, lastActivity - now > clockStepTolerance else { return }
        let step = lastActivity - now
        logger.warning("the wall clock stepped back: every time kept moves back by as much", metadata: [
            "stepped_back_s": "\(Int(step.rounded()))"])
        core.clockSteppedBack(by: step)
        election?.clockSteppedBack(by: step)
        nextRefresh -= step
        startedAt -= step
        reconcileFrom -= step
        startAfter -= step
        learned.clockSteppedBack(by: step)
        calibrationLoggedAt -= step
        capacityLoggedAt -= step
        if case .draining(let marker, let since, let sentAt) = hearing {
            hearing = .draining(marker: marker, since: since - step, sentAt: sentAt - step)
        }
        heartbeat?.sentAt -= step
        lastHeartbeatAt -= step
        lastInbound -= step
        stalledSince = stalledSince.map { $0 - step }
        lastActivity = now
    }

    /// Notices a pause since the last run of this actor: everything the broker held for us
    /// meanwhile is old news, and another instance may have taken the lease.
    private func noticePause(now: Double) {
        noticeClockStep(now: now)
        defer { lastActivity = max(lastActivity, now) }
        // A stall of this process shorter than a pause (an fsync on an SD card, a clock stepped a
        // few seconds forward) can outlast a node's heartbeat: the quiet was ours, and counting it
        // would take nodes for missing at the first message handled after it. Runs come every half
        // second, and a loaded site's tick takes its share: a gap past two seconds is a stall, one
        // of a second or so is load, which must not keep quiet nodes from ever being noticed.
        if lastActivity.isFinite, now - lastActivity > NodeLiveness.quietAfter - NodeHeartbeat.interval {
            core.listening(since: now)
        }
        guard lastActivity.isFinite, now - lastActivity > pauseThreshold, hearing != .deaf else { return }
        let gap = now - lastActivity
        var metadata: Logger.Metadata = ["paused_s": "\(Int(gap.rounded()))"]
        noteGuardAsHearingIsLost()
        election?.nothingReadUntil(now)
        if standByIfLeaseLapsed(now: now) {
            metadata["lease"] = "expired while paused: standing by until the backlog is read"
        }
        logger.warning("this process did not run for a while: reading the broker's backlog before deciding", metadata: metadata)
        startDraining(now: now, deafSince: lastActivity)
    }

    /// After a time this instance could not renew its lease (a pause, a broker outage): when
    /// the lease ran out meanwhile, a standby may hold it now, and taking it back would be a
    /// second handover (or split the site in two). Stands by until the backlog shows who holds
    /// it; true when it did.
    private func standByIfLeaseLapsed(now: Double) -> Bool {
        guard let election, election.isActive, election.holdsUnexpiredLease(now: now) != true else { return false }
        self.election?.stepDown()
        return true
    }

    /// Keeps the status guard as it is now for the time this instance will not hear; called
    /// before anything steps the instance down, which would disarm it.
    private func noteGuardAsHearingIsLost() {
        if hearing == .hearing { guardWhenHearingLost = wantsStatusGuard }
    }

    /// Every caller notes the guard first (`noteGuardAsHearingIsLost`). `deafSince`: when this
    /// instance stopped hearing, where that was before `now` (a pause, a stalled link).
    private func startDraining(now: Double, deafSince: Double? = nil) {
        core.lostHearing(at: min(now, deafSince ?? now))
        heartbeat = nil
        hearing = .draining(marker: newMarker(), since: now, sentAt: -.infinity)
    }

    /// A token for `syncTopic` no earlier marker of this process carries.
    private func newMarker() -> [UInt8] {
        markers &+= 1
        return Array("\(markers)-\(UInt64.random(in: 0...UInt64.max))".utf8)
    }

    /// The drain marker to (re)send at `now`, and the end of a drain that took too long.
    private func drainStep(now: Double) -> [OutboundMessage] {
        guard case .draining(let marker, let since, let sentAt) = hearing else { return [] }
        // Once a marker came back on this connection, the broker delivers them: this one is
        // late because the broker stalled, not dropped, and is waited for (sent again every 2 s,
        // in case the inbound queue dropped it). A link that stays dead ends with the keep-alive.
        if !markersComeBack, now - since > drainTimeout {
            logger.warning("the drain marker did not come back; deciding again without it", metadata: [
                "mqtt.topic": syncTopic, "waited_s": "\(Int((now - since).rounded()))",
                "hint": "the broker must let the aggregator publish and subscribe to \(core.topics.prefix)/aggregator/#"])
            finishDraining(now: now)
            return []
        }
        guard now - sentAt >= 2 else { return [] }
        hearing = .draining(marker: marker, since: since, sentAt: now)
        return [OutboundMessage(topic: syncTopic, payload: marker, retain: false, qos: 1)]
    }

    private func finishDraining(now: Double) {
        hearing = .hearing
        core.regainedHearing(at: now, grace: reconnectGrace)
        lastHeartbeatAt = now
        if let since = stalledSince {
            stalledSince = nil
            // Nothing was read while the broker stalled: a holder's renewals may still be on
            // their way, and a standby must not take its lapsed-looking lease at once.
            election?.nothingReadUntil(now)
            logger.notice("the broker answers again: deciding after the backlog", metadata: ["stalled_s": "\(Int((now - since).rounded()))"])
        }
    }

    /// While hearing: sends the next heartbeat when due, and notices one that did not come back
    /// in time. A stall is handled as a reconnect is: decisions held, the lease given up until
    /// the backlog shows who holds it (a standby may take it meanwhile), the backlog read.
    private func heartbeatStep(now: Double) -> [OutboundMessage] {
        guard hearing == .hearing else { return [] }
        if let outstanding = heartbeat {
            guard now - outstanding.sentAt > stallTimeout else { return [] }
            // Something else came since it went: the broker delivers, and this one was lost.
            if lastInbound >= outstanding.sentAt {
                heartbeat = nil
                return []
            }
            // No marker came back on this connection (a broker or ACL that drops them): nothing to tell by.
            guard markersComeBack else { return [] }
            var metadata: Logger.Metadata = ["waited_s": "\(Int((now - outstanding.sentAt).rounded()))"]
            noteGuardAsHearingIsLost()
            if let election, election.isActive {
                self.election?.stepDown()
                metadata["lease"] = "standing by until the backlog shows who holds it"
            }
            logger.warning("the broker stopped answering (a stalled link or a frozen broker): holding decisions until it does",
                           metadata: metadata)
            stalledSince = outstanding.sentAt
            startDraining(now: now, deafSince: outstanding.sentAt)
            return drainStep(now: now)
        }
        guard now - lastHeartbeatAt >= heartbeatInterval else { return [] }
        let marker = newMarker()
        heartbeat = (marker, now)
        lastHeartbeatAt = now
        return [OutboundMessage(topic: syncTopic, payload: marker, retain: false, qos: 1)]
    }

    /// An inbound MQTT message at `now`; returns what to publish. `retained`: the broker's
    /// retain flag (nil when not known); presence counts during the resume window after the
    /// start, and later when retained.
    public func handle(topic: String, payload: [UInt8], now: Double, retained: Bool? = nil) -> [OutboundMessage] {
        noticePause(now: now)
        lastInbound = max(lastInbound, now)
        if topic == syncTopicValue {
            if case .draining(let marker, _, _) = hearing, payload == marker {
                markersComeBack = true
                finishDraining(now: now)
            } else if let h = heartbeat, payload == h.marker {
                markersComeBack = true
                heartbeat = nil
            }
            return []
        }
        if let status = core.homeAssistantStatusTopic, topic == status {
            // Home Assistant's birth message: it restarted, and lost what was not retained. A
            // retained `online` is no restart, only what the broker kept.
            // At most one answer per `birthAnswerGap`: any client the broker lets write the topic
            // could otherwise have every beacon's report sent again at each message.
            guard retained != true, payload == Array("online".utf8), isActive, wasActive, !core.decisionsHeld(at: now),
                  abs(now - birthAnswered) >= Self.birthAnswerGap else { return [] }
            birthAnswered = now
            do { return try core.outputsRefresh(now: now) } catch {
                logger.error("could not encode output", metadata: ["error": "\(error)"])
                return []
            }
        }
        if leftovers.isRoomOrPerson(topic) {
            if !leftoversCleared { leftovers.observe(topic: topic, payload: payload, retained: retained) }
            // What this site published of a person before the restart, read while resuming (the
            // refresh that ends it publishes what it keeps): when they are worked out in the same
            // room again, their `since` stays.
            if retained == true, !resumeRefreshed { _ = core.resumeRetainedPerson(topic: topic, payload: payload, now: now) }
            return []
        }
        if let discovery = core.discovery ?? core.discoveryToClear, discovery.isOurs(topic) {
            if payload.isEmpty || !discovery.isThisSites(payload) {
                discoveryOnBroker.remove(topic)
                componentsOnBroker[topic] = nil
                entityDevicesOnBroker[topic] = nil
            } else if discoveryOnBroker.count < Self.maximumDiscoveryOnBroker, topic.utf8.count <= Self.maximumDiscoveryTopicBytes {
                discoveryOnBroker.insert(topic)
                // Only what the broker kept: our own configs of this run echo back live.
                if retained == true, !discoveryReconciled, let components = discovery.deviceComponents(topic: topic, payload: payload),
                   componentsReadBack + components.count <= Self.maximumComponentsReadBack {
                    componentsReadBack += components.count
                    componentsOnBroker[topic] = components
                } else if retained == true, !wasActive, let device = discovery.entityDevice(topic: topic, payload: payload) {
                    entityDevicesOnBroker[topic] = device
                }
            }
            return []
        }
        if topic == leaseTopic {
            let clashed = election?.sameNameSeen ?? false
            let differed = election?.otherConfig
            let unreadable = election?.unreadableLeases ?? 0
            election?.observe(payload: payload, now: now)
            if let election, election.unreadableLeases != unreadable, rejectLog.admit("lease/unreadable", now: now).admit {
                logger.warning("read a lease this release cannot decode: this instance stands by while it is renewed", metadata: [
                    "mqtt.topic": topic,
                    "hint": "an instance of a newer release holds it (finish the upgrade), or a client writes the lease topic (restrict it)"])
            }
            if !clashed, let election, election.sameNameSeen {
                logger.error("another aggregator process runs under this instance's name: one of the two stands by", metadata: [
                    "instance": "\(election.me)",
                    "hint": "give each instance its own name (--instance, or a distinct host name)"])
            }
            // Said when it changes, and no more often than a lasting condition (`rejectLog`): any
            // client the broker lets write the lease topic could send one a message.
            if let other = election?.otherConfig, other.holder != differed?.holder || other.config != differed?.config,
               rejectLog.admit("lease/other-config/" + other.config.prefix(32), now: now).admit {
                logger.error("the active instance runs another config than this one: what is decided and shown in Home Assistant changes at every take-over", metadata: [
                    "instance": "\(other.holder)", "its_config": other.config, "this_config": election?.configDigest ?? "",
                    "hint": "give every instance the same config: stop the standby, change both configs, then start the active one and the standby"])
            }
            return []
        }
        let rule = core.retainRule(topic: topic, retained: retained, sinceStart: now - startedAt, resumeWindow: resumeWindow)
        if rule == .refuseRetainedLearn {
            if learnLog.admit("retained", now: now).admit {
                logger.warning("ignored a retained learn command; publish learn commands without the retain flag, and clear this one", metadata: [
                    "mqtt.topic": topic, "hint": Self.clearHint(topic)])
            }
            return []
        }
        defer { persistLearned(now: now) }
        if election != nil, topic.hasPrefix(instancesPrefix) {
            let name = String(topic.dropFirst(instancesPrefix.count))
            guard let me = election?.me, name != me, !name.isEmpty else { return [] }
            let online = payload == Array("online".utf8)
            if !online { peersOnline.remove(name) } else if peersOnline.count < Self.maximumPeers { peersOnline.insert(name) }
            election?.observeInstance(name, online: online)
            return []
        }
        if !firstNode.heard, retained != true, topic.hasPrefix(nodesPrefix)
            || core.acceptsESPresense && (topic.hasPrefix(Topics.Compatibility.espresenseDevicePrefix)
                                          || topic.hasPrefix(Topics.Compatibility.espresenseRoomPrefix)) {
            firstNode.nodeHeard()
        }
        var lateResume: BeaconID?
        if topic.hasPrefix(presencePrefix), case .presence(let id) = core.topics.parse(topic) {
            if !leftoversCleared { leftovers.observe(topic: topic, payload: payload, retained: retained) }
            if let election, !election.isActive {
                // Rooms come from the nodes heard where the intake takes any node.
                peerPresence.observe(id, payload: payload, otherPartitionsRooms: core.otherPartitionsRooms,
                                     rooms: core.intake.knownNodes == nil ? nil : core.publisher.listedRooms)
            }
            // Retained presence is what we published before a restart: resume from it, however
            // long the broker takes to deliver a big site's. Live presence right after the start
            // is the active peer's (a standby warming up); later it is our own output echoed
            // back: nothing to learn.
            if case .livePresence = rule {
                // Under `partition:` another partition's live presence says where a beacon
                // went that this one has lost (`AggregatorCore.otherPartitionsPresence`).
                return (try? core.otherPartitionsPresence(payload, id: id, now: now)) ?? []
            }
            if resumeRefreshed && core.engine.decision(for: id) == nil { lateResume = id }
        }
        do {
            let personWasIn = lateResume.flatMap(core.personRoom(owning:))
            var (messages, rejection) = try core.handle(topic: topic, payload: payload, now: now)
            if let why = core.takeLearnRefusal(), learnLog.admit("refused/" + why.prefix(80), now: now).admit {
                // Answered on the result topic, which a Home Assistant select or an automation does not read.
                logger.warning("learn command refused", metadata: ["reason": String(why.prefix(300)), "mqtt.topic": core.topics.aggregatorLearnResult])
            }
            // Resumed after the post-resume refresh went out: republish it, its person and its room's occupancy.
            if let lateResume { messages += try core.republishResumed(lateResume, personWasIn: personWasIn, now: now) }
            if let rejection {
                // A retained message of a node this aggregator does not have is named by its topic,
                // each one to clear.
                let leftover = rejection.reason == .unknownNode && retained == true
                let key = leftover ? "leftover/" + topic.prefix(256)
                    : rejection.node.map { rejection.reason.rawValue + "/" + $0.prefix(64) } ?? rejection.reason.rawValue
                // Another partition's node is heard by every partition, every second, and an ESPresense
                // node reports kinds of device all the time: counted only.
                let quiet = rejection.reason == .otherPartition || rejection.reason == .notOneDevice
                let (admit, suppressed) = quiet ? (false, 0) : rejectLog.admit(key, now: now)
                if admit && rejection.reason == .clockSkew {
                    logger.warning("node clock is off", metadata: ["detail": rejection.message, "suppressed": "\(suppressed)"])
                } else if admit && rejection.reason == .sharedID {
                    logger.warning("one beacon id, two transmitters", metadata: ["detail": rejection.message])
                } else if admit && rejection.reason == .nodeBackOnline {
                    logger.warning("node status follows its traffic", metadata: ["detail": rejection.message, "suppressed": "\(suppressed)"])
                } else if admit && leftover {
                    // Left on the broker by a node renamed or taken away: listing it would be wrong.
                    logger.warning("a retained message of a node this aggregator does not have: a node renamed or taken away?", metadata: [
                        "mqtt.topic": String(topic.prefix(200)), "detail": String(rejection.message.prefix(200)),
                        "hint": "if the node is gone, clear it: " + Self.clearHint(topic)])
                } else if admit {
                    logger.warning("rejected inbound message", metadata: [
                        "mqtt.topic": String(topic.prefix(200)), "reason": rejection.reason.rawValue,
                        "detail": String(rejection.message.prefix(200)), "suppressed": "\(suppressed)"])
                }
            }
            return messages
        } catch {
            logger.error("could not encode output", metadata: ["error": "\(error)"])
            return []
        }
    }

    /// Feeds every inbound message to the core on this actor until the stream ends or the
    /// task is cancelled; `send` gets what to publish and whether this instance is active.
    /// Iterating here rather than calling `handle` from another task saves two executor hops
    /// per reading, which is most of the service's cost beyond decoding and fusion.
    public func consume(_ messages: AsyncStream<MQTTMessage>, clock: any TimeSource,
                        send: @Sendable ([OutboundMessage], Bool) -> Void) async {
        for await m in messages {
            let out = handle(topic: m.topic, payload: m.payload, now: clock.now(), retained: m.retain)
            if !out.isEmpty { send(out, isActive) }
        }
    }

    /// The same for a client that delivers in batches: one hop onto this actor per batch.
    public func consume(_ batches: MQTTInboundBatches, clock: any TimeSource,
                        send: @Sendable ([OutboundMessage], Bool) -> Void) async {
        for await batch in batches {
            for m in batch {
                let out = handle(topic: m.topic, payload: m.payload, now: clock.now(), retained: m.retain)
                if !out.isEmpty { send(out, isActive) }
            }
        }
    }

    /// At the end of the start's resume window, the beacons the broker had no retained presence
    /// of (a broker that kept nothing across a power cut) and no node has heard yet resume from
    /// the rooms the state file says they were last published in; the refresh that follows
    /// publishes them again. A standby resumes them as well: its file is its own view, kept as
    /// the active instance's is.
    private func resumePlacements(now: Double) throws -> [OutboundMessage] {
        placementsSettled = true
        let messages = try core.resumePendingPlacements(now: now)
        if core.placementsResumed > 0 {
            logger.notice("the broker held no retained presence of some beacons: resumed in the rooms the state file says they were last published in", metadata: [
                "beacons": "\(core.placementsResumed)", "learn.state_file": learned.store?.path ?? "",
                "hint": "give the broker persistence (deploy/mosquitto/README.md) so that it keeps them itself"])
        }
        return messages
    }

    /// Every retained output republished: the decisions in force, and the receiver calibration
    /// last reported (a broker restarted without persistence forgot it, and an aggregator
    /// restarted after that would start every node from 0).
    private func refresh(now: Double) throws -> [OutboundMessage] {
        var out = try core.refresh(now: now)
        if let reportedCalibration { out.append(try core.calibrationReport(reportedCalibration, now: now)) }
        return out
    }

    /// Logs and publishes (retained) what fusion learned about the receivers: at once when
    /// nodes start (or stop) being calibrated from the nodes' own beacons, otherwise at most
    /// every 10 minutes when an offset moved by 1 dB or more. Users see which Pi reads high
    /// or low.
    private func reportCalibration(now: Double) throws -> [OutboundMessage] {
        guard let engine = core.engine as? any CalibratingEstimator else { return [] }
        let current = engine.receiverCalibration
        let sourcesChanged = current.map(\.source) != loggedCalibration.map(\.source)
        let moved = current.count != loggedCalibration.count
            || zip(current, loggedCalibration).contains { abs($0.offsetDb - $1.offsetDb) >= 1 }
        guard sourcesChanged || (moved && now - calibrationLoggedAt >= 600) else { return [] }
        guard current.contains(where: { $0.source == .nodeBeacons || abs($0.offsetDb) >= 0.05 }) else { return [] }
        loggedCalibration = current
        calibrationLoggedAt = now
        let rounded = current.map { c in
            ReceiverCalibrationReport.Node(node: c.node, offsetDb: (c.offsetDb * 10).rounded() / 10, source: c.source)
        }
        let summary = rounded.map { c in
            "\(c.node) \(c.offsetDb >= 0 ? "+" : "")\(c.offsetDb) dB" + (c.source == .nodeBeacons ? " (node beacons)" : "")
        }.joined(separator: ", ")
        logger.info("receiver calibration", metadata: ["offsets": "\(summary)"])
        reportedCalibration = rounded
        return [try core.calibrationReport(rounded, now: now)]
    }

    /// Says, at most once a minute, that the beacon table is full and what it costs: a flood of
    /// new ids (or a site bigger than `max_beacons`) must not go unnoticed.
    private func reportCapacity(now: Double) {
        guard now - capacityLoggedAt >= 60, let use = core.engine.capacityUse,
              use.evicted > capacityLogged.evicted || use.refused > capacityLogged.refused else { return }
        var metadata: Logger.Metadata = [
            "beacons.tracked": "\(use.tracked)", "fusion.max_beacons": "\(use.limit)",
            "beacons.evicted": "\(use.evicted - capacityLogged.evicted)", "beacons.refused": "\(use.refused - capacityLogged.refused)",
        ]
        if let node = use.mostEvictedNode { metadata["node"] = node; metadata["node.evicted_total"] = "\(use.mostEvictedCount)" }
        logger.warning("beacon table full: newcomers never placed in a room are evicted, the busiest node's first", metadata: metadata)
        capacityLogged = (use.evicted, use.refused)
        capacityLoggedAt = now
    }

    /// The timer's tick at the time `clock` gives when this actor runs it (read before the hop,
    /// a tick held up behind a long batch would run with a time older than the batch's), its
    /// output handed to `send` on this actor, as `consume` hands over what inbound messages
    /// cause: queued from outside, it could follow output decided after it (a label's progress
    /// after its cancel, an older decision after a newer one). Returns that time.
    public func tick(clock: any TimeSource, send: @Sendable ([OutboundMessage], Bool) -> Void) -> Double {
        let now = clock.now()
        send(tick(now: now), isActive)
        return now
    }

    /// Says which nodes stayed quiet for the away timeout (by when a beacon only they hear would
    /// otherwise have gone away) or were heard again after that
    /// (`NodeLiveness`): each node's change once, each node's lines limited on their own (a node
    /// on a link that stalls now and then would flap); a change held back is said once its
    /// node's limit allows, if it still holds. One that left the quiet by its status `offline`
    /// was not heard again: its status says so. A shorter quiet (Wi-Fi power saving, a roam) is
    /// handled by fusion all the same, and changes nothing shown: it is not logged.
    private func reportLiveness(now: Double) {
        guard core.livenessRevision != livenessLogged.revision || livenessLogged.pending
                || core.liveness.quiet.count > livenessLogged.quiet.count else { return }
        let offline = core.offline
        let quiet = Set(core.liveness.quiet.keys)
        let long = Set(core.liveness.quiet.filter { now - $0.value >= core.awayTimeout }.keys)
        let gone = long.subtracting(livenessLogged.quiet).sorted()
        let back = livenessLogged.quiet.subtracting(quiet).sorted().filter { !offline.contains($0) }
        livenessLogged.quiet.subtract(livenessLogged.quiet.subtracting(quiet).filter { offline.contains($0) })
        let goneSaid = gone.filter { livenessLog.admit("quiet/" + $0.prefix(64), now: now).admit }
        let backSaid = back.filter { livenessLog.admit("back/" + $0.prefix(64), now: now).admit }
        livenessLogged.quiet.formUnion(goneSaid)
        livenessLogged.quiet.subtract(backSaid)
        livenessLogged.revision = core.livenessRevision
        livenessLogged.pending = goneSaid.count < gone.count || backSaid.count < back.count
        if !goneSaid.isEmpty {
            logger.warning("nodes quiet: no heartbeat or reading for \(Int(core.awayTimeout)) s (the away timeout); the beacons only they hear are held where they were until they are heard again",
                           metadata: ["nodes": "\(goneSaid.prefix(20).joined(separator: ","))", "count": "\(goneSaid.count)"])
        }
        if !backSaid.isEmpty {
            logger.notice("nodes heard again", metadata: ["nodes": "\(backSaid.prefix(20).joined(separator: ","))", "count": "\(backSaid.count)"])
        }
    }

    /// No node heard for `FirstNodeWait.patience` since connecting.
    var firstNodeOverdue: Bool { firstNode.overdue }

    /// Whether the broker refused the lease subscription on the current connection (the
    /// service asks the client before each tick): a hot-standby instance then never takes the lease.
    public func leaseSubscription(refused: Bool) {
        leaseUnreadable = refused
    }

    /// The command that clears the retained message of `topic`, to copy from the log; where the
    /// log would escape the topic's characters (`ShellWord.quotedForLog`), what to type instead.
    static func clearHint(_ topic: String) -> String {
        ShellWord.quotedForLog(topic).map { "mosquitto_pub -r -n -t \($0)" }
            ?? "mosquitto_pub -r -n -t with the topic of mqtt.topic, typed rather than pasted (it holds a character the log escapes)"
    }

    /// Says when no node has been heard since connecting (`FirstNodeWait`), and when one is at last.
    private func reportFirstNode(now: Double) {
        switch firstNode.step(now: now, listening: hearing == .hearing) {
        case .noneHeard(let listened):
            let topics = [core.topics.allNodeBeacons, core.topics.allNodeStatus, core.topics.allNodeHeartbeats]
                + (core.acceptsESPresense ? ESPresenseInput.filters : [])
            logger.error("no node heard since connecting: nothing can be placed", metadata: [
                "listened_s": "\(Int(listened.rounded()))", "mqtt.topics": topics.joined(separator: " "),
                "hint": "check that the edge agents are on and use this broker and topic_prefix '\(core.topics.prefix)', and that the broker lets this aggregator's user read these topics (mosquitto's acl_file grants a subscription it then delivers nothing to)"])
        case .heardAtLast:
            logger.notice("a node is heard at last")
        case nil:
            break
        }
        if !unheardNodesSaid, let unheard = core.nodesNotHeard(now: now) {
            unheardNodesSaid = true
            unheardNodes = Set(unheard)
            if !unheard.isEmpty {
                logger.warning("listed nodes not heard since the start: no reading, heartbeat or offline status from them since the first node was; the rooms only they cover are decided without them", metadata: [
                    "nodes": "\(unheard.prefix(20).joined(separator: ","))", "count": "\(unheard.count)",
                    "waited_s": "\(Int(FirstNodeWait.patience))",
                    "hint": "check that each one's edge-agent runs on this broker, and that its node.name is the name under nodes: here (another name's readings are refused as unknown_node); an ESPresense node says nothing while it hears nothing"])
            }
        }
        // Looked up once a tick, not at every message: a Pi that stays down would cost each
        // reading a lookup for good.
        if !unheardNodes.isEmpty {
            let heard = unheardNodes.filter { core.nodeActivity.nodes[$0] != nil || core.liveness.hasHeard($0) }
            for node in heard.sorted() {
                unheardNodes.remove(node)
                logger.notice("a listed node not heard since the start is heard at last", metadata: ["node": "\(node)"])
            }
        }
    }

    /// Timer: fusion ticks, lease renewal, periodic refresh, discovery clean-up.
    public func tick(now: Double) -> [OutboundMessage] {
        noticePause(now: now)
        defer { persistLearned(now: now); reportLiveness(now: now); reportFirstNode(now: now) }
        reportCapacity(now: now)
        let activeBefore = isActive
        var out: [OutboundMessage] = []
        do {
            out += heartbeatStep(now: now)
            out += try core.advance(to: now)
            out += drainStep(now: now)
            // Deaf or draining: nothing is known to be current, so nothing is announced,
            // refreshed or taken; the lease is neither renewed nor grabbed.
            guard hearing == .hearing else { return out }
            // Our own lease ran out unrenewed without a pause long enough to notice (a stall
            // shorter than `pauseThreshold` under a short lease): a standby may hold it now, its
            // lease not yet read. Renewing first would make two holders and a second handover.
            if election?.holdsUnexpiredLease(now: now) == false {
                noteGuardAsHearingIsLost()
                election?.stepDown()
                logger.warning("this instance's lease ran out before it was renewed: reading the broker's backlog before deciding")
                startDraining(now: now)
                return out
            }
            if announceInstance, let instanceTopic {
                announceInstance = false
                out.append(OutboundMessage(topic: instanceTopic, text: "online", retain: true, qos: 1))
            }
            if leaseUnreadable, let holding = election?.isActive {
                // Taking or keeping the lease blind would make two active instances as soon as
                // another holds it: both publishing, each undoing the other's retained state.
                // The election still ticks (its start-up grace runs); a lease it took or renewed
                // is given up unpublished, and that is when it is said. (A refusal is known before
                // the connection is ready, and each connection stands an active instance down
                // first: `holding` is a guard, not a path the service takes.)
                let wouldHold = election?.tick(now: now) != nil || holding
                if wouldHold { election?.stepDown() }
                let (admit, suppressed) = wouldHold ? leaseLog.admit("unreadable", now: now) : (false, 0)
                if admit {
                    var metadata: Logger.Metadata = [
                        "mqtt.topic": leaseTopicValue,
                        "hint": "let this instance's broker user subscribe to \(core.topics.prefix)/aggregator/#"]
                    if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
                    logger.error("the broker refuses this instance the lease topic: standing by, as it cannot see whether another instance holds the lease", metadata: metadata)
                }
            } else if let lease = election?.tick(now: now) {
                out.append(lease)
            }
            // About to start: the devices the config alone says are gone are removed first, and the
            // start waits for Home Assistant to let go of their entity ids. Not at a take-over (the
            // lease taken in this tick): the start goes out at once with the moves decided while
            // standing by, and such devices go with the clean-up after it.
            let active = isActive && (wasActive || !activeBefore || !removeGoneBeforeStart(now: now, into: &out))
            // While decisions are held, what the engine has is not yet current: announcing
            // and refreshing waits until fresh readings have been decided on.
            let current = !core.decisionsHeld(at: now)
            if !active {
                wasActive = false
                refreshPending = false
            } else if !wasActive {
                // Just became active (start, reconnect, or took over): announce at once, and
                // republish every decision once they are current.
                wasActive = true
                startAfter = -.infinity
                // The moves since the active instance last published were decided standing by,
                // some in this tick before the lease was taken: the take-over's messages say each
                // once, against what subscribers were last told. This tick's events of those
                // beacons were against the standby's own view; of any other beacon they stand.
                if !activeBefore {
                    let told = peerPresence.rooms
                    out.removeAll { m in
                        m.topic == core.topics.events && (try? WireFormat.decode(RoomEvent.self, from: m.payload)).map { told[$0.id] != nil } == true
                    }
                }
                out += try core.takeOverMessages(after: peerPresence.rooms, now: now)
                peerPresence.removeAll()
                // The start's configs, built once: what the broker holds is handed over to them first.
                let configs = try core.startConfigs()
                if let discovery = core.discovery, !componentsOnBroker.isEmpty || !entityDevicesOnBroker.isEmpty {
                    let handover = discovery.handovers(components: componentsOnBroker, devices: entityDevicesOnBroker, wanted: configs)
                    out += handover.messages
                    componentsOnBroker = handover.components
                    entityDevicesOnBroker = [:]
                }
                out += try core.start(now: now, existing: discoveryOnBroker, configs: configs)
                refreshPending = true
            } else if !peerPresence.rooms.isEmpty {
                // Read while stepped down and back with no take-over (our own echoes): what
                // subscribers were told is what this instance publishes.
                peerPresence.removeAll()
            }
            if !placementsSettled, now - startedAt > resumeWindow, current {
                out += try resumePlacements(now: now)
            }
            if active && current && refreshPending {
                refreshPending = false
                out += try refresh(now: now)
                nextRefresh = now + refreshInterval
                // Past the resume window this refresh is the one after resuming too.
                if now - startedAt > resumeWindow { resumeRefreshed = true }
            }
            if active && current && now >= nextRefresh {
                nextRefresh = now + refreshInterval
                out += try refresh(now: now)
            }
            if active, current, !resumeRefreshed, now - startedAt > resumeWindow {
                // Our retained presence arrives after the first announcement; once it has
                // been resumed, publish the state in force (same rooms, fresh values)
                // rather than leave the old process's messages until the periodic refresh.
                resumeRefreshed = true
                nextRefresh = now + refreshInterval
                out += try refresh(now: now)
            }
            if active, current, resumeRefreshed, !neverHeardPublished, let away = try core.awayForNeverHeard(now: now) {
                neverHeardPublished = true
                out += away
            }
            out += try reportCalibration(now: now)
            if active, !discoveryReconciled, now - reconcileFrom > resumeWindow {
                discoveryReconciled = true
                if let discovery = core.discovery {
                    let wanted = try core.wantedDiscovery()
                    let removals = discovery.removals(existing: discoveryOnBroker, wanted: wanted)
                    if !removals.isEmpty { logRemovals(removals) }
                    out += removals
                    core.discoveryCleanedUp(remaining: discoveryOnBroker.subtracting(removals.map(\.topic)))
                    out += discovery.componentRemovals(onBroker: componentsOnBroker, wanted: wanted)
                    componentsOnBroker = [:]
                    componentsReadBack = 0
                } else if let clearing = core.discoveryToClear {
                    let removals = clearing.removals(existing: discoveryOnBroker, wanted: [])
                    if !removals.isEmpty {
                        logger.notice("Home Assistant discovery is off: removing this site's devices and entities", metadata: [
                            "configs": "\(removals.count)", "hint": "discovery.enabled: true brings them back"])
                    }
                    out += removals
                    componentsOnBroker = [:]
                    componentsReadBack = 0
                }
                // Timed from here, not from the start: a standby that takes over later cleans up then.
                leftoversCleared = true
                let leftover = leftovers.take()
                if !leftover.isEmpty {
                    logger.info("clearing the retained topics of rooms, people and beacons no longer in the config",
                                metadata: ["topics": "\(leftover.count)", "after_s": "\(Int(DeferredClears.delay))"])
                }
                out += core.clearAfterEntitiesGo(leftover, now: now)
            }
        } catch {
            logger.error("could not encode output", metadata: ["error": "\(error)"])
        }
        return out
    }

    /// Before the start: empties the configs on the broker of devices the config alone says are
    /// gone (`HomeAssistantDiscovery.goneFromTheConfig`: a beacon replaced under the same name, a
    /// person given an `id`, a room given another id), whose entity ids the new devices take.
    /// Returns whether the start waits, `HomeAssistantDiscovery.removalLead` from the removals.
    private func removeGoneBeforeStart(now: Double, into out: inout [OutboundMessage]) -> Bool {
        // Worked out once per start: it builds every device of the site, and the wait is ticks long.
        if now < startAfter { return true }
        if let discovery = core.discovery {
            let gone = discovery.goneFromTheConfig(onBroker: discoveryOnBroker, entityDevices: entityDevicesOnBroker,
                                                   site: core.wholeSite)
            if !gone.isEmpty {
                logRemovals(gone)
                out += gone
                for topic in gone.map(\.topic) {
                    discoveryOnBroker.remove(topic)
                    componentsOnBroker[topic] = nil
                    entityDevicesOnBroker[topic] = nil
                }
                startAfter = now + HomeAssistantDiscovery.removalLead
            }
        }
        return now < startAfter
    }

    /// Says by name which configs go: a person or room renamed in the config is a new one to
    /// Home Assistant, and the old one's entities go with their customisations.
    private func logRemovals(_ removals: [OutboundMessage]) {
        let shown = removals.prefix(10).map(\.topic).joined(separator: ", ")
        logger.notice("removing Home Assistant devices and entities no longer in the config", metadata: [
            "topics": removals.count > 10 ? shown + ", and \(removals.count - 10) more" : shown,
            "hint": "a person renamed keeps their entities when people[].id is set to the old id"])
    }

    private func persistLearned(now: Double, stopping: Bool = false) {
        // Checked here first: handing the core over copies it, and this runs at every message.
        guard learned.isDue(learnedRevision: core.learnedRevision, departuresRevision: core.departuresRevision,
                            placementsRevision: core.placementsRevision, now: now, stopping: stopping) else { return }
        learned.persist(core, now: now, stopping: stopping)
    }

    /// Writes what was learned and not yet saved (the service's graceful stop).
    public func persistLearnedAtStop(now: Double) {
        persistLearned(now: now, stopping: true)
    }

    /// What was learned (the dashboard, tests).
    public var learnedRooms: LearnedRooms { core.learnedRooms }

    /// The broker connection is (re)established at `now`: the next tick announces this
    /// instance again when it is active (online status, discovery, every retained output),
    /// since a broker without persistence forgets retained messages when it restarts.
    public func brokerConnected(now: Double) {
        if !connectedOnce {
            connectedOnce = true
            startedAt = now
        }
        reconcileFrom = now
        wasActive = false
        firstNode.connected()
        if let election, election.isActive {
            // The broker fired our Last Will when the link dropped: a standby may have taken the
            // lease, even one that has not yet run out. Taking it back by name would be a second
            // handover; the backlog read first shows who holds it (our own lease, or none, is
            // taken back at once).
            self.election?.stepDown()
            logger.warning("reconnected: standing by until the backlog shows who holds the lease")
        }
        // The retained state (the lease among it) arrives again with the subscriptions: read
        // it before deciding or electing.
        markersComeBack = false
        startDraining(now: now)
        lastActivity = max(lastActivity, now)
        // A broker without persistence forgot our liveness topic: announce it again.
        announceInstance = true
    }

    /// `brokerConnected(now:)` at the time `clock` gives when this actor runs it (as `tick(clock:)`).
    public func brokerConnected(clock: any TimeSource) { brokerConnected(now: clock.now()) }

    /// The broker connection is gone: hold decisions (nobody goes away because we went deaf).
    /// The peers are forgotten here, not at the reconnect: their retained liveness topics come
    /// again with the subscriptions, which the client acknowledges before it reports the
    /// connection, so a peer's `online` can be handled before `brokerConnected` runs (and
    /// forgotten there, arming the status guard while a standby lives). A peer that died while
    /// the broker, restarted without persistence, forgot its topic is not heard again.
    public func brokerDisconnected() {
        // The clean-up is done again after the reconnect, from the retained state it brings. That
        // arrives with the subscriptions, before the client reports the connection: read from now.
        discoveryReconciled = false
        leftoversCleared = false
        // Read afresh with the retained state that comes at the reconnect: counted across
        // connections, a standby (whose clean-up never runs) would use up the budget over weeks of
        // broker restarts on a big site, and record no configs after.
        componentsOnBroker = [:]
        componentsReadBack = 0
        noteGuardAsHearingIsLost()
        hearing = .deaf
        heartbeat = nil
        stalledSince = nil
        // Deaf since the last thing this process handled: the connection went within a tick of it.
        core.lostHearing(at: lastActivity.isFinite ? lastActivity : startedAt)
        peersOnline = []
    }

    /// Discovery configs on the broker remembered at most (for the clean-up after the start):
    /// anyone may publish under the discovery prefix. A site's own configs are a few per room,
    /// node and beacon.
    static var maximumDiscoveryOnBroker: Int { 100_000 }
    /// The longest discovery topic remembered: ours are built from names of at most 128 bytes,
    /// and topic length is what the table's memory grows with (a stranger's may be 64 KiB).
    static var maximumDiscoveryTopicBytes: Int { 512 }

    /// Peers remembered at most: liveness topics come from the network.
    static var maximumPeers: Int { 256 }

    /// Seconds after a (re)connect before absence counts again: a few report intervals.
    public let reconnectGrace = DeafTime.reconnectGrace

    /// The lease topic this instance elects on (the partition's own one under a partition).
    public nonisolated var leaseTopic: String { leaseTopicValue }

    /// True when hot standby is configured.
    public var standbyEnabled: Bool { election != nil }

    /// True when this instance publishes (always, without standby).
    public var isActive: Bool { election?.isActive ?? true }

    /// The decision in force for `id`.
    public func decision(for id: BeaconID) -> PresenceDecision? { core.engine.decision(for: id) }

    public var rejected: [InputIntake.Rejection: UInt64] { core.intake.rejected }
    public var accepted: UInt64 { core.intake.accepted }

    /// The nodes taken as offline now (their status, or quiet past their heartbeats).
    public var offlineNodes: Set<String> { core.offline }

    /// This instance's liveness topic under hot standby (nil without).
    public nonisolated var instanceTopic: String? { instanceTopicValue }

    /// True for messages that go out whether or not this instance is active (lease, liveness,
    /// the drain marker).
    public nonisolated func isControlTopic(_ topic: String) -> Bool {
        topic == leaseTopicValue || topic == instanceTopicValue || topic == syncTopicValue
    }

    /// Under hot standby, true while this instance should arm the status guard: a second
    /// connection whose Last Will sets `<prefix>/aggregator/status` offline. Only the active
    /// instance with no live peer arms it: while a standby lives, the active one's death must not
    /// mark the site offline (the standby takes over), and when the last one dies it must.
    public var wantsStatusGuard: Bool {
        guard let election else { return false }
        // Not hearing, the peers and the role are not known: the guard stays as it was when
        // hearing was lost. Armed then for a peer forgotten with the connection, its Last Will
        // would mark the site offline while the standby runs; disarmed by the step-down at a
        // reconnect, an instance alone dying meanwhile would leave the site online.
        if hearing != .hearing { return guardWhenHearingLost && peersOnline.isEmpty }
        return election.isActive && peersOnline.isEmpty
    }

    /// Live peers seen on their liveness topics.
    public var livePeers: Set<String> { peersOnline }

    /// Messages for a graceful stop: the offline status; under standby the lease release, this
    /// instance's liveness, and the site status only when no other instance is left.
    public func stopMessages() -> [OutboundMessage] {
        let offline = OutboundMessage(topic: core.topics.aggregatorStatus, text: "offline", retain: true, qos: 1)
        guard let election else { return [offline] }
        var out = election.isActive ? [election.releaseMessage] : []
        if let instanceTopic { out.append(OutboundMessage(topic: instanceTopic, text: "offline", retain: true, qos: 1)) }
        if peersOnline.isEmpty { out.append(offline) }
        return out
    }
}
