import Foundation
import RoomcastMQTT
import Shared
import Testing
import TestSupport

/// Client-id takeover on the shipped broker: the programs' client ids are predictable
/// (`roomcast-<node>`, `roomcast-aggregator-<instance>`), so any account could connect with
/// one, and mosquitto would disconnect the real client and publish its Last Will.
extension LockedDownBrokerTests {
    static let pet = BeaconID("ibeacon:5a1d7c2e-93b4-4e0f-8f61-2c7a9d3e4b10-7-1")!
    static let homeRooms = [LiveRig.Room(name: "kitchen", floor: 0), LiveRig.Room(name: "hall", floor: 0)]
    static let homeNodes = [LiveRig.Node(name: "kitchen-pi", room: "kitchen"), LiveRig.Node(name: "hall-pi", room: "hall")]

    /// A node's connection made the way `edge-agent run` makes it (client id `roomcast-<node>`,
    /// retained `offline` Last Will), feeding readings like an agent.
    static func node(_ name: String, on broker: LockedDownBroker) async throws -> ReadingFeeder {
        let will = OutboundMessage(topic: Topics().nodeStatus(name), text: "offline", retain: true, qos: 1)
        let client = try MQTTClient(configuration: broker.mqttConfig(name).clientConfiguration(clientID: "roomcast-\(name)", will: will),
                                    logger: .silent)
        let feeder = try await ReadingFeeder(client: client)
        try feeder.publish(MQTTMessage(topic: Topics().nodeStatus(name), string: "online", qos: .atLeastOnce, retain: true))
        return feeder
    }

    @Test(.requiresMosquitto) func anotherAccountUsingANodesOrTheAggregatorsClientIDDisplacesNobodyAndNoWillFires() async throws {
        let broker = try await LockedDownBroker.start()
        let dir = broker.directory
        let instance = "locked"
        let sitePath = "\(dir)/site.json"
        try LiveRig.config(port: broker.port, rooms: Self.homeRooms, nodes: Self.homeNodes,
                           beacons: [LiveRig.Beacon(id: Self.pet, name: "Pet")], discovery: false, refresh: 1,
                           mqtt: broker.mqttSection("aggregator"))
            .write(toFile: sitePath, atomically: true, encoding: .utf8)
        let observer = try await Observer(client: broker.client("homeassistant"), filters: ["roomcast/#"])
        try await observer.client.waitUntilConnected(timeout: .seconds(10))
        let aggregatorLog = "\(dir)/aggregator.log"
        let aggregator = try ChildProcess(try LiveRig.executable("aggregator"), ["run", "--config", sitePath, "--instance", instance],
                                          stdoutPath: aggregatorLog, stderrPath: aggregatorLog,
                                          environment: LockedDownBroker.environment("aggregator"))
        var nodes: [String: ReadingFeeder] = [:]
        let logs = { "aggregator:\n\(((try? String(contentsOfFile: aggregatorLog, encoding: .utf8)) ?? "").suffix(2000))\nbroker:\n\(broker.log.suffix(3000))" }
        do {
            for n in Self.homeNodes { nodes[n.name] = try await Self.node(n.name, on: broker) }
            try await observer.waitFor("the aggregator online", timeout: .seconds(20)) { _ in observer.last("roomcast/aggregator/status") == "online" }

            // The normal switch time: the pet goes from the kitchen to the hall.
            nodes["kitchen-pi"]!.set(Self.pet, node: "kitchen-pi", rssi: -55)
            nodes["hall-pi"]!.set(Self.pet, node: "hall-pi", rssi: -85)
            try await observer.waitForRoom(Self.pet, "kitchen", timeout: .seconds(30))
            let switchBefore = try await Self.move(Self.pet, to: "hall", nodes: nodes, observer: observer)

            // The attacks: the read-only dashboard and another node (office-pi, whose password an
            // attacker holding one Pi has) each connect with hall-pi's and with the aggregator's id.
            let mark = observer.seen.elements.count
            let failuresBefore = nodes.values.map(\.publishFailures).reduce(0, +)
            let attackFrom = FaultRig.now
            var outcomes: [String] = []
            for account in ["dashboard", "office-pi"] {
                for target in ["roomcast-hall-pi", "roomcast-aggregator-\(instance)"] {
                    let attacker = try broker.client(account, clientID: target)
                    attacker.start()
                    var outcome = "refused"
                    do {
                        try await attacker.waitUntilConnected(timeout: .seconds(10))
                        outcome = broker.log.contains(" as \(account) (") ? "connected, renamed \(account)" : "connected as \(target)"
                    } catch { outcome = "refused (\(error))" }
                    // While the attacker is (or keeps trying to be) connected, the aggregator must go on
                    // deciding: three refreshes (1 s apart) stamped after the attack began.
                    let since = FaultRig.now
                    try await observer.waitFor("3 decisions while \(account) holds \(target)", timeout: .seconds(20)) { _ in
                        observer.presence(Self.pet).filter { $0.ts > since }.count >= 3
                    }
                    await attacker.shutdown()
                    outcomes.append("\(account) as \(target): \(outcome)")
                }
            }
            let attackEnd = FaultRig.now

            let during = observer.seen.elements.dropFirst(mark)
            let statusTopic = { (t: String) in t == "roomcast/aggregator/status" || t.hasPrefix("roomcast/aggregator/instances/")
                || (t.hasPrefix("roomcast/nodes/") && t.hasSuffix("/status")) }
            let offline = during.filter { statusTopic($0.topic) && $0.payloadString == "offline" }
            #expect(offline.isEmpty, "Last Wills fired: \(offline.map(\.topic))\n\(logs())")
            for (name, feeder) in nodes.sorted(by: { $0.key < $1.key }) {
                #expect(feeder.reconnects == 0, "\(name) was disconnected \(feeder.reconnects) times\n\(logs())")
            }
            let aggregatorText = (try? String(contentsOfFile: aggregatorLog, encoding: .utf8)) ?? ""
            let aggregatorDrops = aggregatorText.components(separatedBy: "mqtt connection lost").count - 1
            #expect(aggregatorDrops == 0, "the aggregator lost its connection \(aggregatorDrops) times\n\(logs())")
            #expect(!broker.log.contains("already connected, closing old connection"), "the broker displaced a client\n\(logs())")
            let lost = nodes.values.map(\.publishFailures).reduce(0, +) - failuresBefore

            // Still doing its job: decisions' ts advance, and the pet is followed back to the kitchen as fast as before.
            let afterAttack = FaultRig.now
            try await observer.waitFor("a decision stamped after the attacks") { _ in
                observer.presence(Self.pet).contains { $0.ts > afterAttack }
            }
            let firstFresh = (observer.presence(Self.pet).first { $0.ts > afterAttack }?.ts ?? afterAttack) - attackEnd
            let switchAfter = try await Self.move(Self.pet, to: "kitchen", nodes: nodes, observer: observer)
            #expect(switchAfter <= switchBefore * 1.5 + 2, "switch took \(switchAfter) s after the attacks, \(switchBefore) s before")
            let stamps = observer.presence(Self.pet).map(\.ts)
            #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 <= $1 }, "decision ts went backwards")
            print("""
                fault: takeover attempt (dashboard and office-pi as roomcast-hall-pi and roomcast-aggregator-\(instance), \
                \(String(format: "%.1f", attackEnd - attackFrom)) s) lost=\(lost) offline=\(offline.count) \
                node_reconnects=\(nodes.values.map(\.reconnects).reduce(0, +)) aggregator_drops=\(aggregatorDrops) \
                recovery=\(String(format: "%.2f", max(0, firstFresh))) s (first fresh decision after the attacks); \
                switch before=\(String(format: "%.2f", switchBefore)) s after=\(String(format: "%.2f", switchAfter)) s; \
                \(outcomes.joined(separator: "; "))
                """)
        } catch {
            Issue.record("\(error)\n\(logs())")
        }
        for f in nodes.values { await f.stop() }
        await observer.stop()
        aggregator.send(SIGTERM)
        await aggregator.waitForExit()
        await broker.stop()
    }

    /// Hot standby with the guard's account never made on the shipped broker: the guard keeps
    /// failing to log in. The site status was left out of the main connection's last messages
    /// for the guard to send, which it could not: the last instance's stop left the site
    /// `online` for good.
    @Test(.requiresMosquitto) func aStopWithAGuardThatNeverConnectedStillSaysTheSiteIsOffline() async throws {
        let broker = try await LockedDownBroker.start(leavingOut: ["aggregator-guard"])
        let dir = broker.directory
        let observer = try await Observer(client: broker.client("homeassistant"), filters: ["roomcast/#"])
        try await observer.client.waitUntilConnected(timeout: .seconds(10))
        let path = "\(dir)/site.json"
        try LiveRig.config(port: broker.port, rooms: Self.homeRooms, nodes: Self.homeNodes,
                           beacons: [LiveRig.Beacon(id: Self.pet, name: "Pet")], standbyLease: 3, discovery: false, refresh: 1,
                           mqtt: broker.mqttSection("aggregator"))
            .write(toFile: path, atomically: true, encoding: .utf8)
        let log = "\(dir)/aggregator.log"
        let aggregator = try ChildProcess(try LiveRig.executable("aggregator"), ["run", "--config", path, "--instance", "alpha"],
                                          stdoutPath: log, stderrPath: log, environment: LockedDownBroker.environment("aggregator"))
        defer { aggregator.send(SIGKILL) }
        let status = "roomcast/aggregator/status"
        try await observer.waitFor("alpha to hold the lease and say online", timeout: .seconds(20)) { _ in
            StandbyAndScaleTests.leaseHolder(observer) == "alpha" && observer.last(status) == "online"
        }
        try await eventually("the guard's login to be refused", timeout: .seconds(20), detail: { aggregator.stderr.suffix(2000).description }) {
            aggregator.stderr.contains("roomcast-aggregator-alpha-guard mqtt.error=\"MQTT broker 127.0.0.1:\(broker.port) refused the connection: not authorised")
        }
        aggregator.send(SIGTERM)
        let exit = await aggregator.waitForExit()
        // Its log says why, when it is not a clean stop (an ASan pass once saw another status).
        #expect(exit == 0, "exit status \(exit): \(aggregator.stderr.suffix(3000))")
        try await observer.waitFor("the site offline once the last instance stopped", timeout: .seconds(10)) { _ in
            observer.last(status) == "offline"
        }
        await observer.stop()
        await broker.stop()
    }

    /// Hot standby on the shipped broker: each instance logs in with its own account
    /// (`aggregator`, `aggregator-standby`) and its status guard with `<account>-guard`, so no
    /// two of its connections share a client id; the take-over keeps the site status `online`,
    /// and another account using an instance's or a guard's client id displaces nobody.
    @Test(.requiresMosquitto) func aHotStandbyPairAndItsGuardsWorkOnTheShippedBrokerAndNoAccountDisplacesThem() async throws {
        let broker = try await LockedDownBroker.start()
        let dir = broker.directory
        let accounts = ["alpha": "aggregator", "beta": "aggregator-standby"]
        let observer = try await Observer(client: broker.client("homeassistant"), filters: ["roomcast/#"])
        try await observer.client.waitUntilConnected(timeout: .seconds(10))
        let kitchen = try await Self.node("kitchen-pi", on: broker)
        kitchen.set(Self.pet, node: "kitchen-pi", rssi: -55)
        var processes: [String: ChildProcess] = [:]
        func start(_ instance: String) throws {
            let path = "\(dir)/site-\(instance).json"
            try LiveRig.config(port: broker.port, rooms: Self.homeRooms, nodes: Self.homeNodes,
                               beacons: [LiveRig.Beacon(id: Self.pet, name: "Pet")], standbyLease: 3, discovery: false, refresh: 1,
                               mqtt: broker.mqttSection(accounts[instance]!))
                .write(toFile: path, atomically: true, encoding: .utf8)
            let log = "\(dir)/aggregator-\(instance).log"
            processes[instance] = try ChildProcess(try LiveRig.executable("aggregator"), ["run", "--config", path, "--instance", instance],
                                                   stdoutPath: log, stderrPath: log, environment: LockedDownBroker.environment(accounts[instance]!))
        }
        func connections(_ account: String) -> Int { broker.log.components(separatedBy: " as \(account) (").count - 1 }
        let logs = {
            ["alpha", "beta"].map { "aggregator \($0):\n" + (((try? String(contentsOfFile: "\(dir)/aggregator-\($0).log", encoding: .utf8)) ?? "").suffix(1500)) }
                .joined(separator: "\n") + "\nbroker:\n\(broker.log.suffix(2500))"
        }
        let status = "roomcast/aggregator/status"
        do {
            try start("alpha")
            try await observer.waitFor("alpha to hold the lease and say online", timeout: .seconds(20)) { _ in
                StandbyAndScaleTests.leaseHolder(observer) == "alpha" && observer.last(status) == "online"
            }
            try await eventually("alpha, alone, to arm its status guard as aggregator-guard", timeout: .seconds(10), detail: logs) {
                connections("aggregator-guard") == 1
            }
            let mark = observer.seen.elements.count
            for account in ["dashboard", "office-pi"] {
                for target in ["roomcast-aggregator-alpha-guard", "roomcast-aggregator-alpha"] {
                    let attacker = try broker.client(account, clientID: target)
                    attacker.start()
                    _ = try? await attacker.waitUntilConnected(timeout: .seconds(10))
                    let since = FaultRig.now
                    try await observer.waitFor("2 decisions while \(account) holds \(target)", timeout: .seconds(20)) { _ in
                        observer.presence(Self.pet).filter { $0.ts > since }.count >= 2
                    }
                    await attacker.shutdown()
                }
            }
            try start("beta")
            try await observer.waitFor("beta to announce itself", timeout: .seconds(20)) { _ in
                observer.last("roomcast/aggregator/instances/beta") == "online"
            }
            try await eventually("alpha to disarm its guard now that beta lives", timeout: .seconds(10), detail: logs) {
                broker.log.contains("Client aggregator-guard disconnected")
            }
            let killedAt = ContinuousClock.now
            processes["alpha"]!.send(SIGKILL)
            await processes["alpha"]!.waitForExit()
            try await observer.waitFor("beta to take the lease", timeout: .seconds(10)) { _ in StandbyAndScaleTests.leaseHolder(observer) == "beta" }
            let tookLease = ContinuousClock.now - killedAt
            try await eventually("beta, now alone, to arm its guard as aggregator-standby-guard", timeout: .seconds(10), detail: logs) {
                connections("aggregator-standby-guard") == 1
            }
            let since = FaultRig.now
            try await observer.waitFor("beta's decisions", timeout: .seconds(10)) { _ in
                observer.presence(Self.pet).contains { $0.ts > since && $0.room == "kitchen" }
            }
            let statuses = observer.seen.elements.dropFirst(mark).filter { $0.topic == status }.map(\.payloadString)
            #expect(!statuses.contains("offline"), "the site status flapped: \(statuses)\n\(logs())")
            #expect(observer.last(status) == "online")
            #expect(observer.last("roomcast/aggregator/instances/alpha") == "offline", "alpha's own will says it died")
            #expect(!broker.log.contains("already connected, closing old connection"), "the broker displaced a client\n\(logs())")
            #expect(kitchen.reconnects == 0)
            print("fault: takeover attempt (dashboard and office-pi as roomcast-aggregator-alpha and its guard, standby pair) "
                  + "site offline=\(statuses.filter { $0 == "offline" }.count); standby take-over after SIGKILL: lease after \(tookLease)")
            // The last instance stopping says the site is offline, through its guard.
            processes["beta"]!.send(SIGTERM)
            await processes["beta"]!.waitForExit()
            try await observer.waitFor("the site offline once the last instance stopped", timeout: .seconds(10)) { _ in
                observer.last(status) == "offline"
            }
        } catch {
            Issue.record("\(error)\n\(logs())")
        }
        for p in processes.values { p.send(SIGTERM) }
        for p in processes.values { await p.waitForExit() }
        await kitchen.stop()
        await observer.stop()
        await broker.stop()
    }

    /// Moves `id`'s readings to the node of `room` (strong there, weak at the other); returns the
    /// seconds until its presence says `room`.
    static func move(_ id: BeaconID, to room: String, nodes: [String: ReadingFeeder], observer: Observer) async throws -> Double {
        let from = ContinuousClock.now
        for n in homeNodes { nodes[n.name]!.set(id, node: n.name, rssi: n.room == room ? -55 : -85) }
        let at = try await observer.waitForRoom(id, room, timeout: .seconds(30))
        let d = at - from
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
