import Foundation
import RoomcastMQTT
import Shared
import Synchronization
import TestSupport
import RoomcastAggregator
@testable import RoomcastAggregator

/// The whole system as a user runs it, for fault tests: a simulated home written by
/// `roomcast-sim`, one `edge-agent` process per node replaying its capture in real time,
/// one `aggregator` process, a real mosquitto, and an observer that records every
/// message under `roomcast/#` with its arrival time.
final class FaultRig: Sendable {
    /// One message as the observer saw it.
    struct Seen: Sendable {
        let at: Double
        let topic: String
        let payload: [UInt8]
        let retained: Bool
        var text: String { String(decoding: payload, as: UTF8.self) }
        var presence: PresenceDecision? {
            guard topic.hasPrefix("roomcast/presence/") else { return nil }
            return try? WireFormat.decode(PresenceDecision.self, from: payload)
        }
    }

    /// A change asked of the generated site that it cannot take.
    struct SiteEdit: Error, CustomStringConvertible {
        let description: String
    }

    /// Why the rig cannot run here.
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    let directory: String
    let broker: MosquittoBroker
    let nodes: [String]
    let beacons: [String]
    /// Beacons that never move in the scenario (tags): any room change of theirs is an error.
    let stationary: Set<String>
    private let agents = Mutex<[String: ChildProcess]>([:])
    private let aggregators = Mutex<[String: ChildProcess]>([:])
    private let observer: MQTTClient
    private final class Log: Sendable { let items = Mutex<[Seen]>([]) }
    private let log = Log()
    private let drain: Task<Void, Never>

    /// The folder holding the built executables.
    static func productsDirectory() throws -> String { try BuiltProducts.directory() }

    /// The package root (for deploy/ files).
    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    static var now: Double { Date().timeIntervalSince1970 }

    /// Where relayed agents publish (see `startSkewRelay`).
    static let relayPrefix = "skewed"

    /// The probe beacon the tests move between rooms (`Probe`), listed in the site.
    static let probeID = BeaconID.iBeacon(uuid: UUID(uuidString: "0F0E0D0C-0B0A-4908-8706-050403020100")!, major: 9, minor: 9)

    /// Generates the home, starts the broker, the observer, every agent and the aggregator (or,
    /// with `standby`, one aggregator per instance name, under hot standby).
    /// `doorways`: per room name, a YAML list the site gives as that room's `doorways`.
    static func start(seconds: Int = 300, refreshInterval: Double = 2, relayed: Set<String> = [],
                      standby: [String] = [], aggregatorArguments: [String] = [],
                      brokerOptions: MosquittoBroker.Options = .init(),
                      doorways: [String: String] = [:]) async throws -> FaultRig {
        let bin = try productsDirectory()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-fault-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try await ChildProcess.run("\(bin)/roomcast-sim", ["generate", "--layout", "house", "--seed", "4",
                                                           "--duration", "\(seconds)", "--out", "\(dir)/home"], in: dir)
        // Republish every retained decision every 2 s (default 60): presence is otherwise sent only on a
        // room change, and the tests need to see the aggregator's current evidence for every beacon.
        if !doorways.isEmpty {
            // Each room's entry is its name, floor and polygon lines: its doorways follow them.
            let path = "\(dir)/home/site.yaml"
            var lines = try String(contentsOfFile: path, encoding: .utf8).components(separatedBy: "\n")
            for (room, list) in doorways {
                guard let at = lines.firstIndex(of: "  - name: \"\(room)\"") else {
                    throw SiteEdit(description: "the generated site.yaml has no room \(room)")
                }
                lines.insert("    doorways: \(list)", at: at + 3)
            }
            try lines.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        }
        let site = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(dir)/home/site.yaml"))
        try site.seekToEnd()
        // `beacons:` is the file's last section: the probe joins the list.
        try site.write(contentsOf: Data("  - id: \"\(probeID.rawValue)\"\n    name: \"probe\"\n".utf8))
        try site.write(contentsOf: Data("output:\n  refresh_interval_s: \(refreshInterval)\n".utf8))
        if !standby.isEmpty { try site.write(contentsOf: Data("standby:\n  enabled: true\n  lease_s: 6\n".utf8)) }
        try site.close()
        let nodes = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/home/nodes")
            .filter { $0.hasSuffix(".btsnoop") }.map { String($0.dropLast(".btsnoop".count)) }.sorted()
        struct Beacon: Decodable { let id: String; let mobile: Bool }
        let listed = try JSONDecoder().decode([Beacon].self, from: Data(contentsOf: URL(fileURLWithPath: "\(dir)/home/beacons.json")))
        let beacons = listed.map(\.id)
        let stationary = Set(listed.filter { !$0.mobile }.map(\.id))
        let broker = try await MosquittoBroker.start(brokerOptions)
        let observer = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: broker.port, clientID: "fault-observer-\(UUID().uuidString.prefix(6))",
            reconnectBackoff: MQTTBackoff(initial: 0.1, maximum: 0.5), inboundBufferSize: 100_000), logger: .silent)
        let rig = FaultRig(directory: dir, broker: broker, nodes: nodes, beacons: beacons, stationary: stationary, observer: observer, bin: bin,
                           aggregatorArguments: aggregatorArguments)
        observer.start()
        try await observer.subscribe("roomcast/#", qos: .atLeastOnce)
        try await observer.waitUntilConnected(timeout: .seconds(10))
        for node in nodes { try rig.startAgent(node, topicPrefix: relayed.contains(node) ? relayPrefix : nil) }
        if standby.isEmpty {
            try rig.startAggregator()
        } else {
            for name in standby { try rig.startAggregator(instance: name) }
        }
        return rig
    }

    private let bin: String
    /// Added to every aggregator's command line (`--http …`).
    private let aggregatorArguments: [String]

    private init(directory: String, broker: MosquittoBroker, nodes: [String], beacons: [String], stationary: Set<String>,
                 observer: MQTTClient, bin: String, aggregatorArguments: [String] = []) {
        self.aggregatorArguments = aggregatorArguments
        self.stationary = stationary
        self.directory = directory
        self.broker = broker
        self.nodes = nodes
        self.beacons = beacons
        self.observer = observer
        self.bin = bin
        drain = Task { [log] in
            for await m in observer.messages {
                let s = Seen(at: FaultRig.now, topic: m.topic, payload: m.payload, retained: m.retain)
                log.items.withLock { $0.append(s) }
            }
        }
    }

    /// Starts (or restarts) the agent of `node`, replaying its capture in real time; with
    /// `topicPrefix` it publishes under that prefix instead of `roomcast` (for a relay to alter).
    func startAgent(_ node: String, topicPrefix: String? = nil) throws {
        var config = "\(directory)/home/agent.yaml"
        if let topicPrefix {
            config = "\(directory)/agent-\(node).yaml"
            try (String(contentsOfFile: "\(directory)/home/agent.yaml", encoding: .utf8)
                 + "\nmqtt:\n  topic_prefix: \(topicPrefix)\n").write(toFile: config, atomically: true, encoding: .utf8)
        }
        let c = try ChildProcess("\(bin)/edge-agent", [
            "run", "-c", config, "--node", node,
            "--source", "btsnoop:\(directory)/home/nodes/\(node).btsnoop", "--speed", "realtime",
            "--broker", "mqtt://127.0.0.1:\(broker.port)",
        ], stdoutPath: "\(directory)/\(node).log", stderrPath: "\(directory)/\(node).log")
        agents.withLock { $0[node] = c }
    }

    /// Starts (or restarts) the aggregator named `instance`.
    func startAggregator(instance: String = "fault-test") throws {
        let log = instance == "fault-test" ? "aggregator.log" : "aggregator-\(instance).log"
        let c = try ChildProcess("\(bin)/aggregator", [
            "run", "--config", "\(directory)/home/site.yaml", "--broker", "mqtt://127.0.0.1:\(broker.port)",
            "--instance", instance,
        ] + aggregatorArguments, stdoutPath: "\(directory)/\(log)", stderrPath: "\(directory)/\(log)")
        aggregators.withLock { $0[instance] = c }
    }

    /// Sends `signal` to the aggregator `instance` (SIGSTOP / SIGCONT pause and resume it).
    func signalAggregator(_ instance: String, _ signal: Int32) {
        aggregators.withLock { $0[instance] }?.send(signal)
    }

    /// The holder named by the newest lease seen, if any.
    var leaseHolder: String? {
        guard let m = messages.last(where: { $0.topic == "roomcast/aggregator/lease" }), !m.payload.isEmpty,
              let lease = try? WireFormat.decode(LeaseElection.Lease.self, from: m.payload) else { return nil }
        return lease.holder
    }

    /// A beacon the test moves: readings published as if by real nodes, once a second, loud at
    /// the node of the room it is in and faint at the others, through a client that reconnects
    /// like an agent's.
    final class Probe: Sendable {
        let client: MQTTClient
        let nodes: [String]
        private final class State: Sendable { let value = Mutex<(loudAt: String, seq: UInt64)>(("", 0)) }
        private let state = State()
        private let task = Mutex<Task<Void, Never>?>(nil)

        init(port: Int, nodes: [String], loudAt: String) throws {
            client = try MQTTClient(configuration: MQTTClientConfiguration(
                host: "127.0.0.1", port: port, clientID: "fault-probe-\(UUID().uuidString.prefix(6))",
                reconnectBackoff: MQTTBackoff(initial: 0.1, maximum: 0.5)), logger: .silent)
            self.nodes = nodes
            state.value.withLock { $0.loudAt = loudAt }
            client.start()
            let topics = Topics()
            task.withLock {
                $0 = Task { [client, state, nodes] in
                    while !Task.isCancelled {
                        let (loud, seq) = state.value.withLock { s -> (String, UInt64) in s.seq += 1; return (s.loudAt, s.seq) }
                        let now = FaultRig.now
                        for (k, node) in nodes.enumerated() {
                            // A steady signal with a small wobble, 20 dB apart.
                            let rssi = (node == loud ? -56.0 : -76.0) + sin(now * 1.3 + Double(k)) * 1.5
                            let r = BeaconReading(id: FaultRig.probeID, node: node, ts: now, seq: seq, rssi: Int(rssi.rounded()),
                                                  rssiFiltered: rssi, power: -59, distance: node == loud ? 1 : 8,
                                                  proximity: node == loud ? .near : .far, kind: .iBeacon, mac: "0f:0e:0d:0c:0b:0a")
                            if let payload = try? WireFormat.encode(r) {
                                try? client.publish(MQTTMessage(topic: topics.nodeBeacon(node, FaultRig.probeID), payload: payload, qos: .atMostOnce))
                            }
                        }
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
            }
        }

        /// Moves the probe to `node`'s room.
        func move(to node: String) { state.value.withLock { $0.loudAt = node } }

        func stop() async {
            task.withLock { $0?.cancel() }
            await client.shutdown()
        }
    }

    /// Starts a probe heard by `nodes`, in `loudAt`'s room.
    func startProbe(nodes: [String], loudAt: String) throws -> Probe {
        try Probe(port: broker.port, nodes: nodes, loudAt: loudAt)
    }

    /// Moves `probe` to `node`'s room and waits until the presence says `room`; returns the seconds it took.
    func follow(_ probe: Probe, to node: String, room: String, timeout: Duration = .seconds(40)) async throws -> Double {
        let from = Self.now
        probe.move(to: node)
        let at = try await waitFor("the probe's presence in \(room)", timeout: timeout) { all in
            all.contains { $0.at >= from && $0.presence.map { $0.id == FaultRig.probeID && $0.room == room } == true }
        }
        return at - from
    }

    /// The probe's decisions published at or after `since`.
    func probeDecisions(since: Double) -> [PresenceDecision] {
        messages.filter { $0.at >= since }.compactMap(\.presence).filter { $0.id == FaultRig.probeID }
    }

    /// Forwards everything agents publish under `from/` to `roomcast/`, shifting each reading's
    /// capture time by `skew[node]` seconds: a node whose clock is that far off.
    func startSkewRelay(from prefix: String, skew: [String: Double]) async throws -> MQTTClient {
        let relay = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: broker.port, clientID: "skew-relay", inboundBufferSize: 100_000), logger: .silent)
        relay.start()
        try await relay.subscribe("\(prefix)/#", qos: .atLeastOnce)
        try await relay.waitUntilConnected(timeout: .seconds(10))
        let ours = Topics(prefix: prefix), out = Topics()
        Task {
            for await m in relay.messages {
                guard let parsed = ours.parse(m.topic) else { continue }
                var forwarded = MQTTMessage(topic: "roomcast" + m.topic.dropFirst(prefix.count), payload: m.payload, qos: m.qos, retain: m.retain)
                if case .nodeBeacon(let node, let id) = parsed, var r = try? WireFormat.decode(BeaconReading.self, from: m.payload) {
                    r.ts += skew[node] ?? 0
                    forwarded = MQTTMessage(topic: out.nodeBeacon(node, id), payload: (try? WireFormat.encode(r)) ?? m.payload, qos: m.qos)
                }
                try? relay.publish(forwarded)
            }
        }
        return relay
    }

    /// Sends `signal` to the agent of `node` (SIGSTOP / SIGCONT: its link dies without closing,
    /// then comes back).
    func signalAgent(_ node: String, _ signal: Int32) {
        agents.withLock { $0[node] }?.send(signal)
    }

    /// Kills the agent of `node` with `signal` and waits for it to exit.
    func killAgent(_ node: String, signal: Int32 = SIGKILL) async {
        guard let c = agents.withLock({ $0[node] }) else { return }
        c.send(signal)
        await c.waitForExit()
    }

    /// Kills the aggregator with `signal` and waits for it to exit.
    func killAggregator(_ instance: String = "fault-test", signal: Int32 = SIGKILL) async {
        guard let c = aggregators.withLock({ $0[instance] }) else { return }
        c.send(signal)
        await c.waitForExit()
    }

    /// Everything seen so far.
    var messages: [Seen] { log.items.withLock { $0 } }

    /// Waits until `predicate` holds for everything seen; returns the time it first held.
    @discardableResult
    func waitFor(_ what: String, timeout: Duration = .seconds(30), _ predicate: ([Seen]) -> Bool) async throws -> Double {
        try await eventually(what, timeout: timeout, poll: .milliseconds(50), detail: { self.diagnostics() }) {
            predicate(messages)
        }
        return Self.now
    }

    /// The newest presence decision per beacon of the home (not the probe) seen after `since`.
    func latestPresence(since: Double = 0) -> [String: PresenceDecision] {
        var out: [String: PresenceDecision] = [:]
        for s in messages where s.at >= since {
            if let p = s.presence, p.id != FaultRig.probeID { out[p.id.rawValue] = p }
        }
        return out
    }

    /// A fresh subscriber's view of the retained messages under `filter`.
    func retained(_ filter: String = "roomcast/#", settle: Duration = .seconds(1)) async throws -> [String: String] {
        let c = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: broker.port, clientID: "fault-retained-\(UUID().uuidString.prefix(6))"), logger: .silent)
        let collected = StreamCollector(c.messages)
        c.start()
        try await c.waitUntilConnected(timeout: .seconds(10))
        try await c.subscribe(filter, qos: .atLeastOnce)
        // Retained messages arrive right after SUBACK, before any live one of the same
        // topic; wait until a live (non-retained) message shows they are all in.
        _ = try? await collected.waitFor("a live message after the retained ones", timeout: settle) { $0.contains { !$0.retain } }
        await c.shutdown()
        var out: [String: String] = [:]
        for m in collected.elements where m.retain { out[m.topic] = m.payloadString }
        return out
    }

    /// Log tails for failure messages.
    func diagnostics() -> String {
        let logs = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("aggregator") }.sorted()
        let aggregatorTails = logs.map { name in
            let text = (try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8)) ?? ""
            return "--- \(name) (tail) ---\n" + text.split(separator: "\n").suffix(15).joined(separator: "\n")
        }
        return aggregatorTails.joined(separator: "\n") + "\n--- broker log (tail) ---\n" + broker.logTail(10)
    }

    /// Error-level lines (`error ` / `critical ` prefix) of every process log.
    func errorLines() -> [String] {
        let logs = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.filter { $0.hasSuffix(".log") } ?? []
        return logs.flatMap { name in
            ((try? String(contentsOfFile: "\(directory)/\(name)", encoding: .utf8)) ?? "")
                .split(separator: "\n").filter { $0.hasPrefix("error ") || $0.hasPrefix("critical ") }.map { "\(name): \($0)" }
        }
    }

    /// Stops everything (SIGTERM, then the broker) and deletes the folder.
    func shutdown() async {
        let procs = agents.withLock { Array($0.values) } + aggregators.withLock { Array($0.values) }
        // A stopped process must run again to hear SIGTERM.
        for p in procs { p.send(SIGCONT); p.send(SIGTERM) }
        for p in procs {
            if (try? await withTimeout(.seconds(5), "a child to exit") { await p.waitForExit() }) == nil { p.send(SIGKILL) }
        }
        drain.cancel()
        await observer.shutdown()
        await broker.cleanup()
        if ProcessInfo.processInfo.environment["ROOMCAST_KEEP_FAULT_DIR"] == nil {
            try? FileManager.default.removeItem(atPath: directory)
        } else {
            print("fault rig files kept in \(directory)")
        }
    }
}
