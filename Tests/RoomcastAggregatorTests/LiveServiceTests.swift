import Foundation
import RoomcastMQTT
import Shared
import Testing
import TestSupport
import RoomcastAggregator
import RoomcastConfig
import RoomcastYAML

/// A two-room home used by the live tests: a cat and a dog, one node per room.
enum Home {
    static let cat = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1-1")!
    static let dog = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1-2")!
    static let rooms = [LiveRig.Room(name: "kitchen", floor: 0), LiveRig.Room(name: "office", floor: 1)]
    static let nodes = [LiveRig.Node(name: "kitchen-pi", room: "kitchen"), LiveRig.Node(name: "office-pi", room: "office")]
    static let beacons = [LiveRig.Beacon(id: cat, name: "Cat"), LiveRig.Beacon(id: dog, name: "Dog")]

    /// Writes this home's aggregator config to `<dir>/site.json`; returns its path.
    static func writeConfig(port: Int, in dir: String, refresh: Double = 60) throws -> String {
        let path = "\(dir)/site.json"
        try LiveRig.config(port: port, rooms: rooms, nodes: nodes, beacons: beacons, refresh: refresh)
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }
}

/// The `aggregator run` process against a real mosquitto, fed readings the way
/// edge agents publish them: retained presence, rooms, events, status; node
/// offline handling; Home Assistant discovery and its clean-up; a restart
/// without a flap.
@Suite(.serialized, .requiresMosquitto) struct LiveServiceTests {
    /// SIGHUP (`kill -HUP` to reload, or the terminal of a run by hand closed) stops the service
    /// as SIGTERM does, and exits 129: under systemd's `Restart=on-failure` the service starts
    /// again and reads its config as it is now (systemd leaves a service that dies of the signal,
    /// or exits 0, stopped).
    @Test func aHangUpStopsCleanlyAndAsksToBeStartedAgain() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let configPath = try Home.writeConfig(port: broker.port, in: dir)
        let observer = try await Observer(port: broker.port)
        let aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        defer { aggregator.send(SIGKILL) }
        try await observer.waitFor("aggregator online") { _ in observer.last("roomcast/aggregator/status") == "online" }
        aggregator.send(SIGHUP)
        let status = try await withTimeout(.seconds(10), "aggregator to exit") { await aggregator.waitForExit() }
        #expect(status == 129, "\(aggregator.stderr.suffix(2000))")
        #expect(aggregator.stderr.contains("restarting the service applies it"), "\(aggregator.stderr.suffix(2000))")
        try await observer.waitFor("status offline") { _ in observer.last("roomcast/aggregator/status") == "offline" }
        await observer.stop()
        await broker.cleanup()
    }

    /// Under `nohup` a hang-up stays ignored: the run outlives its terminal.
    @Test func underNohupAHangUpIsIgnored() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let configPath = try Home.writeConfig(port: broker.port, in: dir)
        let observer = try await Observer(port: broker.port)
        let log = "\(dir)/aggregator-nohup.log"
        let aggregator = try ChildProcess("/usr/bin/nohup", [try LiveRig.executable("aggregator"), "run", "--config", configPath,
                                                             "--instance", "n"], stdoutPath: log, stderrPath: log)
        defer { aggregator.send(SIGKILL) }
        try await observer.waitFor("aggregator online") { _ in observer.last("roomcast/aggregator/status") == "online" }
        aggregator.send(SIGHUP)
        // A second of looking: a hang-up taken would have stopped it within it (the test above).
        try await Task.sleep(for: .seconds(1.5))
        #expect(aggregator.isRunning && observer.last("roomcast/aggregator/status") == "online", "\(aggregator.stderr.suffix(2000))")
        aggregator.send(SIGTERM)
        #expect(try await withTimeout(.seconds(10), "aggregator to exit") { await aggregator.waitForExit() } == 0)
        await observer.stop()
        await broker.cleanup()
    }

    @Test func readingsBecomePresenceRoomsEventsAndStatus() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        // The state in force republished every second: each refresh is a second more of deciding.
        let configPath = try Home.writeConfig(port: broker.port, in: dir, refresh: 1)
        let observer = try await Observer(port: broker.port)
        let feeder = try await ReadingFeeder(port: broker.port)
        let aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        defer { aggregator.send(SIGKILL) }

        try await observer.waitFor("aggregator online") { _ in observer.last("roomcast/aggregator/status") == "online" }
        feeder.set(Home.cat, node: "office-pi", rssi: -55)
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -80)
        for n in ["office-pi", "kitchen-pi"] {
            try feeder.publish(MQTTMessage(topic: "roomcast/nodes/\(n)/status", string: "online", qos: .atLeastOnce, retain: true))
        }
        try await observer.waitForRoom(Home.cat, "office")
        try await observer.waitFor("office occupancy with the cat") { _ in
            guard let text = observer.last("roomcast/rooms/office"),
                  let o = try? WireFormat.decode(RoomOccupancy.self, from: Array(text.utf8)) else { return false }
            return o.occupied && o.beacons == [Home.cat]
        }
        try await observer.waitFor("an enter event") { _ in
            observer.events().contains { $0.event == .enter && $0.id == Home.cat && $0.room == "office" }
        }
        #expect(observer.presence(Home.cat).last?.name == "Cat")

        // The office node goes offline (its Pi restarts) while the cat sits in the office: the
        // node is missing, not silent, so the cat stays, for more than the seconds a switch takes.
        feeder.set(Home.cat, node: "office-pi", rssi: nil)
        let offlineFrom = observer.seen.elements.count
        try feeder.publish(MQTTMessage(topic: "roomcast/nodes/office-pi/status", string: "offline", qos: .atLeastOnce, retain: true))
        try await observer.waitForRefreshes(of: [Home.cat], 6, after: offlineFrom)
        let whileDown = observer.seen.elements.dropFirst(offlineFrom).filter { $0.topic == Topics().presence(Home.cat) }
            .map { (try? WireFormat.decode(PresenceDecision.self, from: $0.payload))?.room }
        #expect(!whileDown.isEmpty && whileDown.allSatisfy { $0 == "office" }, "presence while the office node is down: \(whileDown)")
        #expect(!observer.events().contains { $0.event == .leave }, "no leave while the office node is down")

        // The cat walks into the kitchen with the office node still down: followed.
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -50)
        _ = try await observer.waitForRoom(Home.cat, "kitchen", timeout: .seconds(10))
        try await observer.waitFor("leave office / enter kitchen") { _ in
            let e = observer.events()
            return e.contains { $0.event == .leave && $0.room == "office" } && e.contains { $0.event == .enter && $0.room == "kitchen" }
        }

        // Retained: a late subscriber gets presence, rooms and status at once.
        let late = try await Observer(port: broker.port)
        try await late.waitForRoom(Home.cat, "kitchen", timeout: .seconds(5))
        try await late.waitFor("retained rooms and status") { _ in
            late.last("roomcast/aggregator/status") == "online" && late.last("roomcast/rooms/kitchen") != nil
        }

        // A graceful stop marks the aggregator offline, and says nothing went wrong: its own
        // disconnect is no lost connection, and what it decides while stopping is not dropped
        // output.
        aggregator.send(SIGTERM)
        let status = try await withTimeout(.seconds(10), "aggregator to exit") { await aggregator.waitForExit() }
        #expect(status == 0)
        let stopLog = aggregator.stderr.components(separatedBy: "shutting down").dropFirst().joined()
        #expect(!stopLog.isEmpty && !stopLog.contains("mqtt connection lost") && !stopLog.contains("outbound queue full"),
                "\(aggregator.stderr.suffix(2000))")
        try await observer.waitFor("status offline") { _ in observer.last("roomcast/aggregator/status") == "offline" }
        await late.stop()
        await feeder.stop()
        await observer.stop()
        await broker.cleanup()
    }

    /// The broker's retained presence of a beacon is read before its readings, however they
    /// come: the aggregator subscribes to what is retained first. So its state file, older,
    /// loses to it even while the beacon is heard from the first second: the cat, shown in the
    /// office by the broker's newer copy and heard there, stays there with the broker's `since`,
    /// with no event; the file's kitchen never shows.
    @Test func theBrokersNewerPresenceWinsOverTheStateFileWhileTheBeaconIsHeard() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let configPath = "\(dir)/site.json"
        try LiveRig.config(port: broker.port, rooms: Home.rooms, nodes: Home.nodes, beacons: Home.beacons,
                           stateFile: "\(dir)/learned-rooms.json")
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        let feeder = try await ReadingFeeder(port: broker.port)
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -55)
        let observer = try await Observer(port: broker.port)
        var aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        try await observer.waitForRoom(Home.cat, "kitchen", timeout: .seconds(20))
        aggregator.send(SIGTERM)
        let stopping = aggregator
        _ = try await withTimeout(.seconds(10), "aggregator to exit") { await stopping.waitForExit() }
        let saved = try #require(try LearnedRoomsStore(path: "\(dir)/learned-rooms.json").load())
        #expect(saved.placed.map(\.room) == ["kitchen"])
        await observer.stop()

        // Moved while the aggregator was down, and published so by another instance: newer than
        // the file, which says the kitchen as of the cat's last decision there.
        let now = Date().timeIntervalSince1970 + 1
        let since = (now - 5).rounded(.down)
        var moved = PresenceDecision(id: Home.cat, name: "Cat", room: "office", floor: 1, distance: 1, confidence: 0.9,
                                     node: "office-pi", since: since, lastSeen: now, evidence: [], ts: now)
        moved.reason = "moved_nearest"
        try feeder.publish(MQTTMessage(topic: Topics().presence(Home.cat), payload: try WireFormat.encode(moved), qos: .atLeastOnce, retain: true))
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -80)
        feeder.set(Home.cat, node: "office-pi", rssi: -55)
        let after = try await Observer(port: broker.port)
        try await after.waitFor("the broker's copy") { _ in after.presence(Home.cat).last?.room == "office" }
        let mark = after.seen.elements.count
        aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        defer { aggregator.send(SIGKILL) }
        try await after.waitFor("the restarted aggregator's presence", timeout: .seconds(20)) { seen in
            seen.dropFirst(mark).contains { $0.topic == Topics().presence(Home.cat) }
        }
        // Its first word on the cat: resumed from the file, it would be the kitchen.
        let first = try #require(after.seen.elements.dropFirst(mark).first { $0.topic == Topics().presence(Home.cat) }
            .flatMap { try? WireFormat.decode(PresenceDecision.self, from: $0.payload) })
        #expect(first.room == "office" && abs(first.since - since) < 0.01, "\(first.room ?? "away") since \(first.since) not \(since)\n\(after.summary(30))")
        #expect(!after.events().contains { $0.id == Home.cat }, "\(after.events())")
        await after.stop()
        await feeder.stop()
        await broker.cleanup()
    }

    /// A site that lists no beacons announces each one it places. After a restart the
    /// aggregator clears the configs nobody wants any more; a beacon it placed and announced
    /// again is wanted, so its device stays in Home Assistant.
    @Test func anUnlistedBeaconsDeviceOutlivesARestart() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let configPath = "\(dir)/site.json"
        try LiveRig.config(port: broker.port, rooms: Home.rooms, nodes: Home.nodes, beacons: [], refresh: 1)
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        let cat = "homeassistant/device/roomcast_beacon_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1_1/config"
        let stale = "homeassistant/device/roomcast_beacon_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_9_9/config"
        let observer = try await Observer(port: broker.port)
        let feeder = try await ReadingFeeder(port: broker.port)
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -55)
        var aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        try await observer.waitFor("the cat's device", timeout: .seconds(20)) { _ in observer.last(cat)?.isEmpty == false }
        aggregator.send(SIGTERM)
        let stopping = aggregator
        _ = try await withTimeout(.seconds(10), "aggregator to exit") { await stopping.waitForExit() }

        // A config nobody wants, for the restarted aggregator to clear: that it has is the sign
        // that it has reconciled.
        try feeder.publish(MQTTMessage(topic: stale, string: #"{"availability":[{"topic":"roomcast/aggregator/status"}],"device":{"identifiers":["gone"]},"cmps":{}}"#, qos: .atLeastOnce, retain: true))
        try await observer.waitFor("the stale config on the broker") { _ in observer.last(stale)?.isEmpty == false }
        aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        defer { aggregator.send(SIGKILL) }
        try await observer.waitFor("the stale config cleared", timeout: .seconds(20)) { _ in observer.last(stale) == "" }
        // Deciding on: the cat's presence refreshed every second, in the kitchen.
        try await observer.waitForRefreshes(of: [Home.cat], 3, after: observer.seen.elements.count)
        #expect(observer.presence(Home.cat).last?.room == "kitchen")
        #expect(observer.last(cat)?.isEmpty == false, "\(observer.seen.elements.filter { $0.topic == cat }.map(\.payload.count))")
        await feeder.stop()
        await observer.stop()
        await broker.cleanup()
    }

    @Test func discoveryIsRetainedAndRemovedBeaconsAreCleared() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let configPath = try Home.writeConfig(port: broker.port, in: dir)
        let catSlug = "roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1_1"
        let dogSlug = "roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1_2"
        // One device config per beacon, room, node and the aggregator (device-based discovery).
        let wanted = [
            "homeassistant/device/roomcast_beacon_\(catSlug.dropFirst("roomcast_".count))/config",
            "homeassistant/device/roomcast_aggregator/config",
            "homeassistant/device/roomcast_beacon_\(dogSlug.dropFirst("roomcast_".count))/config",
            "homeassistant/device/roomcast_room_kitchen/config",
            "homeassistant/device/roomcast_room_office/config",
            "homeassistant/device/roomcast_node_office_pi/config",
        ]
        var aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        let first = try await Observer(port: broker.port, filters: ["homeassistant/#"])
        try await first.waitFor("discovery configs") { _ in wanted.allSatisfy { first.last($0)?.isEmpty == false } }
        await first.stop()
        aggregator.send(SIGTERM)
        let stopping = aggregator
        _ = try await withTimeout(.seconds(10), "aggregator to exit") { await stopping.waitForExit() }

        // A late subscriber still gets them: they are retained.
        let retained = try await Observer(port: broker.port, filters: ["homeassistant/#"])
        try await retained.waitFor("retained discovery configs") { _ in wanted.allSatisfy { retained.last($0)?.isEmpty == false } }
        let tracker = try #require(retained.last(wanted[0]))
        #expect(tracker.contains("\"state_topic\":\"roomcast/presence/\(Home.cat.rawValue)\""))
        #expect(tracker.contains("\"unique_id\":\"\(catSlug)_tracker\""))
        #expect(tracker.contains("\"default_entity_id\":\"device_tracker.cat\""))
        await retained.stop()

        // The dog leaves the config: after a restart its entities are cleared, the cat's stay.
        try LiveRig.config(port: broker.port, rooms: Home.rooms, nodes: Home.nodes, beacons: [Home.beacons[0]])
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        let watcher = try await Observer(port: broker.port, filters: ["homeassistant/#"])
        try await watcher.waitFor("retained configs before restart") { _ in watcher.last(wanted[2])?.isEmpty == false }
        aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        defer { aggregator.send(SIGKILL) }
        try await watcher.waitFor("the dog's configs cleared", timeout: .seconds(15)) { _ in
            watcher.last(wanted[2]) == ""
        }
        await watcher.stop()
        let after = try await Observer(port: broker.port, filters: ["homeassistant/#"])
        try await after.waitFor("the cat's configs still retained") { _ in after.last(wanted[0])?.isEmpty == false }
        // Retained state is delivered at once on subscribe; the cat's arrived, so the dog's would have too.
        #expect(after.last(wanted[2]) == nil)
        await after.stop()
        await broker.cleanup()
    }

    @Test func aBrokerRestartedWithoutPersistenceGetsEverythingBack() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let configPath = try Home.writeConfig(port: broker.port, in: dir)
        let aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        defer { aggregator.send(SIGKILL) }
        let feeder = try await ReadingFeeder(port: broker.port)
        feeder.set(Home.cat, node: "office-pi", rssi: -55)
        let observer = try await Observer(port: broker.port)
        try await observer.waitForRoom(Home.cat, "office")

        // The broker forgets every retained message; the aggregator must announce itself
        // again on reconnect instead of waiting for the next periodic refresh (60 s here).
        await broker.stop()
        try await broker.startAgain()
        let fresh = try await Observer(port: broker.port)
        try await fresh.waitFor("status, discovery and presence again", timeout: .seconds(15)) { _ in
            fresh.last("roomcast/aggregator/status") == "online"
                && fresh.last("homeassistant/device/roomcast_room_office/config") != nil
                && fresh.presence(Home.cat).last?.room == "office"
        }
        // And it still decides: the cat walks into the kitchen.
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -50)
        feeder.set(Home.cat, node: "office-pi", rssi: -80)
        try await fresh.waitForRoom(Home.cat, "kitchen", timeout: .seconds(15))
        await fresh.stop()
        await observer.stop()
        await feeder.stop()
        await broker.cleanup()
    }

    /// A restart of a big site republishes every retained output at once (thousands of QoS 1
    /// messages): more than the client keeps unacknowledged, so the service must wait for
    /// acknowledgements instead of dropping the rest.
    @Test func aBigSiteIsRepublishedInFullAfterARestart() async throws {
        let broker = try await MosquittoBroker.start(.init(extraConfig: ["max_queued_messages 0"]))
        let dir = try LiveRig.workDirectory()
        let configPath = "\(dir)/site.json"
        let count = 3000
        let beacons = (1...count).map {
            LiveRig.Beacon(id: BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-\($0)")!, name: "tag \($0)")
        }
        // A long away timeout: on a slow machine (sanitizers) republishing may take longer than 30 s.
        try LiveRig.config(port: broker.port, rooms: Home.rooms, nodes: Home.nodes, beacons: beacons, discovery: false,
                           awayTimeout: 600)
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        // What the previous process left retained: every tag in the kitchen.
        let previous = try LiveRig.client(port: broker.port, id: "previous")
        previous.start()
        try await previous.waitUntilConnected(timeout: .seconds(10))
        let now = Date().timeIntervalSince1970
        for (i, b) in beacons.enumerated() {
            let d = PresenceDecision(id: b.id, name: b.name, room: "kitchen", floor: 0, distance: 1, confidence: 0.9,
                                     node: "kitchen-pi", since: now - 100, lastSeen: now - 1, evidence: [], ts: now - 1)
            try previous.publish(MQTTMessage(topic: Topics().presence(b.id), payload: try WireFormat.encode(d), retain: true))
            if i % 500 == 499 { #expect(await previous.flush(timeout: .seconds(10))) }
        }
        #expect(await previous.flush(timeout: .seconds(10)))
        await previous.shutdown()

        let observer = try await Observer(port: broker.port, filters: ["roomcast/presence/+/room"])
        let aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        defer { aggregator.send(SIGKILL) }
        // Not heard since the restart, but within the away timeout: still in the kitchen.
        try await observer.waitFor("every tag's room republished", timeout: .seconds(90)) { all in
            Set(all.lazy.filter { $0.payloadString == "kitchen" }.map(\.topic)).count == count
        }
        #expect(observer.seen.elements.allSatisfy { $0.payloadString == "kitchen" }, "a restart is not an away")
        await observer.stop()
        await broker.cleanup()
    }

    @Test func killAndRestartDoesNotFlap() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        // The state in force republished every second: each refresh is a second more of deciding.
        let configPath = try Home.writeConfig(port: broker.port, in: dir, refresh: 1)
        let observer = try await Observer(port: broker.port)
        let feeder = try await ReadingFeeder(port: broker.port, jitter: 4)
        // The cat sits near the office/kitchen border: only 3 dB between the nodes, so a
        // fresh engine deciding from its first few readings could easily pick the other room.
        feeder.set(Home.cat, node: "office-pi", rssi: -63)
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -66)
        feeder.set(Home.dog, node: "kitchen-pi", rssi: -60)
        feeder.set(Home.dog, node: "office-pi", rssi: -70)
        var aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        try await observer.waitForRoom(Home.cat, "office")
        try await observer.waitForRoom(Home.dog, "kitchen")
        // The first process's events follow its presence messages in the same batch, and from a
        // fresh start it may place the cat in the kitchen before the office: everything before
        // the restart has arrived once each beacon's latest event enters the room it is shown in.
        try await observer.waitFor("the first process's events up to the rooms shown") { _ in
            let events = observer.events()
            return [(Home.cat, "office"), (Home.dog, "kitchen")].allSatisfy { id, room in
                guard let latest = events.last(where: { $0.id == id }) else { return false }
                return latest.event == .enter && latest.room == room
            }
        }
        let before = observer.seen.elements.count

        aggregator.send(SIGKILL)
        await aggregator.waitForExit()
        try await observer.waitFor("the Last Will") { _ in observer.last("roomcast/aggregator/status") == "offline" }
        let restarted = observer.seen.elements.count
        aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        defer { aggregator.send(SIGKILL) }
        try await observer.waitFor("online again") { _ in observer.last("roomcast/aggregator/status") == "online" }
        // Long enough for fresh decisions from the new process and for the resume window to pass.
        try await observer.waitFor("presence republished by the new process", timeout: .seconds(15)) { all in
            all.dropFirst(restarted).filter { $0.topic == Topics().presence(Home.cat) }.count >= 1
                && all.dropFirst(restarted).filter { $0.topic == Topics().presence(Home.dog) }.count >= 1
        }
        // At least three seconds more of deciding (the resume window's end adds one refresh), for a flap to show.
        try await observer.waitForRefreshes(of: [Home.cat, Home.dog], 5, after: observer.seen.elements.count)

        let after = Array(observer.seen.elements.dropFirst(before))
        let events = after.filter { $0.topic == Topics().events }.map { String(decoding: $0.payload, as: UTF8.self) }
        #expect(events.isEmpty, "events across the restart: \(events)")
        for (id, room) in [(Home.cat, "office"), (Home.dog, "kitchen")] {
            let rooms = after.filter { $0.topic == Topics().presence(id) }
                .map { (try? WireFormat.decode(PresenceDecision.self, from: $0.payload))?.room }
            #expect(rooms.allSatisfy { $0 == room }, "presence of \(id) across the restart: \(rooms)")
        }
        // The new process does its job, not only holds still: the cat walks into the kitchen.
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -50)
        feeder.set(Home.cat, node: "office-pi", rssi: -80)
        try await observer.waitForRoom(Home.cat, "kitchen", timeout: .seconds(15))
        try await observer.waitFor("leave office / enter kitchen for the cat") { _ in
            observer.events().contains { $0.id == Home.cat && $0.event == .enter && $0.room == "kitchen" }
        }
        await feeder.stop()
        await observer.stop()
        await broker.cleanup()
    }
}

/// The whole system as a user runs it: a simulated home from `roomcast-sim`, one
/// real `edge-agent` per node replaying its capture at 6× (2× under a sanitizer) into mosquitto,
/// and the real `aggregator`: beacons that stay in one room are placed there. (90 s at 6×:
/// 15 s of replay for all of them to be right at once.)
@Suite(.serialized, .requiresMosquitto) struct SimulatedHomeTests {
    @Test func edgeAgentsReplayingAHomeLeadToTheTrueRooms() async throws {
        let dir = try LiveRig.workDirectory()
        let home = "\(dir)/home"
        try await ChildProcess.run(try LiveRig.executable("roomcast-sim"),
                                   ["generate", "--layout", "house", "--seed", "4", "--duration", "90", "--node-beacons",
                                    "--out", home], in: dir)
        // Every node also advertises its own beacon: calibration, never a presence.
        let nodeBeacons = try ConfigLoader.load(AggregatorConfig.self, from: "\(home)/site.yaml").nodes.compactMap(\.beacon)
        try #require(nodeBeacons.count == 8)
        // Beacons whose truth is one room for the whole capture.
        struct Truth: Decodable { var id: String; var t0: Double; var t1: Double; var room: String }
        let truth = try String(contentsOfFile: "\(home)/truth.jsonl", encoding: .utf8).split(separator: "\n")
            .map { try JSONDecoder().decode(Truth.self, from: Data($0.utf8)) }
        let spans = Dictionary(grouping: truth, by: \.id)
        let still = spans.compactMapValues { $0.count == 1 ? $0[0].room : nil }
        try #require(!still.isEmpty)

        let broker = try await MosquittoBroker.start()
        let url = "mqtt://127.0.0.1:\(broker.port)"
        let observer = try await Observer(port: broker.port)
        let aggregator = try ChildProcess(try LiveRig.executable("aggregator"),
                                          ["run", "--config", "\(home)/site.yaml", "--broker", url, "--instance", "sim"],
                                          stdoutPath: "\(dir)/aggregator.log", stderrPath: "\(dir)/aggregator.log")
        defer { aggregator.send(SIGKILL) }
        // A bound, not a pace: under the sanitizer's parallel run an instrumented aggregator once
        // took longer than 10 s to connect and announce itself.
        try await observer.waitFor("aggregator online", timeout: .seconds(60)) { _ in
            observer.last("roomcast/aggregator/status") == "online"
        }
        let captures = try FileManager.default.contentsOfDirectory(atPath: "\(home)/nodes").filter { $0.hasSuffix(".btsnoop") }.sorted()
        // Nine instrumented processes at 6× kept a sanitizer's two cores so busy that readings
        // reached the aggregator 4 s after they were stamped, past fusion's freshness: there the
        // captures go at 2×.
        let speed = SanitizerRun.isActive ? "2" : "6"
        var agents: [ChildProcess] = []
        for capture in captures {
            let node = String(capture.dropLast(".btsnoop".count))
            agents.append(try ChildProcess(try LiveRig.executable("edge-agent"),
                                           ["run", "--config", "\(home)/agent.yaml", "--node", node, "--broker", url,
                                            "--source", "btsnoop:\(home)/nodes/\(capture)", "--speed", speed],
                                           stdoutPath: "\(dir)/\(node).log", stderrPath: "\(dir)/\(node).log"))
        }
        defer { for a in agents { a.send(SIGKILL) } }
        // Presence, the room's occupancy and the enter event must agree at one moment (fusion
        // may place a beacon elsewhere for a while first; that is its accuracy, not the pipeline's).
        // The timeout is a bound, not a pace: a replay that falls behind (nine instrumented
        // processes starting on a busy machine under a sanitizer's pass) still delivers every
        // reading, only later, and a replay that has ended leaves each beacon placed until its
        // away timeout; a pipeline that never places them fails here either way.
        func placed(_ id: String, _ room: String, _ events: [RoomEvent]) -> Bool {
            observer.presence(BeaconID(id)!).last?.room == room
                && observer.last("roomcast/rooms/\(room)")?.contains(id) == true
                && events.contains { $0.id.rawValue == id && $0.event == .enter && $0.room == room }
        }
        // A timeout says, per beacon not yet placed, what the aggregator published of it, and
        // how far each agent's replay got: whether the readings came, and what fusion made of them.
        func unplaced() -> String {
            let events = observer.events()
            let beacons = still.sorted { $0.key < $1.key }.filter { !placed($0.key, $0.value, events) }.map { id, room in
                let rooms = observer.presence(BeaconID(id)!).suffix(6).map { $0.room ?? "away" }
                return "\(id) in \(room): presence \(rooms), occupancy lists it: "
                    + "\(observer.last("roomcast/rooms/\(room)")?.contains(id) == true), enter events: "
                    + "\(events.filter { $0.id.rawValue == id && $0.event == .enter }.map(\.room))"
            }
            let agents = captures.map { capture -> String in
                let log = (try? String(contentsOfFile: "\(dir)/\(capture.dropLast(".btsnoop".count)).log", encoding: .utf8)) ?? ""
                return "\(capture): \(log.split(separator: "\n").suffix(2).joined(separator: " | "))"
            }
            let aggregatorLog = ((try? String(contentsOfFile: "\(dir)/aggregator.log", encoding: .utf8)) ?? "")
                .split(separator: "\n").suffix(15).joined(separator: "\n")
            return (beacons + agents).joined(separator: "\n") + "\naggregator log:\n" + aggregatorLog
        }
        try await eventually("every still beacon in its true room, its occupancy and enter event", timeout: .seconds(90),
                             detail: unplaced) {
            let events = observer.events()
            return still.allSatisfy { placed($0.key, $0.value, events) }
        }
        for id in nodeBeacons { #expect(observer.presence(id).isEmpty, "\(id) published as a presence") }
        // …and the aggregator says what it learned from them, in its log and retained.
        try await eventually("the aggregator to log the receiver calibration", timeout: .seconds(30)) {
            let log = (try? String(contentsOfFile: "\(dir)/aggregator.log", encoding: .utf8)) ?? ""
            return log.contains("receiver calibration") && log.contains("(node beacons)")
        }
        // Receivers join as their links fill up; each change of source is republished.
        let names = Set(captures.map { String($0.dropLast(".btsnoop".count)) })
        func report() -> ReceiverCalibrationReport? {
            observer.last("roomcast/aggregator/calibration")
                .flatMap { try? WireFormat.decode(ReceiverCalibrationReport.self, from: Array($0.utf8)) }
        }
        try await observer.waitFor("every receiver calibrated from node beacons, retained", timeout: .seconds(30)) { _ in
            guard let r = report() else { return false }
            return Set(r.nodes.map(\.node)) == names && r.nodes.allSatisfy { $0.source == .nodeBeacons }
        }
        #expect(report()?.nodes.allSatisfy { abs($0.offsetDb) <= 12 } == true)
        for a in agents { a.send(SIGTERM) }
        for a in agents { _ = try await withTimeout(.seconds(10), "edge-agent to exit") { await a.waitForExit() } }
        await observer.stop()
        await broker.cleanup()
    }
}
