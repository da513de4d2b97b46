import Foundation
import RoomcastAggregator
import RoomcastMQTT
import Shared
import Testing
import TestSupport

/// Hot standby between two `aggregator run` processes, a bridged two-broker
/// site, and a partitioned aggregator, all against real mosquitto brokers.
@Suite(.serialized, .requiresMosquitto) struct StandbyAndScaleTests {
    static func leaseHolder(_ observer: Observer) -> String? {
        guard let text = observer.last("roomcast/aggregator/lease"), !text.isEmpty,
              let lease = try? WireFormat.decode(LeaseElection.Lease.self, from: Array(text.utf8)) else { return nil }
        return lease.holder
    }

    @Test func standbyTakesOverWithoutFlapOrDoublePublishing() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let configPath = "\(dir)/site.json"
        try LiveRig.config(port: broker.port, rooms: Home.rooms, nodes: Home.nodes, beacons: Home.beacons, standbyLease: 3,
                           refresh: 2)
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        let observer = try await Observer(port: broker.port)
        let feeder = try await ReadingFeeder(port: broker.port)
        feeder.set(Home.cat, node: "office-pi", rssi: -56)
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -75)

        let a = try LiveRig.startAggregator(configPath: configPath, instance: "alpha", in: dir)
        defer { a.send(SIGKILL) }
        try await observer.waitFor("alpha to hold the lease") { _ in Self.leaseHolder(observer) == "alpha" }
        let b = try LiveRig.startAggregator(configPath: configPath, instance: "beta", in: dir)
        defer { b.send(SIGKILL) }
        try await observer.waitForRoom(Home.cat, "office")
        // Beta is up, subscribed and warm; the refresh (every 2 s) keeps presence flowing.
        try await eventually("beta to connect", timeout: .seconds(10)) {
            broker.log.contains("New client connected") && broker.log.contains("roomcast-aggregator-beta")
        }
        let refreshes = observer.presence(Home.cat).count
        try await observer.waitFor("two more presence refreshes", timeout: .seconds(10)) { _ in
            observer.presence(Home.cat).count >= refreshes + 2
        }
        #expect(broker.publishers(of: "roomcast/presence/") == ["roomcast-aggregator-alpha"])
        #expect(broker.publishers(of: "roomcast/aggregator/lease") == ["roomcast-aggregator-alpha"])
        #expect(Self.leaseHolder(observer) == "alpha")
        let before = observer.seen.elements.count

        a.send(SIGKILL)
        let killedAt = ContinuousClock.now
        await a.waitForExit()
        try await observer.waitFor("beta to take the lease", timeout: .seconds(10)) { _ in Self.leaseHolder(observer) == "beta" }
        let tookLease = ContinuousClock.now - killedAt
        try await eventually("beta to publish presence", timeout: .seconds(10)) {
            broker.publishers(of: "roomcast/presence/").contains("roomcast-aggregator-beta")
        }
        let publishing = ContinuousClock.now - killedAt
        print("standby take-over: lease after \(tookLease), presence after \(publishing) (lease_s 3)")
        // The broker has it; wait until the observer has too (a loaded machine delivers late).
        try await observer.waitFor("beta's presence at the observer", timeout: .seconds(10)) { all in
            all.dropFirst(before).contains { $0.topic == Topics().presence(Home.cat) }
        }

        let after = Array(observer.seen.elements.dropFirst(before))
        let rooms = after.filter { $0.topic == Topics().presence(Home.cat) }
            .map { (try? WireFormat.decode(PresenceDecision.self, from: $0.payload))?.room }
        #expect(!rooms.isEmpty && rooms.allSatisfy { $0 == "office" }, "presence across the take-over: \(rooms)")
        let events = after.filter { $0.topic == Topics().events }.map { String(decoding: $0.payload, as: UTF8.self) }
        #expect(events.isEmpty, "events across the take-over: \(events)")
        #expect(observer.last("roomcast/aggregator/status") == "online")

        // Beta is the only live publisher, and it keeps renewing the lease.
        let leases = observer.seen.elements.filter { $0.topic == "roomcast/aggregator/lease" }.count
        try await observer.waitFor("beta to renew its lease") { all in
            all.filter { $0.topic == "roomcast/aggregator/lease" }.count > leases
        }
        #expect(Self.leaseHolder(observer) == "beta")
        await feeder.stop()
        await observer.stop()
        await broker.cleanup()
    }

    /// The wiring of `LeaseRefusedTests`: a broker whose dynamic security plugin refuses the
    /// lease topic (and grants the rest) gets an instance that reads the readings, says why it
    /// stands by, and publishes neither a lease nor presence.
    @Test func anInstanceTheBrokerRefusesTheLeaseTopicStandsBy() async throws {
        let dir = try LiveRig.workDirectory()
        let broker = try await MosquittoBroker.start(.init(
            extraConfig: try MosquittoBroker.denyingSubscriptions(to: ["roomcast/aggregator/lease"], in: dir)))
        let configPath = "\(dir)/site.json"
        try LiveRig.config(port: broker.port, rooms: Home.rooms, nodes: Home.nodes, beacons: Home.beacons, standbyLease: 3, refresh: 2)
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        let feeder = try await ReadingFeeder(port: broker.port)
        feeder.set(Home.cat, node: "office-pi", rssi: -56)
        let a = try LiveRig.startAggregator(configPath: configPath, instance: "alpha", in: dir)
        defer { a.send(SIGKILL) }
        let log = "\(dir)/aggregator-alpha.log"
        // Read through a file handle: Foundation's `String(contentsOfFile:)` leaks its read buffer
        // under AddressSanitizer, polling a log the process is writing (as in DashboardLiveTests).
        try await eventually("alpha to say the broker refuses it the lease topic", timeout: .seconds(30), poll: .milliseconds(100)) {
            let handle = FileHandle(forReadingAtPath: log)
            defer { try? handle?.close() }
            return String(decoding: (try? handle?.readToEnd()) ?? Data(), as: UTF8.self)
                .contains("the broker refuses this instance the lease topic")
        }
        // Said at the tick that would have taken the lease. Then well past a lease and a refresh,
        // counted by alpha's own heartbeats through the broker (one each half second): still
        // nothing of a holder's.
        func heartbeats() -> Int {
            broker.log.split(separator: "\n").count {
                $0.contains("Received PUBLISH from roomcast-aggregator-alpha ") && $0.contains("'roomcast/aggregator/sync/")
            }
        }
        let beatsAtLine = heartbeats()
        try await eventually("ten more of alpha's heartbeats", timeout: .seconds(30), poll: .milliseconds(100)) {
            heartbeats() >= beatsAtLine + 10
        }
        #expect(broker.publishers(of: "roomcast/aggregator/lease").isEmpty)
        #expect(broker.publishers(of: "roomcast/presence/").isEmpty)
        #expect(broker.log.contains("roomcast-aggregator-alpha"), "alpha connected")
        a.send(SIGTERM)
        await a.waitForExit()
        await feeder.stop()
        await broker.cleanup()
    }

    /// Both instances killed one after the other, in either order: the site status stays `online`
    /// across the first death (no flap: a standby or the active one is left) and ends `offline`
    /// with the second (the survivor's status guard connection has the will for it).
    @Test(arguments: ["alpha", "beta"])
    func siteStatusEndsOfflineWhenTheLastInstanceDies(killFirst: String) async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let configPath = "\(dir)/site.json"
        try LiveRig.config(port: broker.port, rooms: Home.rooms, nodes: Home.nodes, beacons: Home.beacons, standbyLease: 3)
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        let observer = try await Observer(port: broker.port)
        let status = "roomcast/aggregator/status"
        func guardConnections(_ name: String) -> Int {
            broker.log.components(separatedBy: "as roomcast-aggregator-\(name)-guard ").count - 1
        }

        let a = try LiveRig.startAggregator(configPath: configPath, instance: "alpha", in: dir)
        defer { a.send(SIGKILL) }
        try await observer.waitFor("alpha to hold the lease and say online") { _ in
            Self.leaseHolder(observer) == "alpha" && observer.last(status) == "online"
        }
        try await eventually("alpha, alone, to arm its status guard", timeout: .seconds(10)) { guardConnections("alpha") == 1 }
        let b = try LiveRig.startAggregator(configPath: configPath, instance: "beta", in: dir)
        defer { b.send(SIGKILL) }
        try await observer.waitFor("beta to announce itself") { _ in observer.last("roomcast/aggregator/instances/beta") == "online" }
        try await eventually("alpha to disarm its guard now that beta lives", timeout: .seconds(10)) {
            broker.log.contains("Client roomcast-aggregator-alpha-guard disconnected")
        }

        let (first, survivor, survivorName) = killFirst == "alpha" ? (a, b, "beta") : (b, a, "alpha")
        let before = observer.seen.elements.count
        let guardsBefore = guardConnections(survivorName)
        first.send(SIGKILL)
        await first.waitForExit()
        try await observer.waitFor("\(survivorName) to hold the lease") { _ in Self.leaseHolder(observer) == survivorName }
        try await eventually("\(survivorName), now alone, to arm its status guard", timeout: .seconds(10)) {
            guardConnections(survivorName) > guardsBefore
        }
        // The `online` it sent as it took over goes on its main connection (the guard was not
        // armed yet): two lease renewals after that connection's, which it sends in order, say
        // it has reached the broker. Killed before, it could land after the guard's will.
        let renewals = observer.seen.elements.filter { $0.topic == "roomcast/aggregator/lease" }.count
        try await observer.waitFor("\(survivorName) to renew its lease twice more") { all in
            all.filter { $0.topic == "roomcast/aggregator/lease" }.count >= renewals + 2
        }
        let statusAcrossFirstDeath = observer.seen.elements.dropFirst(before).filter { $0.topic == status }
            .map { String(decoding: $0.payload, as: UTF8.self) }
        #expect(!statusAcrossFirstDeath.contains("offline"), "the site status flapped: \(statusAcrossFirstDeath)")
        #expect(observer.last(status) == "online")
        #expect(observer.last("roomcast/aggregator/instances/\(killFirst)") == "offline")

        survivor.send(SIGKILL)
        await survivor.waitForExit()
        // Two connections, two wills: the broker may read them in either order.
        try await observer.waitFor("the site status and the survivor's liveness to end offline") { _ in
            observer.last(status) == "offline" && observer.last("roomcast/aggregator/instances/\(survivorName)") == "offline"
        }
        await observer.stop()
        await broker.cleanup()
    }

    @Test func presenceCrossesABridgeFromTheNodesBroker() async throws {
        let nodesBroker = try await MosquittoBroker.start()
        let central = try await MosquittoBroker.start(.init(extraConfig: [
            "connection building-a",
            "address 127.0.0.1:\(nodesBroker.port)",
            "topic roomcast/nodes/# in 1",
            "cleansession true",
            "restart_timeout 1",
            "bridge_protocol_version mqttv311",
        ]))
        let dir = try LiveRig.workDirectory()
        let configPath = "\(dir)/site.json"
        try LiveRig.config(port: central.port, rooms: Home.rooms, nodes: Home.nodes, beacons: Home.beacons)
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        let observer = try await Observer(port: central.port)
        let nodesSide = try await Observer(port: nodesBroker.port)
        let aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "central", in: dir)
        defer { aggregator.send(SIGKILL) }
        let feeder = try await ReadingFeeder(port: nodesBroker.port)
        feeder.set(Home.dog, node: "kitchen-pi", rssi: -52)
        feeder.set(Home.dog, node: "office-pi", rssi: -79)
        try await observer.waitForRoom(Home.dog, "kitchen", timeout: .seconds(20))
        try await observer.waitFor("kitchen occupancy") { _ in observer.last("roomcast/rooms/kitchen")?.contains(Home.dog.rawValue) == true }
        // Only the configured direction is bridged: output stays on the central broker.
        #expect(nodesSide.presence(Home.dog).isEmpty)
        await feeder.stop()
        await observer.stop()
        await nodesSide.stop()
        await central.cleanup()
        await nodesBroker.cleanup()
    }

    @Test func partitionsWithStandbyElectIndependently() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        try LiveRig.writeFloorPartitions(port: broker.port, in: dir, standbyLease: 3)
        let observer = try await Observer(port: broker.port)
        let feeder = try await ReadingFeeder(port: broker.port)
        feeder.set(Home.cat, node: "office-pi", rssi: -55)
        feeder.set(Home.dog, node: "kitchen-pi", rssi: -55)
        let ground = try LiveRig.startAggregator(configPath: "\(dir)/floor0.json", instance: "ground", in: dir)
        defer { ground.send(SIGKILL) }
        let upstairs = try LiveRig.startAggregator(configPath: "\(dir)/floor1.json", instance: "upstairs", in: dir)
        defer { upstairs.send(SIGKILL) }
        // Each partition's instance holds its own lease, so both publish: one shared lease
        // would leave one partition without an active aggregator.
        try await observer.waitForRoom(Home.dog, "kitchen")
        try await observer.waitForRoom(Home.cat, "office")
        #expect(observer.last("roomcast/aggregator/lease/floors-0")?.contains("\"holder\":\"ground\"") == true)
        #expect(observer.last("roomcast/aggregator/lease/floors-1")?.contains("\"holder\":\"upstairs\"") == true)
        #expect(broker.publishers(of: "roomcast/presence/") == ["roomcast-aggregator-ground", "roomcast-aggregator-upstairs"])
        await feeder.stop()
        await observer.stop()
        await broker.cleanup()
    }

    /// After its start an aggregator clears the Roomcast configs on the broker that nobody
    /// wants any more (a beacon taken out of the config). Partitions share the broker: one
    /// starting later clears the stale config, and leaves the other partition's room and node
    /// devices, which are that partition's, not stale.
    @Test func aPartitionClearsStaleConfigsButNotAnotherPartitionsDevices() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        try LiveRig.writeFloorPartitions(port: broker.port, in: dir)
        let observer = try await Observer(port: broker.port)
        let feeder = try await ReadingFeeder(port: broker.port)
        let office = "homeassistant/device/roomcast_room_office/config", officeNode = "homeassistant/device/roomcast_node_office_pi/config"
        // Configs of beacons taken out of the config, one for each aggregator to clear: that the
        // first is cleared says the upstairs aggregator has reconciled, so what clears the
        // second is the ground floor's.
        func stale(_ minor: Int) -> String {
            "homeassistant/device/roomcast_beacon_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_9_\(minor)/config"
        }
        func leaveStale(_ topic: String) async throws {
            try feeder.publish(MQTTMessage(topic: topic, string: #"{"availability":[{"topic":"roomcast/aggregator/status"}],"device":{"identifiers":["gone"]},"cmps":{}}"#, qos: .atLeastOnce, retain: true))
            try await observer.waitFor("\(topic) on the broker") { _ in observer.last(topic)?.isEmpty == false }
        }
        try await leaveStale(stale(1))
        let upstairs = try LiveRig.startAggregator(configPath: "\(dir)/floor1.json", instance: "upstairs", in: dir)
        defer { upstairs.send(SIGKILL) }
        try await observer.waitFor("the upstairs partition's devices, and its reconciling", timeout: .seconds(20)) { _ in
            observer.last(office)?.isEmpty == false && observer.last(officeNode)?.isEmpty == false && observer.last(stale(1))?.isEmpty == true
        }
        try await leaveStale(stale(2))
        let ground = try LiveRig.startAggregator(configPath: "\(dir)/floor0.json", instance: "ground", in: dir)
        defer { ground.send(SIGKILL) }
        // The site lists its beacons, so the stale one goes before the ground floor's start.
        try await observer.waitFor("the ground floor's aggregator to clear the stale config and start", timeout: .seconds(20)) { _ in
            observer.last(stale(2))?.isEmpty == true && observer.last("homeassistant/device/roomcast_room_kitchen/config")?.isEmpty == false
        }
        #expect(observer.last(office)?.isEmpty == false)
        #expect(observer.last(officeNode)?.isEmpty == false)
        await feeder.stop()
        await observer.stop()
        await broker.cleanup()
    }

    /// The cat walks downstairs, from one partition's rooms into the other's: the upstairs
    /// aggregator stops hearing it and hands it over instead of declaring it away on the
    /// presence topic both publish on. Its room upstairs empties and says so with a leave
    /// event, and the cat's presence, refreshed every second by both, stays in the kitchen.
    @Test func aBeaconWalkingIntoAnotherPartitionStaysInItsNewRoom() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        try LiveRig.writeFloorPartitions(port: broker.port, in: dir, discovery: false, refresh: 1, awayTimeout: 4)
        let observer = try await Observer(port: broker.port)
        let feeder = try await ReadingFeeder(port: broker.port)
        feeder.set(Home.cat, node: "office-pi", rssi: -55)
        let ground = try LiveRig.startAggregator(configPath: "\(dir)/floor0.json", instance: "ground", in: dir)
        defer { ground.send(SIGKILL) }
        let upstairs = try LiveRig.startAggregator(configPath: "\(dir)/floor1.json", instance: "upstairs", in: dir)
        defer { upstairs.send(SIGKILL) }
        try await observer.waitForRoom(Home.cat, "office", timeout: .seconds(20))

        feeder.set(Home.cat, node: "office-pi", rssi: nil)
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -55)
        try await observer.waitForRoom(Home.cat, "kitchen", timeout: .seconds(20))
        // Until its away timeout the upstairs aggregator still has the cat in the office (and
        // refreshes that); then it lets go.
        try await observer.waitFor("the office emptied upstairs", timeout: .seconds(20)) { _ in
            observer.events().contains { $0.event == .leave && $0.room == "office" && $0.id == Home.cat }
                && observer.last("roomcast/rooms/office").map { !$0.contains(Home.cat.rawValue) } == true
        }
        let handedOver = observer.presence(Home.cat).count
        // Refreshes from both aggregators after the hand-over: every presence says the kitchen.
        try await observer.waitForRefreshes(of: [Home.cat], 4, after: observer.seen.elements.count)
        let since = observer.presence(Home.cat).dropFirst(handedOver)
        #expect(!since.isEmpty && since.allSatisfy { $0.room == "kitchen" }, "\(since.map { $0.room ?? "away" })")
        await feeder.stop()
        await observer.stop()
        await broker.cleanup()
    }

    @Test func partitionedAggregatorDecidesOnlyForItsFloor() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let configPath = "\(dir)/site.json"
        let rooms = Home.rooms + [LiveRig.Room(name: "bedroom", floor: 1)]
        let nodes = Home.nodes + [LiveRig.Node(name: "bedroom-pi", room: "bedroom")]
        try LiveRig.config(port: broker.port, rooms: rooms, nodes: nodes, beacons: Home.beacons, partitionFloors: [1], refresh: 1)
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        let observer = try await Observer(port: broker.port)
        let feeder = try await ReadingFeeder(port: broker.port)
        let aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "floor1", in: dir)
        defer { aggregator.send(SIGKILL) }
        // The cat is loudest in the kitchen (floor 0) but heard upstairs too: this partition
        // only weighs its own nodes, so it places the cat in the best floor-1 room.
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -50)
        feeder.set(Home.cat, node: "office-pi", rssi: -62)
        feeder.set(Home.cat, node: "bedroom-pi", rssi: -80)
        // The dog is heard only on floor 0: not this partition's business.
        feeder.set(Home.dog, node: "kitchen-pi", rssi: -50)
        try await observer.waitForRoom(Home.cat, "office")
        try await observer.waitFor("floor-1 rooms and discovery") { _ in
            observer.last("roomcast/rooms/bedroom") != nil
                && observer.last("homeassistant/device/roomcast_node_office_pi/config") != nil
        }
        // At least two seconds more of deciding with the dog's readings coming in (the resume
        // window's end may add one refresh), for a leak to show.
        try await observer.waitForRefreshes(of: [Home.cat], 4, after: observer.seen.elements.count)
        #expect(observer.presence(Home.dog).isEmpty)
        #expect(observer.last("roomcast/rooms/kitchen") == nil)
        #expect(observer.last("homeassistant/device/roomcast_room_kitchen/config") == nil)
        #expect(observer.last("homeassistant/device/roomcast_node_kitchen_pi/config") == nil)
        #expect(observer.presence(Home.cat).allSatisfy { $0.room == "office" })
        #expect(observer.presence(Home.cat).allSatisfy { $0.evidence.allSatisfy { $0.node != "kitchen-pi" } })
        await feeder.stop()
        await observer.stop()
        await broker.cleanup()
    }
}
