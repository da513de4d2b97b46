import RoomcastLogging
import TestSupport
import Shared
import Testing
@testable import RoomcastAggregator

/// Two elections exchanging lease messages the way the broker would (retained, to both).
@Suite struct LeaseElectionTests {
    /// `skew`: how far the standby's clock runs ahead of the holder's. A lease is timed on the
    /// clock of the one reading it: judged by its `expires`, a holder whose clock ran 20 s behind
    /// looked expired at every renewal, and both stayed active for good (2.5 s behind: the
    /// standby took over between renewals, again and again).
    @Test(arguments: [0.0, 2.5, 20, -20])
    func oneActiveStandbyTakesOverWhenActiveDiesAndNeverBoth(skew: Double) throws {
        let topics = Topics()
        var a = LeaseElection(me: "agg-a", topics: topics, duration: 6)
        var b = LeaseElection(me: "agg-b", topics: topics, duration: 6)
        var retained: [UInt8] = []
        var aAlive = true
        var activeAt: [Double: Set<String>] = [:]
        var t = 0.0
        while t <= 40 {
            // Broker delivers the retained lease to both once, as they subscribe, then each new one.
            if t == 0 {
                a.observe(payload: retained, now: t)
                b.observe(payload: retained, now: t + skew)
            }
            if aAlive, let m = a.tick(now: t) { retained = m.payload; b.observe(payload: retained, now: t + skew) }
            if let m = b.tick(now: t + skew) { retained = m.payload; if aAlive { a.observe(payload: retained, now: t) } }
            var active: Set<String> = []
            if aAlive && a.isActive { active.insert("a") }
            if b.isActive { active.insert("b") }
            activeAt[t] = active
            if t == 20 { aAlive = false }  // SIGKILL: no release, lease must expire
            t += 0.5
        }
        #expect(activeAt.values.allSatisfy { $0.count <= 1 }, "never two active at once")
        #expect(activeAt[10] == ["a"])
        let takeover = activeAt.filter { $0.value == ["b"] }.keys.min()!
        #expect(takeover > 20 && takeover <= 20 + 6 + 0.5, "standby takes over once the lease expires: \(takeover)")
    }

    /// Two processes with one instance name (Pis cloned from one image keep one host name, the
    /// default name): the second read the first's retained lease as its own, and from then each
    /// took the other's renewals for its own echo. Both stayed active for good, both publishing.
    /// A lease carries its process's token: one of the two stands by, knowing of the clash.
    @Test func twoProcessesOfOneNameAreNeverBothActive() throws {
        let topics = Topics()
        var a = LeaseElection(me: "raspberrypi", topics: topics, duration: 6)
        var b = LeaseElection(me: "raspberrypi", topics: topics, duration: 6)
        var t = 0.0
        var lease: [UInt8] = []
        a.observe(payload: lease, now: t)
        while t < 2 {
            if let m = a.tick(now: t) { lease = m.payload }
            t += 0.5
        }
        #expect(a.isActive)
        b.observe(payload: lease, now: t)  // the retained lease, as b subscribes
        var bothActive: [Double] = []
        while t < 30 {
            if let m = a.tick(now: t) { lease = m.payload; b.observe(payload: lease, now: t) }
            if let m = b.tick(now: t) { lease = m.payload; a.observe(payload: lease, now: t) }
            if a.isActive && b.isActive { bothActive.append(t) }
            t += 0.5
        }
        #expect(bothActive.count <= 2, "both active at \(bothActive)")
        #expect(a.isActive != b.isActive)
        #expect(a.sameNameSeen || b.sameNameSeen, "the clash is noticed, and logged")
    }

    @Test func releasedLeaseIsTakenAtOnce() {
        let topics = Topics()
        var a = LeaseElection(me: "a", topics: topics, duration: 30)
        var b = LeaseElection(me: "b", topics: topics, duration: 30)
        let lease = a.tick(now: 0, grace: 0)!
        b.observe(payload: lease.payload, now: 0)
        #expect(b.tick(now: 5) == nil)
        b.observe(payload: a.releaseMessage.payload, now: 6)  // a's Last Will
        #expect(b.tick(now: 6) != nil)
        #expect(b.isActive)
    }
}

/// Liveness topics under hot standby: the holder's will (instance offline) releases the lease,
/// and only the last live instance arms the site-status guard.
@Suite struct InstanceLivenessTests {
    @Test func theHoldersOfflineInstanceTopicReleasesTheLease() {
        let topics = Topics()
        var a = LeaseElection(me: "a", topics: topics, duration: 30)
        var b = LeaseElection(me: "b", topics: topics, duration: 30)
        let lease = a.tick(now: 0, grace: 0)!
        b.observe(payload: lease.payload, now: 0)
        #expect(b.tick(now: 5) == nil)
        b.observeInstance("c", online: false)  // not the holder: nothing changes
        #expect(b.tick(now: 6) == nil)
        b.observeInstance("a", online: false)
        #expect(b.tick(now: 7) != nil)
        #expect(b.isActive)
        #expect(topics.aggregatorInstance("b") == "roomcast/aggregator/instances/b")
    }

    /// `alpha`, connected, its backlog read, and active (alone).
    static func activeRuntime() async throws -> AggregatorRuntime<StrongestLatest> {
        let r = runtime("alpha")
        await r.brokerConnected(now: 0)
        let marker = try #require(await r.tick(now: 0).first { $0.topic == r.syncTopic })
        _ = await r.handle(topic: marker.topic, payload: marker.payload, now: 0)
        _ = await r.tick(now: 0)
        _ = await r.tick(now: 2)
        #expect(await r.isActive)
        return r
    }

    static func runtime(_ me: String) -> AggregatorRuntime<StrongestLatest> {
        let core = AggregatorCore(engine: StrongestLatest(roomOfNode: ["kitchen-pi": "kitchen"]), site: site, topics: Topics(),
                                  discovery: nil)
        return AggregatorRuntime(core: core, election: LeaseElection(me: me, topics: Topics(), duration: 6), refreshInterval: .infinity,
                                 startedAt: 0, logger: .silent)
    }

    @Test func onlyTheLastLiveInstanceArmsTheGuardAndMarksTheSiteOffline() async throws {
        let r = Self.runtime("alpha")
        await r.brokerConnected(now: 0)
        // The drain marker comes back through the broker: the retained state has been read.
        let marker = try #require(await r.tick(now: 0).first { $0.topic == r.syncTopic })
        _ = await r.handle(topic: marker.topic, payload: marker.payload, now: 0)
        let first = await r.tick(now: 0)
        #expect(first.contains { $0.topic == "roomcast/aggregator/instances/alpha" && $0.payload == Array("online".utf8) && $0.retain })
        _ = await r.tick(now: 2)  // past the start-up grace: takes the lease
        #expect(await r.isActive)
        #expect(await r.wantsStatusGuard, "active and alone")
        #expect(await r.stopMessages().contains { $0.topic == "roomcast/aggregator/status" && $0.payload == Array("offline".utf8) })

        _ = await r.handle(topic: "roomcast/aggregator/instances/beta", payload: Array("online".utf8), now: 3)
        #expect(await r.livePeers == ["beta"])
        #expect(await !r.wantsStatusGuard, "a standby lives: its take-over must not be preceded by an offline status")
        let stop = await r.stopMessages()
        #expect(!stop.contains { $0.topic == "roomcast/aggregator/status" })
        #expect(stop.contains { $0.topic == "roomcast/aggregator/instances/alpha" && $0.payload == Array("offline".utf8) })
        #expect(stop.contains { $0.topic == "roomcast/aggregator/lease" && $0.payload.isEmpty })

        _ = await r.handle(topic: "roomcast/aggregator/instances/beta", payload: Array("offline".utf8), now: 4)
        #expect(await r.wantsStatusGuard)
        #expect(r.isControlTopic("roomcast/aggregator/instances/alpha") && r.isControlTopic("roomcast/aggregator/lease"))
        #expect(!r.isControlTopic("roomcast/aggregator/status"))
    }
}

extension InstanceLivenessTests {
    /// An active instance cut off from the broker longer than its lease: a standby has taken
    /// over meanwhile. Back, it kept the active role and, its name being lower, took the lease
    /// back at once: a second handover. It now stands by until the backlog shows who holds the
    /// lease, and takes it again only once that holder's lease runs out.
    @Test func anActiveWhoseLeaseRanOutDuringAnOutageStandsByForTheNewHolder() async throws {
        let r = Self.runtime("alpha")
        func drain(at now: Double) async throws {
            let marker = try #require(await r.tick(now: now).first { $0.topic == r.syncTopic })
            _ = await r.handle(topic: marker.topic, payload: marker.payload, now: now)
        }
        await r.brokerConnected(now: 0)
        try await drain(at: 0)
        _ = await r.tick(now: 0)
        _ = await r.tick(now: 2)
        #expect(await r.isActive)
        await r.brokerDisconnected()
        await r.brokerConnected(now: 20)
        let lease = try WireFormat.encode(LeaseElection.Lease(holder: "beta", expires: 25))
        _ = await r.handle(topic: "roomcast/aggregator/lease", payload: lease, now: 20, retained: true)
        try await drain(at: 20)
        for t in stride(from: 20.5, through: 25, by: 0.5) { _ = await r.tickAnswered(now: t) }
        #expect(await !r.isActive, "beta holds the lease it took during the outage")
        // Beta gone without a word: once its lease has run out, alpha takes it again.
        for t in stride(from: 25.5, through: 27, by: 0.5) { _ = await r.tickAnswered(now: t) }
        #expect(await r.isActive)
    }

    /// A brief broker blip: the broker fired alpha's Last Will, beta took the lease, and alpha,
    /// back within its own lease, stayed active and took it back by name (two handovers in a few
    /// seconds, both publishing between them). Alpha now stands by until the backlog shows the
    /// holder; alone, it takes its lease back as soon as the backlog is read.
    @Test func anActiveBackFromABriefBlipLeavesTheLeaseToAStandbyThatTookIt() async throws {
        for alone in [false, true] {
            let r = Self.runtime("alpha")
            func drain(at now: Double) async throws -> [OutboundMessage] {
                let out = await r.tick(now: now)
                let marker = try #require(out.first { $0.topic == r.syncTopic })
                _ = await r.handle(topic: marker.topic, payload: marker.payload, now: now)
                return out
            }
            await r.brokerConnected(now: 0)
            _ = try await drain(at: 0)
            _ = await r.tick(now: 0)
            _ = await r.tick(now: 2)
            #expect(await r.isActive)
            await r.brokerDisconnected()
            await r.brokerConnected(now: 3)
            let holder = alone ? "alpha" : "beta"
            _ = await r.handle(topic: "roomcast/aggregator/lease", payload: try WireFormat.encode(LeaseElection.Lease(holder: holder, expires: 8)),
                               now: 3, retained: true)
            var leases = try await drain(at: 3).filter { $0.topic == "roomcast/aggregator/lease" }
            for t in stride(from: 3.5, through: 6, by: 0.5) { leases += await r.tickAnswered(now: t).filter { $0.topic == "roomcast/aggregator/lease" } }
            if alone {
                #expect(await r.isActive, "its own lease, nobody else's: taken back")
            } else {
                #expect(leases.isEmpty, "alpha took the lease back from beta")
                #expect(await !r.isActive)
            }
        }
    }

    /// A standby's wall clock stepped forward (NTP at a Pi's boot): the holder's lease, timed on
    /// this clock when last read, looked expired at once, and the standby took over from a live
    /// active. Nothing read meanwhile, the holder now has a full term from the step; a holder
    /// that is really gone is still replaced once that runs out.
    @Test func aStandbysClockSteppedForwardTakesNoLeaseFromALiveHolder() async throws {
        let r = Self.runtime("beta")
        func drain(at now: Double) async throws {
            let marker = try #require(await r.tick(now: now).first { $0.topic == r.syncTopic })
            _ = await r.handle(topic: marker.topic, payload: marker.payload, now: now)
        }
        func renewal(at now: Double, expires: Double) async throws {
            _ = await r.handle(topic: "roomcast/aggregator/lease",
                               payload: try WireFormat.encode(LeaseElection.Lease(holder: "alpha", expires: expires)), now: now)
        }
        await r.brokerConnected(now: 0)
        try await renewal(at: 0, expires: 6)
        try await drain(at: 0)
        for t in stride(from: 0.5, through: 4, by: 0.5) {
            if t == 2 || t == 4 { try await renewal(at: t, expires: t + 6) }
            _ = await r.tickAnswered(now: t)
        }
        #expect(await !r.isActive)
        // The step: 60 s on, and alpha renews on its own clock, as before.
        try await drain(at: 64)
        var taken: [Double] = []
        for t in stride(from: 64.5, through: 68, by: 0.5) {
            if t == 66 { try await renewal(at: t, expires: 12) }
            if await r.tickAnswered(now: t).contains(where: { $0.topic == "roomcast/aggregator/lease" }) { taken.append(t) }
        }
        #expect(taken.isEmpty, "alpha renews its lease: beta must not take it (took it at \(taken))")
        #expect(await !r.isActive)
        // Alpha gone without a word: beta takes over once the lease it read last runs out.
        for t in stride(from: 68.5, through: 73, by: 0.5) { _ = await r.tickAnswered(now: t) }
        #expect(await r.isActive)
    }

    /// An active instance stalled for less than `pauseThreshold` under a short lease: its lease
    /// ran out meanwhile and a standby may have taken it. It renewed at once, making two
    /// holders (and a second handover by name); it now stands by and reads the backlog first.
    @Test func anActiveWhoseLeaseRanOutInAShortStallRenewsNothingBeforeReadingTheBacklog() async throws {
        let core = AggregatorCore(engine: StrongestLatest(roomOfNode: ["kitchen-pi": "kitchen"]), site: site, topics: Topics(),
                                  discovery: nil)
        let r = AggregatorRuntime(core: core, election: LeaseElection(me: "alpha", topics: Topics(), duration: 3),
                                  refreshInterval: .infinity, startedAt: 0, logger: .silent)
        await r.brokerConnected(now: 0)
        let marker = try #require(await r.tick(now: 0).first { $0.topic == r.syncTopic })
        _ = await r.handle(topic: marker.topic, payload: marker.payload, now: 0)
        for t in stride(from: 0.5, through: 2, by: 0.5) { _ = await r.tickAnswered(now: t) }
        #expect(await r.isActive)
        // A 4.5-s stall: the lease (3 s) ran out, and beta took it; its lease is still queued.
        let after = await r.tick(now: 6.5)
        #expect(!after.contains { $0.topic == "roomcast/aggregator/lease" }, "renewed a lapsed lease: \(after.map(\.topic))")
        #expect(await !r.isActive)
        _ = await r.handle(topic: "roomcast/aggregator/lease",
                           payload: try WireFormat.encode(LeaseElection.Lease(holder: "beta", expires: 9)), now: 6.6)
        let again = try #require(await r.tick(now: 6.7).first { $0.topic == r.syncTopic })
        _ = await r.handle(topic: again.topic, payload: again.payload, now: 6.8)
        for t in stride(from: 7, through: 8, by: 0.5) { _ = await r.tick(now: t) }
        #expect(await !r.isActive, "beta holds the lease")
    }

    /// The status guard while the broker connection is down or being read again. It was armed
    /// the moment the connection dropped (the peers are forgotten with it), so a death then fired
    /// its will and marked the site offline while the standby ran; and disarmed at the reconnect
    /// (which stands the instance by), so an instance alone dying before the backlog was read
    /// left the site online. It stays as it was until hearing again.
    @Test func theStatusGuardStaysAsItWasWhileNotHearing() async throws {
        let withStandby = try await Self.activeRuntime()
        _ = await withStandby.handle(topic: "roomcast/aggregator/instances/beta", payload: Array("online".utf8), now: 3)
        #expect(await !withStandby.wantsStatusGuard)
        await withStandby.brokerDisconnected()
        #expect(await !withStandby.wantsStatusGuard, "a standby lived when the connection dropped")

        let alone = try await Self.activeRuntime()
        #expect(await alone.wantsStatusGuard)
        await alone.brokerDisconnected()
        await alone.brokerConnected(now: 10)
        #expect(await !alone.isActive, "stands by until the backlog is read")
        #expect(await alone.wantsStatusGuard, "alone when the connection dropped: the guard stays armed")
        // A peer heard in the backlog switches it off.
        _ = await alone.handle(topic: "roomcast/aggregator/instances/beta", payload: Array("online".utf8), now: 10, retained: true)
        #expect(await !alone.wantsStatusGuard)

        // A broker that stops answering (nothing delivered, heartbeats not back): the instance
        // stands by, its guard armed as it was; so after a pause.
        let stalled = try await Self.activeRuntime()
        for t in stride(from: 2.5, through: 8, by: 0.5) { _ = await stalled.tick(now: t) }
        #expect(await !stalled.isActive, "a stalled instance stands by")
        #expect(await stalled.wantsStatusGuard, "alone when the broker stalled: the guard stays armed")
        let paused = try await Self.activeRuntime()
        _ = await paused.tick(now: 20)
        #expect(await !paused.isActive, "its lease ran out while paused")
        #expect(await paused.wantsStatusGuard, "alone when paused: the guard stays armed")
    }

    /// On a reconnect the peers' retained liveness topics come with the subscriptions, before
    /// the client reports the connection: a standby's `online` handled first must still count
    /// once `brokerConnected` has run (it was forgotten there, and the guard armed while the
    /// standby lived, so the active one's death marked the site offline). Peers are forgotten
    /// when the connection is lost, so one the new session does not bring back is gone.
    @Test func aPeerHeardBeforeTheReconnectIsReportedStillCounts() async throws {
        let r = try await Self.activeRuntime()
        _ = await r.handle(topic: "roomcast/aggregator/instances/beta", payload: Array("online".utf8), now: 3, retained: false)
        #expect(await !r.wantsStatusGuard)

        await r.brokerDisconnected()
        #expect(await r.livePeers.isEmpty, "forgotten with the connection")
        _ = await r.handle(topic: "roomcast/aggregator/instances/beta", payload: Array("online".utf8), now: 10, retained: true)
        await r.brokerConnected(now: 10)
        #expect(await r.livePeers == ["beta"])

        await r.brokerDisconnected()
        await r.brokerConnected(now: 20)
        #expect(await r.livePeers.isEmpty, "a peer whose topic the new session did not bring back")
    }
}

extension InstanceLivenessTests {
    /// Instances of one site share a config: a `client_id` set there is made one per instance
    /// under hot standby (two connections with one id evict each other, each firing the other's
    /// will); without standby it is used as given.
    @Test func eachInstanceConnectsWithItsOwnClientID() {
        var config = AggregatorConfig(site: site)
        #expect(AggregatorCLI.clientID(config, instance: "a") == "roomcast-aggregator-a")
        config.mqtt.clientID = "site-aggregator"
        #expect(AggregatorCLI.clientID(config, instance: "a") == "site-aggregator")
        config.standby = .init(enabled: true)
        #expect(AggregatorCLI.clientID(config, instance: "a") == "site-aggregator-a")
        #expect(AggregatorCLI.clientID(config, instance: "b") == "site-aggregator-b")
    }

    /// `--instance` names a topic level (`.../instances/<name>`): one that cannot be is a usage
    /// error, before anything connects.
    @Test(arguments: ["a/b", "a+", "#", ""])
    func anInstanceNameThatCannotBeATopicLevelIsRefused(name: String) async throws {
        let dir = try LiveRig.workDirectory()
        let config = try Home.writeConfig(port: 1, in: dir)
        let run = try await BuiltExecutable.run("aggregator", ["run", "--config", config, "--instance", name], timeout: .seconds(30))
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("--instance"), "\(run.stderr)")
    }
}

/// What the aggregator remembers of topics anyone on the broker may publish is bounded.
@Suite struct BrokerTablesTests {
    @Test func discoveryConfigsOnTheBrokerAreRememberedUpToABound() async {
        let topics = Topics()
        let core = AggregatorCore(engine: StrongestLatest(roomOfNode: ["kitchen-pi": "kitchen"]), site: site, topics: topics,
                                  discovery: HomeAssistantDiscovery(topics: topics, site: site))
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 0, logger: .silent)
        let bound = AggregatorRuntime<StrongestLatest>.maximumDiscoveryOnBroker
        let config = Array(#"{"availability":[{"topic":"roomcast/aggregator/status"}]}"#.utf8)
        for i in 0..<(bound + 50) {
            _ = await runtime.handle(topic: "homeassistant/device/roomcast_stranger_\(i)/config", payload: config, now: 1, retained: true)
        }
        #expect(await runtime.discoveryConfigsOnBroker == bound)
        _ = await runtime.handle(topic: "homeassistant/device/roomcast_stranger_0/config", payload: [], now: 2, retained: true)
        #expect(await runtime.discoveryConfigsOnBroker == bound - 1, "a cleared config is forgotten")
    }

    /// A config of another site on the broker (another topic prefix, the same `roomcast_` ids)
    /// is not this aggregator's: its clean-up after the start cleared every such device.
    @Test func anotherSitesDiscoveryConfigsAreNotOurs() async {
        let topics = Topics()
        let core = AggregatorCore(engine: StrongestLatest(roomOfNode: ["kitchen-pi": "kitchen"]), site: site, topics: topics,
                                  discovery: HomeAssistantDiscovery(topics: topics, site: site))
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 0, logger: .silent)
        let siteB = Array(#"{"availability":[{"topic":"site-b/roomcast/aggregator/status"}]}"#.utf8)
        let ours = Array(#"{"availability":[{"topic":"roomcast/aggregator/status"}]}"#.utf8)
        _ = await runtime.handle(topic: "homeassistant/device/roomcast_room_attic/config", payload: siteB, now: 1, retained: true)
        #expect(await runtime.discoveryConfigsOnBroker == 0)
        _ = await runtime.handle(topic: "homeassistant/device/roomcast_room_cellar/config", payload: ours, now: 1, retained: true)
        #expect(await runtime.discoveryConfigsOnBroker == 1)
        // Site B takes over a topic this site had: no longer ours.
        _ = await runtime.handle(topic: "homeassistant/device/roomcast_room_cellar/config", payload: siteB, now: 2, retained: true)
        #expect(await runtime.discoveryConfigsOnBroker == 0)
    }
}

@Suite struct LeaseTrustTests {
    @Test func aLeaseClaimingToRunFarAheadIsTrustedForOneDurationOnly() throws {
        var standby = LeaseElection(me: "b", topics: Topics(), duration: 6)
        _ = standby.tick(now: 0)
        // A forged (or skewed) lease that claims to hold for a day.
        let forged = try WireFormat.encode(LeaseElection.Lease(holder: "mallory", expires: 86_400))
        standby.observe(payload: forged, now: 1)
        #expect(standby.tick(now: 5) == nil, "within one duration it is honoured")
        #expect(standby.tick(now: 7.5) != nil, "past one duration without a renewal, the standby takes over")
        #expect(standby.isActive)
    }

    /// A rolling upgrade of a hot-standby pair: the upgraded instance holds the lease in a form
    /// this release cannot decode. Taken as no lease, the standby went active a second after it
    /// started, and never stepped down: both published, each undoing the other's devices. It is
    /// held as any holder's: the standby stays off while it is renewed and takes over once it
    /// stops, and an active instance that reads one stands by.
    @Test func aLeaseThisReleaseCannotReadHoldsTheLeaseWhileItIsRenewed() throws {
        let newer = Array(#"{"expires":1e12,"holder":"agg-a","term":{"n":7},"v":2}"#.utf8)
        var standby = LeaseElection(me: "agg-b", topics: Topics(), duration: 6)
        _ = standby.tick(now: 0)
        for t in stride(from: 0.5, through: 30, by: 2) {
            standby.observe(payload: newer, now: t)
            #expect(standby.tick(now: t + 1) == nil, "renewed at \(t): held")
        }
        #expect(!standby.isActive)
        #expect(standby.unreadableLeases == 15)
        #expect(standby.tick(now: 37) != nil, "no renewal for a duration: taken over")

        var active = LeaseElection(me: "agg-a0", topics: Topics(), duration: 6)
        #expect(active.tick(now: 0, grace: 0) != nil && active.isActive)
        active.observe(payload: newer, now: 1)
        #expect(!active.isActive, "an active instance stands by for it")
        #expect(active.tick(now: 2) == nil)
    }
}

@Suite struct SyncTopicTests {
    @Test func everyProcessHasASyncTopicOfItsOwnEvenUnderOneInstanceName() {
        let a = InstanceLivenessTests.runtime("alpha"), b = InstanceLivenessTests.runtime("alpha")
        #expect(a.syncTopic.hasPrefix("roomcast/aggregator/sync/alpha-"))
        #expect(a.syncTopic != b.syncTopic, "two processes started with one name must not take each other's marker")
    }
}

/// Two instances of one site deciding with different configs (one restarted with a room renamed,
/// the other not yet) take each other's Home Assistant devices away at every take-over: the
/// standby says so, naming the active instance, as soon as it reads the lease.
@Suite struct StandbyConfigTests {
    static func config(rooms: [String], keepalive: Int = 30, logLevel: Logger.Level = .info) -> AggregatorConfig {
        var c = AggregatorConfig(site: SiteModel(rooms: rooms.map { .init(name: $0) }, nodes: [], beacons: []))
        c.mqtt.keepalive = keepalive
        c.log.level = logLevel
        return c
    }

    /// Each partition elects on a lease topic named after it. The active and the standby of one
    /// partition, written in another order, elected on two topics and were both active; two
    /// partitions whose room names a `_` joined alike (`a_b`; `a` and `b`) shared one lease.
    @Test func aPartitionsLeaseNameIsItsOwnWhateverTheOrder() {
        func name(floors: [Int]? = nil, rooms: [String]? = nil) -> String? {
            var c = AggregatorConfig(site: SiteModel())
            c.partition = .init(floors: floors, rooms: rooms)
            return c.partitionName
        }
        #expect(name(floors: [1, 0]) == "floors-0_1" && name(floors: [0, 1, 1]) == "floors-0_1")
        #expect(name(rooms: ["office", "hall"]) == "rooms-hall_office" && name(rooms: ["hall", "office"]) == "rooms-hall_office")
        #expect(name(rooms: ["a_b"]) != name(rooms: ["a", "b"]))
        #expect(name(rooms: ["b", "a_b"]) == name(rooms: ["a_b", "b"]))
        let many = name(rooms: (0..<40).map { "room\($0)" })
        #expect(many.map { $0.utf8.count < 40 && TopicName.isValid($0) } == true, "\(many ?? "-")")
    }

    @Test func theDigestCoversWhatDecidesAndNotTheInstancesOwnSettings() {
        let a = Self.config(rooms: ["kitchen", "office"])
        #expect(a.decisionDigest.count == 16)
        #expect(a.decisionDigest == Self.config(rooms: ["kitchen", "office"], keepalive: 60, logLevel: .debug).decisionDigest)
        #expect(a.decisionDigest != Self.config(rooms: ["kitchen", "study"]).decisionDigest)
        // The instance's own: its state file and HTTP listener; the lease's length is the site's.
        var own = a
        own.learn.stateFile = "/srv/other/learned-rooms.json"
        own.http.listen = "127.0.0.1:9999"
        #expect(own.decisionDigest == a.decisionDigest)
        var lease = a
        lease.standby.leaseS = 60
        #expect(lease.decisionDigest != a.decisionDigest)
    }

    @Test func aStandbyNamesAnActiveInstanceWithAnotherConfig() async throws {
        let topics = Topics()
        var alpha = LeaseElection(me: "alpha", topics: topics, configDigest: "1111")
        let renewal = try #require({ alpha.tick(now: 0, grace: 0) }())
        let records = InMemoryLogHandler()
        let runtime = AggregatorRuntime(core: Self.config(rooms: ["kitchen"]).makeCore(),
                                        election: LeaseElection(me: "beta", topics: topics, configDigest: "2222"),
                                        refreshInterval: .infinity, startedAt: 0, logger: Logger(label: "test", level: .info, handler: records))
        _ = await runtime.handle(topic: renewal.topic, payload: renewal.payload, now: 0.5, retained: true)
        _ = await runtime.handle(topic: renewal.topic, payload: renewal.payload, now: 2.5)
        let said = records.records.filter { $0.message.hasPrefix("the active instance runs another config") }
        #expect(said.count == 1, "said once: \(said)")
        #expect(said.first?.metadata["instance"] == "alpha" && said.first?.metadata["its_config"] == "1111")
        // Leases whose digest alternates (anything the broker lets write the lease topic) are no
        // error line per message.
        for k in 0..<200 {
            var forger = LeaseElection(me: "alpha", topics: topics, configDigest: k % 2 == 0 ? "3333" : "1111")
            let lease = try #require({ forger.tick(now: 3 + Double(k) * 0.1, grace: 0) }())
            _ = await runtime.handle(topic: lease.topic, payload: lease.payload, now: 3 + Double(k) * 0.1)
        }
        let flood = records.records.filter { $0.message.hasPrefix("the active instance runs another config") }
        #expect(flood.count <= 4, "\(flood.count) error lines for 200 leases in 20 s (each digest paced on its own)")

        // The same config, or a holder that sends none (an older release): nothing to say.
        var same = LeaseElection(me: "beta", topics: topics, configDigest: "1111")
        same.observe(payload: renewal.payload, now: 1)
        #expect(same.otherConfig == nil)
        var older = LeaseElection(me: "beta", topics: topics, configDigest: "2222")
        older.observe(payload: try WireFormat.encode(LeaseElection.Lease(holder: "alpha", expires: 10)), now: 1)
        #expect(older.otherConfig == nil)
        // Another release digests its own defaults: a rolling upgrade is no other config.
        var upgrading = LeaseElection(me: "beta", topics: topics, configDigest: "2222")
        upgrading.observe(payload: try WireFormat.encode(LeaseElection.Lease(holder: "alpha", expires: 10, config: "1111", release: "0.0.1-older")), now: 1)
        #expect(upgrading.otherConfig == nil)
    }
}

/// A broker whose ACL refuses an instance the lease topic (mosquitto's dynamic security plugin,
/// EMQX and HiveMQ answer the subscription with a refusal) leaves it blind to every other holder:
/// taking the lease after its grace made two active instances, both publishing. It stands by and
/// says why; granted the topic on a later connection, it elects as usual.
@Suite struct LeaseRefusedTests {
    static func leases(_ out: [OutboundMessage]) -> [OutboundMessage] { out.filter { $0.topic == "roomcast/aggregator/lease" } }

    /// Connected at `now` with the drain marker back: hearing.
    static func connect(_ r: AggregatorRuntime<StrongestLatest>, at now: Double) async throws {
        await r.brokerConnected(now: now)
        let marker = try #require(await r.tick(now: now).first { $0.topic == r.syncTopic })
        _ = await r.handle(topic: marker.topic, payload: marker.payload, now: now)
    }

    @Test func anInstanceRefusedTheLeaseTopicStandsByAndSaysWhy() async throws {
        let records = InMemoryLogHandler()
        let core = AggregatorCore(engine: StrongestLatest(roomOfNode: ["kitchen-pi": "kitchen"]), site: site,
                                  topics: Topics(), discovery: nil)
        let r = AggregatorRuntime(core: core, election: LeaseElection(me: "alpha", topics: Topics(), duration: 6),
                                  refreshInterval: .infinity, startedAt: 0, logger: Logger(label: "test", level: .info, handler: records))
        await r.leaseSubscription(refused: true)
        try await Self.connect(r, at: 0)
        var leases: [OutboundMessage] = []
        for t in stride(from: 0.5, through: 120, by: 0.5) { leases += Self.leases(await r.tickAnswered(now: t)) }
        let active = await r.isActive
        #expect(leases.isEmpty && !active, "a blind instance took the lease")
        let lines = records.records.filter { $0.message.hasPrefix("the broker refuses this instance the lease topic") }
        // Said at once, then ever further apart (a minute, then two, …): twice in two minutes.
        #expect(lines.count == 2 && lines.first?.level == .error && lines.first?.metadata["mqtt.topic"] == "roomcast/aggregator/lease",
                "\(lines.map(\.message))")
        #expect(await r.metricsSample(now: 120).leaseUnreadable)

        // The ACL mended: the next connection is granted the topic, and with no holder the lease is taken.
        await r.brokerDisconnected()
        await r.leaseSubscription(refused: false)
        try await Self.connect(r, at: 200)
        for t in stride(from: 200.5, through: 203, by: 0.5) { leases += Self.leases(await r.tickAnswered(now: t)) }
        let taken = await r.isActive
        #expect(taken && !leases.isEmpty)
        #expect(await !r.metricsSample(now: 203).leaseUnreadable)

        // Refused again on a later connection: the reconnect stood it down, and it stays so.
        await r.brokerDisconnected()
        await r.leaseSubscription(refused: true)
        try await Self.connect(r, at: 300)
        var later: [OutboundMessage] = []
        for t in stride(from: 300.5, through: 330, by: 0.5) { later += Self.leases(await r.tickAnswered(now: t)) }
        let activeAgain = await r.isActive
        #expect(later.isEmpty && !activeAgain)
    }
}
