import Foundation
import RoomcastLogging
import RoomcastMQTT
import Shared
import Testing
import TestSupport
@testable import RoomcastAggregator

/// Retained topics of rooms, people and beacons taken out of the config: found at the start and
/// cleared, while everything the site still has stays.
@Suite struct RetainedLeftoversTests {
    static let kept = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1")!
    static let removed = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")!
    static let replacement = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-3")!

    static func site(nodes: Bool = true, beacons: Bool = true) -> SiteModel {
        SiteModel(rooms: [.init(name: "kitchen"), .init(name: "hall")],
                  nodes: nodes ? [.init(name: "kitchen-pi", room: "kitchen")] : [],
                  beacons: beacons ? [.init(id: kept, name: "Keys")] : [],
                  people: [.init(name: "Alice", beacons: [kept])])
    }

    @Test func onlyWhatTheConfigNoLongerHasIsCleared() {
        let topics = Topics()
        var leftovers = RetainedLeftovers(site: Self.site(), topics: topics)
        let payload = Array("{}".utf8)
        // Names no config could hold were never an aggregator's: not kept, not cleared.
        let huge = String(repeating: "x", count: 60_000)
        for topic in [topics.room("kitchen"), topics.room("attic"), topics.person("alice"), topics.person("bob"),
                      topics.presence(Self.kept), topics.presence(Self.removed), topics.events, topics.aggregatorStatus,
                      topics.room(huge), topics.person(huge)] {
            leftovers.observe(topic: topic, payload: payload, retained: true)
        }
        // What arrives live is our own output echoed back, not what the broker keeps.
        leftovers.observe(topic: topics.room("cellar"), payload: payload, retained: false)
        let cleared = leftovers.take()
        #expect(cleared.map(\.topic) == [topics.person("bob"), topics.presence(Self.removed), topics.presenceRoom(Self.removed),
                                          topics.room("attic")].sorted())
        #expect(cleared.allSatisfy { $0.payload.isEmpty && $0.retain })
        #expect(leftovers.take().isEmpty, "what was cleared is forgotten")

        // A topic cleared meanwhile (by hand, by another partition) is not cleared again.
        leftovers.observe(topic: topics.room("attic"), payload: payload, retained: true)
        leftovers.observe(topic: topics.room("attic"), payload: [], retained: false)
        #expect(leftovers.take().isEmpty)
    }

    /// Rooms made of the nodes heard (`auto_nodes`) and beacons tracked because the site lists
    /// none are not the config's to judge.
    @Test func roomsAndBeaconsTheConfigDoesNotListAreNotJudged() {
        let topics = Topics()
        var leftovers = RetainedLeftovers(site: Self.site(nodes: false, beacons: false), topics: topics)
        for topic in [topics.room("attic"), topics.presence(Self.removed), topics.person("bob")] {
            leftovers.observe(topic: topic, payload: Array("{}".utf8), retained: true)
        }
        #expect(leftovers.take().map(\.topic) == [topics.person("bob")])
    }

    /// A site that lists its nodes but no beacons: a beacon's presence in a room the site no
    /// longer has is left over (nothing resumes it); one in a room it has, or away, is not, and
    /// the beacon placed again takes its presence off the list.
    @Test func anUnlistedBeaconsPresenceInARoomTakenOutIsALeftover() throws {
        let topics = Topics()
        var leftovers = RetainedLeftovers(site: Self.site(beacons: false), topics: topics)
        func presence(_ id: BeaconID, in room: String?) throws -> [UInt8] {
            try WireFormat.encode(PresenceDecision(id: id, name: nil, room: room, floor: nil, distance: nil, confidence: 0.9,
                                                   node: nil, since: 1, lastSeen: 1, evidence: [], ts: 1))
        }
        let away = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-3")!
        leftovers.observe(topic: topics.presence(Self.kept), payload: try presence(Self.kept, in: "kitchen"), retained: true)
        leftovers.observe(topic: topics.presence(Self.removed), payload: try presence(Self.removed, in: "attic"), retained: true)
        leftovers.observe(topic: topics.presence(away), payload: try presence(away, in: nil), retained: true)
        // Live, our own output: not what the broker keeps.
        leftovers.observe(topic: topics.presence(away), payload: try presence(away, in: "cellar"), retained: false)
        #expect(leftovers.take().map(\.topic) == [topics.presence(Self.removed), topics.presenceRoom(Self.removed)])

        leftovers.observe(topic: topics.presence(Self.removed), payload: try presence(Self.removed, in: "attic"), retained: true)
        leftovers.observe(topic: topics.presence(Self.removed), payload: try presence(Self.removed, in: "hall"), retained: false)
        #expect(leftovers.take().isEmpty, "placed again in a room the site has")
    }

    /// Through the runtime, on a site that lists no beacons: the presence of a beacon left in a
    /// room taken out of the config goes after the discovery clean-up, with its Home Assistant
    /// configs; a beacon heard in a room the site has is placed and kept.
    @Test func anUnlistedBeaconLeftInARoomTakenOutIsClearedWithItsEntities() async throws {
        let topics = Topics()
        let core = AggregatorConfig(site: Self.site(beacons: false)).makeCore()
        let discovery = try #require(core.discovery)
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 0, logger: .silent)
        await runtime.brokerConnected(now: 0)
        let stale = PresenceDecision(id: Self.removed, name: "Old tag", room: "attic", floor: 0, distance: 1, confidence: 0.9,
                                     node: "attic-pi", since: 1, lastSeen: 1, evidence: [], ts: 1)
        _ = await runtime.handle(topic: topics.presence(Self.removed), payload: try WireFormat.encode(stale), now: 0, retained: true)
        let retainedConfigs = try discovery.beaconConfigs(id: Self.removed, name: "Old tag")
        for config in retainedConfigs {
            _ = await runtime.handle(topic: config.topic, payload: config.payload, now: 0, retained: true)
        }
        let configs = retainedConfigs.map(\.topic)
        var out: [(t: Double, message: OutboundMessage)] = []
        for t in stride(from: 0.5, through: 120, by: 0.5) {
            if t <= 20 {
                let r = BeaconReading(id: Self.kept, node: "kitchen-pi", ts: t, seq: UInt64(t * 2), rssi: -50, rssiFiltered: -50,
                                      power: -59, distance: 1, proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
                _ = await runtime.handle(topic: topics.nodeBeacon("kitchen-pi", Self.kept), payload: try WireFormat.encode(r), now: t)
            }
            out += await runtime.tick(now: t).map { (t, $0) }
        }
        let removedConfigsAt = out.filter { configs.contains($0.message.topic) && $0.message.payload.isEmpty }.map(\.t)
        let clearedAt = out.filter { $0.message.topic == topics.presence(Self.removed) && $0.message.payload.isEmpty }.map(\.t)
        #expect(Set(out.filter { $0.message.payload.isEmpty }.map(\.message.topic))
                == Set(configs + [topics.presence(Self.removed), topics.presenceRoom(Self.removed)]))
        let configsGone = try #require(removedConfigsAt.max(), "its Home Assistant configs were not removed")
        let cleared = try #require(clearedAt.first, "its presence was never cleared")
        #expect(cleared >= configsGone + 30, "configs removed at \(configsGone), presence cleared at \(cleared)")
        #expect(out.contains { $0.message.topic == topics.presence(Self.kept) && String(decoding: $0.message.payload, as: UTF8.self).contains(#""room":"kitchen""#) })
    }

    /// Discovery turned off: Home Assistant removes an entity only when its config is emptied, so
    /// the configs a run with discovery on left kept every entity for good, updating. This site's
    /// go after the start; another site's (another topic prefix) stay.
    @Test func discoveryTurnedOffRemovesThisSitesConfigs() async throws {
        var config = AggregatorConfig(site: Self.site())
        config.discovery.enabled = false
        let core = config.makeCore()
        #expect(core.discovery == nil)
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 0, logger: .silent)
        await runtime.brokerConnected(now: 0)
        let ours = try HomeAssistantDiscovery(topics: Topics(), site: Self.site()).siteConfigs(Self.site())
        let theirs = try HomeAssistantDiscovery(topics: Topics(prefix: "flat-b/roomcast"), site: Self.site()).siteConfigs(Self.site())
        for config in ours { _ = await runtime.handle(topic: config.topic, payload: config.payload, now: 0, retained: true) }
        // Another site's on the same broker (the same object ids, its own status topic).
        let other = try #require(theirs.first)
        _ = await runtime.handle(topic: other.topic, payload: other.payload, now: 0, retained: true)
        #expect(await runtime.discoveryConfigsOnBroker == ours.count - 1)
        var out: [OutboundMessage] = []
        // Past the drain of what the broker held (its marker is not echoed here) and the resume window.
        for t in stride(from: 0.5, through: 60, by: 0.5) {
            let r = BeaconReading(id: Self.kept, node: "kitchen-pi", ts: t, seq: UInt64(t * 2), rssi: -50, rssiFiltered: -50,
                                  power: -59, distance: 1, proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
            out += await runtime.handle(topic: Topics().nodeBeacon("kitchen-pi", Self.kept), payload: try WireFormat.encode(r), now: t)
            out += await runtime.tick(now: t)
        }
        let emptied = out.filter { $0.payload.isEmpty && $0.topic.hasPrefix("homeassistant/") }.map(\.topic)
        // The other site's config took one of the topics over: that one is no longer ours.
        #expect(Set(emptied) == Set(ours.map(\.topic)).subtracting([other.topic]), "\(emptied)")
        #expect(emptied.count == Set(emptied).count && emptied.count == ours.count - 1)
        #expect(!out.contains { $0.topic.hasPrefix("homeassistant/") && !$0.payload.isEmpty }, "nothing published")

        // Under `partition:` another partition's configs name the same status topic, and it may
        // publish them: left alone.
        var partitioned = AggregatorConfig(site: Self.site(), partition: .init(floors: [0]))
        partitioned.discovery.enabled = false
        #expect(partitioned.makeCore().discoveryToClear == nil)
    }

    /// A beacon replaced under the same name, a person given an `id`, a room given another id: the
    /// old device holds the entity ids until Home Assistant has removed it, and new entities named
    /// before then get `_2` ids for good. What the config alone says is gone is emptied before the
    /// start's configs, which wait `HomeAssistantDiscovery.removalLead`; what it cannot judge (a
    /// beacon heard on a site that lists none, a node made of what is heard) waits for the
    /// clean-up after the start.
    @Test(arguments: [AggregatorConfig.Discovery.Mode.device, .entity])
    func devicesTheConfigSaysAreGoneAreRemovedBeforeTheStartsConfigs(mode: AggregatorConfig.Discovery.Mode) async throws {
        let old = SiteModel(rooms: [.init(name: "kitchen"), .init(name: "hall")],
                            nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "hall-pi", room: "hall")],
                            beacons: [.init(id: Self.removed, name: "Keys"), .init(id: Self.kept, name: "Alice's tag")],
                            people: [.init(name: "Alice", beacons: [Self.kept])])
        let new = SiteModel(rooms: [.init(name: "kitchen"), .init(name: "lobby", displayName: "Hall")],
                            nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "hall-pi", room: "lobby")],
                            beacons: [.init(id: Self.replacement, name: "Keys"), .init(id: Self.kept, name: "Alice's tag")],
                            people: [.init(id: "alice-smith", name: "Alice", beacons: [Self.kept])])
        let heard = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-9-9")!
        let topics = Topics()
        let was = try HomeAssistantDiscovery(topics: topics, mode: mode, site: old)
        let retained = try was.siteConfigs(old)
        var config = AggregatorConfig(site: new)
        config.discovery.mode = mode
        let core = config.makeCore()
        let now = try #require(core.discovery)
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 0, logger: .silent)
        for message in retained { _ = await runtime.handle(topic: message.topic, payload: message.payload, now: 0, retained: true) }
        await runtime.brokerConnected(now: 0)
        /// The ticks' discovery messages up to the tick that published the start's configs, with their times.
        func started<E>(_ runtime: AggregatorRuntime<E>) async -> [(t: Double, message: OutboundMessage)] {
            var out: [(t: Double, message: OutboundMessage)] = []
            for t in stride(from: 0.5, through: 5, by: 0.5) {
                out += await runtime.tickAnswered(now: t).filter { $0.topic.hasPrefix("homeassistant/") }.map { (t, $0) }
                if out.contains(where: { !$0.message.payload.isEmpty }) { break }
            }
            return out
        }
        let timed = await started(runtime)
        let start = timed.map(\.message)
        let wanted = Set(try now.siteConfigs(new).map(\.topic))
        let gone = Set(retained.map(\.topic)).subtracting(wanted)
        let emptied = start.filter { $0.payload.isEmpty }.map { $0.topic }
        // Besides those gone, per-entity configs that move to another device (Alice's tag's
        // teaching select, to her device of the new id) are emptied, then written again.
        #expect(Set(emptied).subtracting(gone).isSubset(of: wanted) && Set(emptied).isSuperset(of: gone), "\(emptied)")
        #expect(!gone.isEmpty && gone.contains { $0.contains("roomcast_person_alice") } && gone.contains { $0.contains("1_2") }
            && gone.contains { $0.contains("roomcast_room_hall") })
        // Every removal before the first config the start publishes, by the time Home Assistant
        // needs to let go of their entity ids.
        let firstConfig = try #require(timed.first { !$0.message.payload.isEmpty }?.t)
        let lastRemoval = try #require(timed.last { $0.message.payload.isEmpty && gone.contains($0.message.topic) }?.t)
        #expect(firstConfig - lastRemoval >= HomeAssistantDiscovery.removalLead, "removed at \(lastRemoval) s, started at \(firstConfig) s")

        // On a site that lists no beacons, a beacon's device is not the config's to judge.
        let open = SiteModel(rooms: new.rooms, nodes: new.nodes, beacons: [], people: [])
        let heardConfigs = try was.beaconConfigs(id: heard, name: "Keys")
        var openConfig = AggregatorConfig(site: open)
        openConfig.discovery.mode = mode
        let openRuntime = AggregatorRuntime(core: openConfig.makeCore(), election: nil, refreshInterval: .infinity, startedAt: 0, logger: .silent)
        for message in heardConfigs { _ = await openRuntime.handle(topic: message.topic, payload: message.payload, now: 0, retained: true) }
        await openRuntime.brokerConnected(now: 0)
        let openStart = await started(openRuntime)
        #expect(openStart.contains { !$0.message.payload.isEmpty }, "the start's configs")
        #expect(!openStart.contains { $0.message.payload.isEmpty }, "\(openStart.filter { $0.message.payload.isEmpty }.map { $0.message.topic })")
    }

    /// Under hot standby the instance that takes the lease starts at once, with the moves it
    /// decided standing by: it does not wait to remove what the config says is gone (the tick's
    /// events, against its own view, would go out meanwhile); such devices go with the hand-over
    /// at the start or the clean-up after it.
    @Test func aTakeOverStartsAtOnceAndRemovesWhatIsGone() async throws {
        let old = Self.site()
        var new = Self.site()
        new.beacons = [.init(id: Self.replacement, name: "Keys")]
        new.people = []
        let retained = try HomeAssistantDiscovery(topics: Topics(), site: old).siteConfigs(old)
        let runtime = AggregatorRuntime(core: AggregatorConfig(site: new).makeCore(), election: LeaseElection(me: "beta", topics: Topics(), duration: 6),
                                        refreshInterval: .infinity, startedAt: 0, logger: .silent)
        for message in retained { _ = await runtime.handle(topic: message.topic, payload: message.payload, now: 0, retained: true) }
        let lease = try WireFormat.encode(LeaseElection.Lease(holder: "alpha", expires: 6))
        _ = await runtime.handle(topic: Topics().aggregatorLease, payload: lease, now: 0, retained: true)
        await runtime.brokerConnected(now: 0)
        var tookOver: Double?, startedAt: Double?, emptiedAt: Double?
        let gone = Set(retained.map(\.topic)).subtracting(try HomeAssistantDiscovery(topics: Topics(), site: new).siteConfigs(new).map(\.topic))
        #expect(!gone.isEmpty)
        for t in stride(from: 0.5, through: 30, by: 0.5) {
            let out = await runtime.tickAnswered(now: t)
            if tookOver == nil, await runtime.isActive { tookOver = t }
            if startedAt == nil, out.contains(where: { $0.topic.hasPrefix("homeassistant/") && !$0.payload.isEmpty }) { startedAt = t }
            if emptiedAt == nil, out.contains(where: { gone.contains($0.topic) && $0.payload.isEmpty }) { emptiedAt = t }
        }
        let active = try #require(tookOver, "beta never took the lease")
        #expect(startedAt == active, "took the lease at \(active) s, started at \(String(describing: startedAt)) s")
        let emptied = try #require(emptiedAt, "what is gone was never removed")
        #expect(emptied >= active, "a standby publishes nothing")
    }

    /// The clean-up's messages go once: a link lost as they were sent lost them, and the broker
    /// still holds the configs and the presence. The clean-up is done again after the reconnect,
    /// from what the broker sends again with the subscriptions.
    @Test func aCleanUpLostWithTheLinkIsDoneAgainAfterTheReconnect() async throws {
        let topics = Topics()
        let core = AggregatorConfig(site: Self.site(beacons: false)).makeCore()
        let discovery = try #require(core.discovery)
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 0, logger: .silent)
        let stale = PresenceDecision(id: Self.removed, name: "Old tag", room: "attic", floor: 0, distance: 1, confidence: 0.9,
                                     node: "attic-pi", since: 1, lastSeen: 1, evidence: [], ts: 1)
        let retainedConfigs = try discovery.beaconConfigs(id: Self.removed, name: "Old tag")
        let configs = retainedConfigs.map(\.topic)
        // The broker's retained state, sent with the subscriptions at each connection: before the
        // client reports it, as the SUBACKs come after each filter's retained messages.
        func connect(at t: Double) async throws {
            _ = await runtime.handle(topic: topics.presence(Self.removed), payload: try WireFormat.encode(stale), now: t, retained: true)
            for config in retainedConfigs {
                _ = await runtime.handle(topic: config.topic, payload: config.payload, now: t, retained: true)
            }
            await runtime.brokerConnected(now: t)
        }
        try await connect(at: 0)
        var lostAt: Double?, reconnectedAt: Double?
        var out: [(t: Double, message: OutboundMessage)] = []
        for t in stride(from: 0.5, through: 120, by: 0.5) {
            let sent = await runtime.tickAnswered(now: t)
            if lostAt == nil, sent.contains(where: { configs.contains($0.topic) && $0.payload.isEmpty }) {
                // The link goes as the removals are sent: none of them reaches the broker.
                lostAt = t
                await runtime.brokerDisconnected()
                continue
            }
            if let lost = lostAt, reconnectedAt == nil {
                if t >= lost + 5 {
                    reconnectedAt = t
                    try await connect(at: t)
                }
                continue  // nothing sent while the link is down
            }
            out += sent.map { (t, $0) }
        }
        let reconnected = try #require(reconnectedAt, "the clean-up never sent its removals")
        let removedConfigsAt = out.filter { configs.contains($0.message.topic) && $0.message.payload.isEmpty }.map(\.t)
        #expect(Set(out.filter { configs.contains($0.message.topic) && $0.message.payload.isEmpty }.map(\.message.topic)) == Set(configs),
                "every config of the beacon taken out is removed after the reconnect")
        let configsGone = try #require(removedConfigsAt.max())
        #expect(configsGone > reconnected && configsGone <= reconnected + 5, "reconnected at \(reconnected), removed at \(configsGone)")
        let cleared = try #require(out.first { $0.message.topic == topics.presence(Self.removed) && $0.message.payload.isEmpty }?.t,
                                   "its presence was never cleared")
        #expect(cleared >= configsGone + 30, "configs removed at \(configsGone), presence cleared at \(cleared)")
    }

    /// A standby reads every retained device config again at each reconnect (its clean-up, run
    /// only once it is active, must see what the broker holds then). What it counts of them is
    /// one connection's: counted across reconnects, a big site's daily broker restarts used up
    /// its budget within weeks, and it recorded no config after.
    @Test func aStandbyCountsTheConfigsOfOneConnection() async throws {
        let topics = Topics()
        let core = AggregatorConfig(site: Self.site()).makeCore()
        let discovery = try #require(core.discovery)
        let runtime = AggregatorRuntime(core: core, election: LeaseElection(me: "beta", topics: topics, duration: 6),
                                        refreshInterval: .infinity, startedAt: 0, logger: .silent)
        let retained = try discovery.beaconConfigs(id: Self.removed, name: "Old tag")
        var perConnection: [Int] = []
        for k in 0..<4 {
            let t = Double(k) * 10
            let lease = try WireFormat.encode(LeaseElection.Lease(holder: "alpha", expires: t + 6))
            _ = await runtime.handle(topic: topics.aggregatorLease, payload: lease, now: t, retained: true)
            for config in retained { _ = await runtime.handle(topic: config.topic, payload: config.payload, now: t, retained: true) }
            await runtime.brokerConnected(now: t)
            perConnection.append(await runtime.componentsReadBack)
            await runtime.brokerDisconnected()
        }
        #expect(perConnection[0] > 0)
        #expect(Set(perConnection).count == 1, "counted per connection: \(perConnection)")
    }

    /// A person renamed in the config (Bob became Robert, without `id: bob`) is a new person to
    /// Home Assistant, and the old one's device goes with its customisations and Person links:
    /// the log names what is removed, and how to keep it.
    @Test func theDevicesRemovedAreNamedWithHowToKeepThem() async throws {
        let records = InMemoryLogHandler()
        let runtime = AggregatorRuntime(core: AggregatorConfig(site: Self.site()).makeCore(), election: nil, refreshInterval: .infinity,
                                        startedAt: 0, logger: Logger(label: "test", level: .info, handler: records))
        await runtime.brokerConnected(now: 0)
        let bob = "homeassistant/device/roomcast_person_bob/config"
        _ = await runtime.handle(topic: bob, payload: Array(#"{"availability":[{"topic":"roomcast/aggregator/status"}]}"#.utf8),
                                 now: 0, retained: true)
        let marker = try #require(await runtime.tick(now: 0).first { $0.topic == runtime.syncTopic })
        _ = await runtime.handle(topic: marker.topic, payload: marker.payload, now: 0)
        var removed = false
        for t in stride(from: 0.5, through: 10, by: 0.5) {
            let out = await runtime.tickAnswered(now: t)
            if out.contains(where: { $0.topic == bob && $0.payload.isEmpty }) { removed = true }
        }
        #expect(removed)
        let said = try #require(records.records.first { $0.message == "removing Home Assistant devices and entities no longer in the config" })
        #expect(said.level == .notice && said.metadata["topics"] == bob, "\(said)")
        #expect(said.metadata["hint"]?.contains("people[].id") == true)
    }

    /// A node renamed or taken away leaves its retained status on the broker, read at every start:
    /// the log says what it likely is and how to clear it, not to list a node the user took away.
    /// A live message of an unknown node still gets the advice to list it.
    @Test func aRetainedStatusOfANodeTakenAwayIsNamedAsALeftover() async throws {
        let topics = Topics()
        let records = InMemoryLogHandler()
        let runtime = AggregatorRuntime(core: AggregatorConfig(site: Self.site()).makeCore(), election: nil, refreshInterval: .infinity,
                                        startedAt: 0, logger: Logger(label: "test", level: .info, handler: records))
        await runtime.brokerConnected(now: 0)
        _ = await runtime.handle(topic: topics.nodeStatus("attic-pi"), payload: Array("offline".utf8), now: 0, retained: true)
        let said = try #require(records.records.first { $0.message.hasPrefix("a retained message of a node this aggregator does not have") })
        #expect(said.metadata["hint"] == "if the node is gone, clear it: mosquitto_pub -r -n -t roomcast/nodes/attic-pi/status")
        // A name a shell would split is quoted. One with a `'` gets no command to paste: the log
        // escapes the `\` its quoting needs, and a stranger can name a topic
        // `x';touch p;'` for the pasted command to run another.
        _ = await runtime.handle(topic: topics.nodeStatus("Bob pi"), payload: Array("offline".utf8), now: 0, retained: true)
        _ = await runtime.handle(topic: topics.nodeStatus("x';touch p;'"), payload: Array("offline".utf8), now: 0, retained: true)
        let hints = records.records.compactMap { $0.metadata["hint"] }
        #expect(hints.contains("if the node is gone, clear it: mosquitto_pub -r -n -t 'roomcast/nodes/Bob pi/status'"), "\(hints)")
        #expect(hints.contains { $0.hasPrefix("if the node is gone, clear it: mosquitto_pub -r -n -t with the topic of mqtt.topic") }, "\(hints)")
        #expect(!hints.contains { $0.contains("touch") }, "\(hints)")
        _ = await runtime.handle(topic: topics.nodeStatus("porch-pi"), payload: Array("online".utf8), now: 1, retained: false)
        #expect(records.records.contains { $0.message == "rejected inbound message" && $0.metadata["detail"]?.contains("list it under nodes:") == true })
    }

    /// A hot standby that takes over long after its start clears the leftovers 30 s after its
    /// discovery clean-up too, not with it: Home Assistant has not removed the entities yet.
    @Test func aStandbyThatTakesOverClearsLeftoversAfterItsDiscoveryCleanUp() async throws {
        let topics = Topics()
        let runtime = AggregatorRuntime(core: AggregatorConfig(site: Self.site()).makeCore(),
                                        election: LeaseElection(me: "beta", topics: topics, duration: 6), refreshInterval: .infinity,
                                        startedAt: 0, logger: .silent)
        func lease(at t: Double) async throws {
            let payload = try WireFormat.encode(LeaseElection.Lease(holder: "alpha", expires: t + 6))
            _ = await runtime.handle(topic: topics.aggregatorLease, payload: payload, now: t, retained: true)
        }
        await runtime.brokerConnected(now: 0)
        try await lease(at: 0)
        _ = await runtime.handle(topic: topics.room("attic"), payload: Array("{}".utf8), now: 0, retained: true)
        let marker = try #require(await runtime.tick(now: 0).first { $0.topic == runtime.syncTopic })
        _ = await runtime.handle(topic: marker.topic, payload: marker.payload, now: 0)
        var activeAt: Double?, clearedAt: Double?
        for t in stride(from: 0.5, through: 200, by: 0.5) {
            if t < 100, t.truncatingRemainder(dividingBy: 2) == 0 { try await lease(at: t) }  // alpha renews until it dies
            let out = await runtime.tickAnswered(now: t)
            if activeAt == nil, await runtime.isActive { activeAt = t }
            if out.contains(where: { $0.topic == topics.room("attic") && $0.payload.isEmpty }) { clearedAt = t }
        }
        let took = try #require(activeAt)
        let cleared = try #require(clearedAt, "the leftover was never cleared")
        #expect(took > 100 && cleared >= took + 30, "took over at \(took), cleared at \(cleared)")
    }

    /// Under `partition:` a site that lists its beacons: a retained presence of a beacon it does
    /// not list is nobody's, so its Home Assistant configs are not kept as another partition's.
    @Test func aPartitionKeepsNoConfigOfABeaconTheSiteDoesNotList() throws {
        let topics = Topics()
        var site = Self.site()
        site.rooms.append(.init(name: "bedroom", floor: 1))
        site.nodes.append(.init(name: "bedroom-pi", room: "bedroom"))
        var core = AggregatorConfig(site: site, partition: .init(floors: [0])).makeCore()
        let discovery = try #require(core.discovery)
        let removedConfigs = Set(try discovery.beaconConfigs(id: Self.removed, name: nil).map(\.topic))
        for room in [nil, "bedroom"] {
            let d = PresenceDecision(id: Self.removed, name: "Old tag", room: room, floor: room == nil ? nil : 1, distance: nil,
                                     confidence: 0.9, node: nil, since: 1, lastSeen: 1, evidence: [], ts: 1)
            _ = try core.handle(topic: topics.presence(Self.removed), payload: try WireFormat.encode(d), now: 2)
        }
        let wanted = Set(try core.wantedDiscovery().map(\.topic))
        #expect(!removedConfigs.isEmpty && wanted.isDisjoint(with: removedConfigs))
    }

    /// Through the shipped broker config and ACL, the real aggregator: a room, a person and a
    /// beacon left from an older config are cleared; the site's own are published as before, and
    /// a beacon of the site is still placed.
    @Test(.requiresMosquitto) func leftoversAreClearedThroughTheShippedACL() async throws {
        let broker = try await LockedDownBroker.start()
        let dir = broker.directory
        let topics = Topics()
        let old = try broker.client("aggregator", clientID: "old-aggregator")
        old.start()
        try await old.waitUntilConnected(timeout: .seconds(10))
        var stale = PresenceDecision(id: Self.removed, name: "Old tag", room: "attic", floor: 0, distance: 1, confidence: 0.9,
                                     node: "attic-pi", since: 1, lastSeen: 1, evidence: [], ts: 1)
        stale.reason = nil
        let leftovers = [topics.room("attic"), topics.person("bob"), topics.presence(Self.removed), topics.presenceRoom(Self.removed)]
        for message in [
            MQTTMessage(topic: topics.room("attic"), string: #"{"occupied":true,"count":1,"beacons":[]}"#, qos: .atLeastOnce, retain: true),
            MQTTMessage(topic: topics.person("bob"), string: #"{"state":"home","room":"attic"}"#, qos: .atLeastOnce, retain: true),
            MQTTMessage(topic: topics.presence(Self.removed), payload: try WireFormat.encode(stale), qos: .atLeastOnce, retain: true),
            MQTTMessage(topic: topics.presenceRoom(Self.removed), string: "attic", qos: .atLeastOnce, retain: true),
        ] { try old.publish(message) }
        #expect(await old.flush(timeout: .seconds(10)), "the leftovers reached the broker")
        await old.shutdown()

        var config = try JSONSerialization.jsonObject(with: Data(LiveRig.config(
            port: broker.port, rooms: [.init(name: "kitchen", floor: 0), .init(name: "hall", floor: 0)],
            nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "hall-pi", room: "hall")],
            beacons: [.init(id: Self.kept, name: "Keys")], discovery: false, mqtt: broker.mqttSection("aggregator")).utf8)) as! [String: Any]
        config["people"] = [["name": "Alice", "beacons": [Self.kept.rawValue]]]
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: "\(dir)/site.json"))
        let aggregator = try ChildProcess("/usr/bin/env", [
            "ROOMCAST_MQTT_PASSWORD=\(LockedDownBroker.users["aggregator"]!)", try LiveRig.executable("aggregator"), "run",
            "--config", "\(dir)/site.json", "--instance", "leftovers",
        ], stdoutPath: "\(dir)/aggregator.log", stderrPath: "\(dir)/aggregator.log")
        // Each node under its own account: the ACL lets a node write its own topics only.
        let kitchen = try await ReadingFeeder(client: broker.client("kitchen-pi"))
        let hall = try await ReadingFeeder(client: broker.client("hall-pi"))
        kitchen.set(Self.kept, node: "kitchen-pi", rssi: -55)

        let dashboard = try broker.client("dashboard")
        let seen = StreamCollector(dashboard.messages)
        dashboard.start()
        try await dashboard.subscribe("roomcast/#")
        try await dashboard.waitUntilConnected(timeout: .seconds(10))
        let logs = { "aggregator:\n\(aggregator.stdout.suffix(3000))\nbroker:\n\(broker.log.suffix(1500))" }
        // The retained copies, then an empty payload on each once the aggregator clears them
        // (30 s after its discovery clean-up, which it makes 3 s after its start).
        try await eventually("every leftover cleared", timeout: .seconds(120), detail: logs) {
            let all = seen.elements
            return leftovers.allSatisfy { topic in all.contains { $0.topic == topic && $0.payload.isEmpty } }
        }
        #expect(aggregator.stdout.contains("clearing the retained topics of rooms, people and beacons no longer in the config"))
        // The site's own topics are still published: the keys in the kitchen, Alice with them.
        let all = seen.elements
        #expect(all.contains { $0.topic == topics.presence(Self.kept) && $0.payloadString?.contains(#""room":"kitchen""#) == true })
        #expect(all.contains { $0.topic == topics.person("alice") && !$0.payload.isEmpty })
        #expect(all.contains { $0.topic == topics.room("kitchen") && !$0.payload.isEmpty })
        #expect(!all.contains { $0.topic == topics.room("kitchen") && $0.payload.isEmpty }, "a room of the site was cleared")
        // The keys still follow a move.
        kitchen.set(Self.kept, node: "kitchen-pi", rssi: nil)
        hall.set(Self.kept, node: "hall-pi", rssi: -55)
        try await eventually("the keys in the hall", timeout: .seconds(30), detail: logs) {
            seen.elements.contains { $0.topic == topics.presence(Self.kept) && $0.payloadString?.contains(#""room":"hall""#) == true }
        }
        let errors = aggregator.stdout.split(separator: "\n").filter { $0.hasPrefix("error ") || $0.hasPrefix("critical ") }
        #expect(errors.isEmpty, "\(errors)")

        await kitchen.stop()
        await hall.stop()
        await dashboard.shutdown()
        aggregator.send(SIGTERM)
        await aggregator.waitForExit()
        await broker.stop()
    }
}

extension RetainedLeftoversTests {
    /// Clears held until Home Assistant has removed the entities go out 30 s later, except a
    /// beacon's presence published again meanwhile (a stranger evicted, then heard and placed):
    /// clearing it would wipe the new presence.
    @Test func aHeldClearOfAPresencePublishedAgainIsDropped() throws {
        let topics = Topics()
        var core = makeCore(discovery: false)
        let held = core.publisher.clearRetained(cat) + core.publisher.clearRetained(Self.removed)
        #expect(core.clearAfterEntitiesGo(held, now: 100).isEmpty)
        var out = try core.advance(to: 100)
        for k in 0..<10 {
            let t = 101 + Double(k)
            out += try core.handle(topic: topics.nodeBeacon("kitchen-pi", cat),
                                   payload: try WireFormat.encode(reading("kitchen-pi", rssi: -50, ts: t, seq: UInt64(k + 1))), now: t).messages
        }
        #expect(out.contains { $0.topic == topics.presence(cat) && !$0.payload.isEmpty }, "the cat is placed again")
        #expect(!out.contains { $0.payload.isEmpty }, "nothing cleared before its time")
        out = try core.advance(to: 131)
        #expect(out.filter { $0.payload.isEmpty }.map(\.topic) == [topics.presence(Self.removed), topics.presenceRoom(Self.removed)])
    }
}
