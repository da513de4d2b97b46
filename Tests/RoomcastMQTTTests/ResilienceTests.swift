import Foundation
@testable import RoomcastMQTT
import Shared
import Testing
import TestSupport
import RoomcastLogging

@Suite(.requiresMosquitto, .timeLimit(.minutes(1)))
struct ResilienceTests {
    @Test func resubscribesAfterBrokerRestart() async throws {
        try await withRig { rig in
            let sub = try await rig.connectedClient("sub")
            let events = StreamCollector(sub.connectionEvents)
            try await sub.subscribe("roomcast/+/readings")
            let inbox = StreamCollector(sub.messages)

            try await rig.broker.restart()

            try await events.waitFor("disconnect then reconnect") { e in
                guard let lost = e.firstIndex(where: \.isDisconnected) else { return false }
                return e[lost...].contains(where: \.isConnected)
            }
            #expect(sub.reconnects == 1)
            #expect(sub.isConnected)
            // The fresh broker knows nothing of the old session: only the re-sent subscription delivers this.
            let pub = try await rig.connectedClient("pub")
            try pub.publish(MQTTMessage(topic: "roomcast/hall/readings", string: "after restart", qos: .atLeastOnce))
            let got = try await inbox.waitFor("a message after the restart") { !$0.isEmpty }
            #expect(got.map(\.payloadString) == ["after restart"])
        }
    }

    @Test func firstConnectIsRetriedUntilTheBrokerComesUp() async throws {
        let nobody = try RefusingPort()
        let port = nobody.port
        let logs = InMemoryLogHandler()
        let client = try MQTTClient(configuration: .testing(port: port, id: "early"),
                                    logger: Logger(label: "early", level: .debug, handler: logs))
        let events = StreamCollector(client.connectionEvents)
        client.start()
        let failed = try await events.waitFor("a refused first attempt") { $0.contains { $0.failure != nil } }
        #expect(failed.first?.failure == .connectionRefused(endpoint: "127.0.0.1:\(port)"))
        #expect(throws: MQTTError.notConnected) { try client.publish(MQTTMessage(topic: "x", string: "dropped")) }
        #expect(client.publishFailures == 1)

        nobody.release()
        let broker = try await MosquittoBroker.start(.init(port: port))
        do {
            try await client.waitUntilConnected(timeout: .seconds(10))
            #expect(client.connectFailures >= 1)
            #expect(client.reconnects == 0) // the first successful connection is not a reconnect
            try await client.subscribe("echo")
            let inbox = StreamCollector(client.messages)
            try client.publish(MQTTMessage(topic: "echo", string: "hello", qos: .atLeastOnce))
            try await inbox.waitFor("the echo") { $0.first?.payloadString == "hello" }
        } catch {
            await client.shutdown()
            await broker.cleanup()
            throw WithBrokerLog(underlying: error, log: broker.logTail())
        }
        await client.shutdown()
        await broker.cleanup()
    }

    /// A broker that stays down was logged at every attempt, every 30 s or so for as long as it
    /// was down (3,000 lines a day onto a Pi's SD card). It is said at once, then ever further
    /// apart; every attempt is still counted.
    @Test func aBrokerThatStaysDownIsLoggedEverFurtherApart() async throws {
        let nobody = try RefusingPort()
        defer { nobody.release() }
        let logs = InMemoryLogHandler()
        var configuration = MQTTClientConfiguration.testing(port: nobody.port, id: "down")
        configuration.reconnectBackoff = MQTTBackoff(initial: 0.02, maximum: 0.05, jitter: 0)
        let client = try MQTTClient(configuration: configuration, logger: Logger(label: "down", level: .debug, handler: logs))
        let events = StreamCollector(client.connectionEvents)
        client.start()
        _ = try await events.waitFor("40 refused attempts") { $0.filter { $0.failure != nil }.count >= 40 }
        await client.shutdown()
        let said = logs.records.filter { $0.message == "mqtt connect failed" }
        #expect(client.connectFailures >= 40)
        #expect(said.count <= 2 && said.first?.level == .warning, "\(said.count) lines for \(client.connectFailures) attempts")
    }

    @Test func lastWillOfAKilledProcessIsDelivered() async throws {
        try await withRig { rig in
            let watcher = try await rig.connectedClient("watcher")
            try await watcher.subscribe("roomcast/status/#")
            let inbox = StreamCollector(watcher.messages)
            try watcher.publish(MQTTMessage(topic: "roomcast/ready", string: "go", qos: .atLeastOnce, retain: true))
            #expect(await watcher.flush(timeout: .seconds(5)))

            // A real second process with a will; SIGKILL gives it no chance to say goodbye.
            let doomed = try ChildProcess("/usr/bin/mosquitto_sub", [
                "-h", "127.0.0.1", "-p", "\(rig.broker.port)", "-i", "doomed", "-q", "1", "-t", "roomcast/ready",
                "--will-topic", "roomcast/status/doomed", "--will-payload", "offline", "--will-qos", "1",
            ], stdoutPath: "\(rig.broker.directory)/sub.out", stderrPath: "\(rig.broker.directory)/sub.err")
            // It prints the retained "go" once it is connected and subscribed.
            try await eventually("mosquitto_sub to connect", detail: { doomed.stderr }) { doomed.stdout.contains("go") }
            doomed.send(SIGKILL)
            await doomed.waitForExit()

            let got = try await inbox.waitFor("the will") { !$0.isEmpty }
            #expect(got.first?.topic == "roomcast/status/doomed")
            #expect(got.first?.payloadString == "offline")
        }
    }

    @Test func ownLastWillIsSentOnAbruptLossButNotOnShutdown() async throws {
        try await withRig { rig in
            let watcher = try await rig.connectedClient("watcher")
            try await watcher.subscribe("roomcast/node/+/status")
            let inbox = StreamCollector(watcher.messages)

            let node = try await rig.connectedClient("node-1") { c in
                c.lastWill = MQTTMessage(topic: "roomcast/node/node-1/status", string: "lost", qos: .atLeastOnce)
            }
            let events = StreamCollector(node.connectionEvents)
            node.abortConnectionForTesting()
            let got = try await inbox.waitFor("the will") { !$0.isEmpty }
            #expect(got.map(\.payloadString) == ["lost"])
            // It comes back on its own.
            try await events.waitFor("the reconnect") { e in
                guard let lost = e.firstIndex(where: \.isDisconnected) else { return false }
                return e[lost...].contains(where: \.isConnected)
            }
            #expect(node.reconnects == 1)

            // A clean shutdown publishes the caller's final message and no will.
            await node.shutdown(publishing: MQTTMessage(topic: "roomcast/node/node-1/status", string: "offline",
                                                        qos: .atLeastOnce, retain: true))
            try watcher.publish(MQTTMessage(topic: "roomcast/node/sentinel/status", string: "end", qos: .atLeastOnce))
            let all = try await inbox.waitFor("the sentinel") { $0.contains { $0.payloadString == "end" } }
            #expect(all.map(\.payloadString) == ["lost", "offline", "end"])
        }
    }

    /// Two clients with one client id (a copied config, an old process still alive): the broker
    /// closes the older connection whenever the other connects. Each such connection reset the
    /// backoff, so the two displaced each other at the initial delay (0.5 s), for good. A
    /// connection closed within 10 s now counts as a failure and the backoff grows.
    @Test func twoClientsWithOneIDBackOffInsteadOfDisplacingEachOtherAtOnce() async throws {
        try await withRig { rig in
            var cfg = rig.configuration("twin")
            cfg.reconnectBackoff = MQTTBackoff(initial: 0.5, maximum: 4, jitter: 0)
            let a = try rig.client(cfg), b = try rig.client(cfg)
            // Each displacement is logged with the delay before the next attempt. Reset at every
            // connection, that delay stayed at the initial 0.5 s; growing, it reaches 2 s by the
            // third displacement of one client.
            let delays = { rig.logs.records.filter { $0.label == "twin" && $0.message == "mqtt connection lost" }
                .compactMap { $0.metadata["mqtt.retry_in"].flatMap(Double.init) } }
            try await eventually("a displaced client to wait 2 s or more", timeout: .seconds(30), poll: .milliseconds(100),
                                 detail: { "delays so far: \(delays())" }) {
                delays().contains { $0 >= 2 }
            }
            print("two clients with one id: delays before reconnecting \(delays()), \(a.reconnects + b.reconnects) reconnects")
        }
    }

    /// Displaced at every connect, each client logged lost and reconnected at every cycle, for
    /// as long as the two ran: two warnings and two info lines a cycle on each Pi. The first
    /// cycle is said with the likely cause, the rest ever further apart with the count held
    /// back; the connection that holds at last is said too.
    @Test func connectionsThatDoNotHoldAreSaidEverFurtherApart() async throws {
        try await withRig { rig in
            var cfg = rig.configuration("twin")
            cfg.reconnectBackoff = MQTTBackoff(initial: 0.2, maximum: 0.4, jitter: 0)
            let a = try rig.client(cfg), b = try rig.client(cfg)
            try await eventually("ten displacements", timeout: .seconds(30), poll: .milliseconds(100),
                                 detail: { "\(a.reconnects + b.reconnects) reconnects" }) {
                a.reconnects + b.reconnects >= 10
            }
            let lines = rig.logs.records.filter { $0.label == "twin" }
            let lost = lines.filter { $0.message == "mqtt connection lost" }
            let made = lines.filter { $0.message == "mqtt reconnected" }
            #expect((1...4).contains(lost.count) && (1...4).contains(made.count),
                    "\(lost.count) lost and \(made.count) reconnected lines for \(a.reconnects + b.reconnects) reconnects")
            #expect(lost.allSatisfy { $0.metadata["hint"]?.contains("another program connected with this client id") == true },
                    "\(lost.map(\.metadata))")
            #expect(made.first?.metadata["mqtt.broker"] == "127.0.0.1:\(rig.broker.port)", "the line names the broker")
            // Each still counted, and each client still connects.
            #expect(a.reconnects >= 1 && b.reconnects >= 1)
            // The twin gone, the connection that then holds is said, with the count before it:
            // the log does not end on a lost connection.
            await b.shutdown(timeout: .seconds(2))
            try await eventually("the connection that holds said", timeout: .seconds(30), poll: .milliseconds(200)) {
                rig.logs.records.contains { $0.label == "twin" && $0.message == "mqtt connection holds"
                    && ($0.metadata["mqtt.short_connections"].flatMap(Int.init) ?? 0) >= 1 }
            }
        }
    }

    @Test func keepAliveNoticesAFrozenBrokerAndRecovers() async throws {
        try await withRig { rig in
            let c = try await rig.connectedClient("pinger") { c in c.keepAlive = 5 }
            try await c.subscribe("roomcast/after-freeze")
            let inbox = StreamCollector(c.messages)
            let events = StreamCollector(c.connectionEvents)
            rig.broker.pause()
            // No PINGRESP: libmosquitto gives up after about two keep-alive periods.
            let lost = try await events.waitFor("the keep-alive to expire", timeout: .seconds(20)) {
                $0.contains(where: \.isDisconnected)
            }
            // The disconnect itself: a reconnect attempt against the paused broker may already
            // have failed after it by the time the collector is read.
            #expect(lost.first(where: \.isDisconnected) == .disconnected(reason: .connectionLost(endpoint: "127.0.0.1:\(rig.broker.port)",
                                                                                             detail: "no answer to keep-alive pings")))
            rig.broker.resume()
            try await events.waitFor("the reconnect", timeout: .seconds(20)) { e in
                guard let i = e.firstIndex(where: \.isDisconnected) else { return false }
                return e[i...].contains(where: \.isConnected)
            }
            #expect(c.reconnects == 1)
            // Recovered, not only reconnected: its subscription delivers again.
            try await Self.expectDelivery(rig, on: "roomcast/after-freeze", to: inbox)
        }
    }

    /// Another client publishes a retained message on `topic`, and `inbox` must get it: retained,
    /// it arrives whether the subscription reached the broker before or after the publish.
    static func expectDelivery(_ rig: BrokerRig, on topic: String, to inbox: StreamCollector<MQTTMessage>) async throws {
        let sender = try await rig.connectedClient("sender")
        try sender.publish(MQTTMessage(topic: topic, string: "hello", qos: .atLeastOnce, retain: true))
        let got = try await inbox.waitFor("the message on \(topic)", timeout: .seconds(20)) { !$0.isEmpty }
        #expect(got.map(\.payloadString) == ["hello"])
    }

    @Test func aSubscriptionAFrozenBrokerNeverAcknowledgedIsSentAgainAfterTheReconnect() async throws {
        try await withRig { rig in
            let c = try await rig.connectedClient("late-subscriber") { c in c.keepAlive = 5; c.connectTimeout = 2 }
            let inbox = StreamCollector(c.messages)
            let events = StreamCollector(c.connectionEvents)
            rig.broker.pause()
            // No SUBACK: the call returns after its wait, the filter remembered, not dropped.
            try await c.subscribe("roomcast/subscribed-while-frozen")
            try await events.waitFor("the keep-alive to expire", timeout: .seconds(20)) { $0.contains(where: \.isDisconnected) }
            rig.broker.resume()
            try await Self.expectDelivery(rig, on: "roomcast/subscribed-while-frozen", to: inbox)
        }
    }

    /// A SUBACK that comes after `subscribe` stopped waiting is that subscription's: granted, the
    /// subscription delivers on the same connection.
    @Test func aSubscriptionAcknowledgedLateDeliversWithoutAReconnect() async throws {
        try await withRig { rig in
            let c = try await rig.connectedClient("slow-suback") { c in c.keepAlive = 30; c.connectTimeout = 1 }
            let inbox = StreamCollector(c.messages)
            rig.broker.pause()
            try await c.subscribe("roomcast/acknowledged-late")
            rig.broker.resume()
            try await Self.expectDelivery(rig, on: "roomcast/acknowledged-late", to: inbox)
            #expect(c.reconnects == 0)
        }
    }

    @Test func connectTimeoutAppliesToASilentPeer() async throws {
        // A listener that accepts TCP but never answers CONNECT (the kernel completes the handshake).
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        _ = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(listen(fd, 8) == 0)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        let port = Int(UInt16(bigEndian: addr.sin_port))
        var cfg = MQTTClientConfiguration.testing(port: port, id: "patient")
        cfg.connectTimeout = 0.3
        let client = try MQTTClient(configuration: cfg, logger: .silent)
        let events = StreamCollector(client.connectionEvents)
        client.start()
        // A bound, not a pace (the attempt times out after 0.3 s): once, with the whole suite
        // running on two cores, the first event took over 10 s.
        let got = try await events.waitFor("a timed-out attempt", timeout: .seconds(60)) { !$0.isEmpty }
        #expect(got.first?.failure == .connectTimedOut(endpoint: "127.0.0.1:\(port)", seconds: 0.3))
        await #expect(throws: MQTTError.timedOut(seconds: 0.2, lastError: got.first?.failure?.description)) {
            try await client.waitUntilConnected(timeout: .milliseconds(200))
        }
        await client.shutdown()
    }

    /// A broker answers each SUBSCRIBE after the retained messages of the filters before it; on a
    /// large site those take longer than the connect timeout. A broker that keeps sending is no
    /// silent one: the attempt is not abandoned, and the client connects. A scripted broker
    /// acknowledges the first filter, sends messages for 2 s, then acknowledges the second.
    @Test func subscriptionsAcknowledgedBehindRetainedMessagesOutlastTheConnectTimeout() async throws {
        let broker = try ScriptedMQTTBroker()
        defer { broker.close() }
        var cfg = MQTTClientConfiguration.testing(port: broker.port, id: "large-site", version: .v311)  // the scripted broker speaks 3.1.1
        cfg.connectTimeout = 1
        let client = try MQTTClient(configuration: cfg, logger: .silent)
        try await client.subscribe("retained/#")
        try await client.subscribe("live/#")
        let serving = Thread { broker.serveSlowSubscriptions(messagesFor: 2) }
        serving.start()
        client.start()
        try await client.waitUntilConnected(timeout: .seconds(30))
        #expect(client.receivedInbound >= 20, "the messages before the last SUBACK were read: \(client.receivedInbound)")
        await client.shutdown()
    }
}
