import Foundation
import RoomcastMQTT
import Shared
import Synchronization
import TestSupport

/// Helpers for driving the real `aggregator` executable against real brokers:
/// a config writer, a process launcher, a reading feeder and an observer.
enum LiveRig {
    /// The directory holding the built executables (next to the test bundle, or .build/debug).
    static let binDirectory: String? = {
        var candidates = [Bundle.main.bundleURL.deletingLastPathComponent().path, Bundle.main.bundleURL.path]
        for b in Bundle.allBundles where b.bundlePath.hasSuffix(".xctest") {
            candidates.append(b.bundleURL.deletingLastPathComponent().path)
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug").path)
        return candidates.first { FileManager.default.isExecutableFile(atPath: "\($0)/aggregator") }
    }()

    struct ExecutableMissing: Error, CustomStringConvertible {
        var description: String { "the aggregator executable was not found next to the tests; run `swift build` first" }
    }

    static func executable(_ name: String) throws -> String {
        guard let dir = binDirectory else { throw ExecutableMissing() }
        return "\(dir)/\(name)"
    }

    /// A temp folder for one test's configs and logs.
    static func workDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("roomcast-agg-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    struct Room { var name: String; var floor: Int }
    struct Node { var name: String; var room: String }
    struct Beacon { var id: BeaconID; var name: String }

    /// An aggregator config (JSON, which the YAML loader reads as it is).
    /// The home of `Home` split by floor: `<dir>/floor0.json` and `<dir>/floor1.json`, each a
    /// partition of its floor, with `config`'s other settings.
    static func writeFloorPartitions(port: Int, in dir: String, standbyLease: Double? = nil, discovery: Bool = true,
                                     refresh: Double = 60, awayTimeout: Double? = nil) throws {
        for floor in [0, 1] {
            try config(port: port, rooms: Home.rooms, nodes: Home.nodes, beacons: Home.beacons, standbyLease: standbyLease,
                       partitionFloors: [floor], discovery: discovery, refresh: refresh, awayTimeout: awayTimeout)
                .write(toFile: "\(dir)/floor\(floor).json", atomically: true, encoding: .utf8)
        }
    }

    static func config(port: Int, rooms: [Room], nodes: [Node], beacons: [Beacon], standbyLease: Double? = nil,
                       partitionFloors: [Int]? = nil, discovery: Bool = true, refresh: Double = 60,
                       awayTimeout: Double? = nil, mqtt: [String: Any]? = nil, stateFile: String? = nil) throws -> String {
        var root: [String: Any] = [
            "mqtt": mqtt ?? ["broker": "mqtt://127.0.0.1:\(port)"],
            "rooms": rooms.map { ["name": $0.name, "floor": $0.floor] as [String: Any] },
            "nodes": nodes.map { ["name": $0.name, "room": $0.room] },
            "beacons": beacons.map { ["id": $0.id.rawValue, "name": $0.name] },
            "discovery": ["enabled": discovery],
            "output": ["refresh_interval_s": refresh],
            "log": ["level": "debug"],
        ]
        if let standbyLease { root["standby"] = ["enabled": true, "lease_s": standbyLease] }
        if let partitionFloors { root["partition"] = ["floors": partitionFloors] }
        if let awayTimeout { root["fusion"] = ["away_timeout_s": awayTimeout] }
        if let stateFile { root["learn"] = ["state_file": stateFile] }
        let data = try JSONSerialization.data(withJSONObject: root, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// Starts `aggregator run` with `configPath`; its output goes to `<dir>/aggregator-<instance>.log`.
    static func startAggregator(configPath: String, instance: String, in dir: String) throws -> ChildProcess {
        let log = "\(dir)/aggregator-\(instance).log"
        return try ChildProcess(try executable("aggregator"), ["run", "--config", configPath, "--instance", instance],
                                stdoutPath: log, stderrPath: log)
    }

    static func client(port: Int, id: String) throws -> MQTTClient {
        try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: port, clientID: "\(id)-\(UUID().uuidString.prefix(6))",
            reconnectBackoff: MQTTBackoff(initial: 0.1, maximum: 0.5), inboundBufferSize: 65536), logger: .silent)
    }

    /// One reading as an edge agent would publish it, stamped with the wall clock.
    static func reading(_ id: BeaconID, node: String, rssi: Double, seq: UInt64) -> BeaconReading {
        var r = BeaconReading(id: id, node: node, ts: Date().timeIntervalSince1970, seq: seq, rssi: Int(rssi),
                              rssiFiltered: rssi, power: -59, distance: pow(10, (-59 - rssi) / 20),
                              proximity: rssi > -65 ? .near : .far, kind: .iBeacon, mac: "c0:01:02:03:04:05")
        r.samples = 5
        r.interval = 0.2
        return r
    }
}

/// Publishes a reading for every (beacon, node) it is told about every 200 ms,
/// as a set of edge agents would, until stopped.
final class ReadingFeeder: Sendable {
    private let client: MQTTClient
    private final class Levels: Sendable { let map = Mutex<[BeaconID: [String: Double]]>([:]) }
    private let levels = Levels()
    private let task = Mutex<Task<Void, Never>?>(nil)
    private final class Pause: Sendable { let on = Mutex(false) }
    private let pause = Pause()
    private let topics = Topics()

    /// `jitter`: each reading's RSSI is off by up to this many dB, as real ones are.
    convenience init(port: Int, jitter: Double = 0) async throws {
        try await self.init(client: LiveRig.client(port: port, id: "feeder"), jitter: jitter)
    }

    /// Feeds through `client` (unstarted), e.g. one logged in as a node on a locked-down broker.
    init(client: MQTTClient, jitter: Double = 0) async throws {
        self.client = client
        client.start()
        try await client.waitUntilConnected(timeout: .seconds(10))
        let t = Task { [client, levels, pause, topics] in
            var seq: UInt64 = 0
            while !Task.isCancelled {
                seq += 1
                let heard = pause.on.withLock({ $0 }) ? [:] : levels.map.withLock({ $0 })
                for (id, byNode) in heard {
                    for (node, rssi) in byNode {
                        let noisy = jitter > 0 ? (rssi + Double.random(in: -jitter...jitter)).rounded() : rssi
                        let r = LiveRig.reading(id, node: node, rssi: noisy, seq: seq)
                        if let payload = try? WireFormat.encode(r) {
                            try? client.publish(MQTTMessage(topic: topics.nodeBeacon(node, id), payload: payload))
                        }
                    }
                }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
        task.withLock { $0 = t }
    }

    /// What `node` hears of `id` from now on (nil: it stops hearing it).
    func set(_ id: BeaconID, node: String, rssi: Double?) {
        levels.map.withLock { $0[id, default: [:]][node] = rssi }
    }

    /// Sends no readings until `resumeReadings()`, as nodes cut off by a network outage; what each
    /// node hears is kept for then.
    func pauseReadings() { pause.on.withLock { $0 = true } }

    func resumeReadings() { pause.on.withLock { $0 = false } }

    func publish(_ message: MQTTMessage) throws { try client.publish(message) }

    /// Readings (and other messages) the client could not send: lost, not queued.
    var publishFailures: Int { client.publishFailures }

    /// Successful connections after the first: each one means the connection was lost.
    var reconnects: Int { client.reconnects }

    func stop() async {
        task.withLock { $0?.cancel() }
        await client.shutdown()
    }
}

/// A subscriber that records everything under the given filters.
final class Observer: Sendable {
    let client: MQTTClient
    let seen: StreamCollector<MQTTMessage>

    convenience init(port: Int, filters: [String] = ["roomcast/#", "homeassistant/#"]) async throws {
        try await self.init(client: LiveRig.client(port: port, id: "observer"), filters: filters)
    }

    /// Observes through `client` (unstarted), e.g. one with credentials. Returns subscribed:
    /// the filters go out with the connect, and the connection counts once they are acknowledged,
    /// so nothing published after this returns is missed.
    init(client: MQTTClient, filters: [String] = ["roomcast/#", "homeassistant/#"]) async throws {
        self.client = client
        seen = StreamCollector(client.messages)
        for f in filters { try await client.subscribe(f, qos: .atLeastOnce) }
        client.start()
        try await client.waitUntilConnected(timeout: .seconds(20))
    }

    /// Waits until `condition` holds for everything seen; a timeout shows the last messages.
    func waitFor(_ what: String, timeout: Duration = .seconds(10), _ condition: ([MQTTMessage]) -> Bool) async throws {
        try await eventually(what, timeout: timeout, detail: { self.summary() }) { condition(seen.elements) }
    }

    /// The last messages seen, one line each, for failure messages.
    func summary(_ count: Int = 40) -> String {
        seen.elements.suffix(count).map { "\($0.topic) \(String(decoding: $0.payload.prefix(160), as: UTF8.self))" }
            .joined(separator: "\n")
    }

    /// Every presence decision seen for `id`, in order.
    func presence(_ id: BeaconID) -> [PresenceDecision] {
        let topic = Topics().presence(id)
        return seen.elements.filter { $0.topic == topic && !$0.payload.isEmpty }
            .compactMap { try? WireFormat.decode(PresenceDecision.self, from: $0.payload) }
    }

    /// Every room event seen, in order.
    func events() -> [RoomEvent] {
        seen.elements.filter { $0.topic == Topics().events }
            .compactMap { try? WireFormat.decode(RoomEvent.self, from: $0.payload) }
    }

    /// The last payload seen on `topic`, as text.
    func last(_ topic: String) -> String? {
        seen.elements.last { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    /// Waits until the latest presence of `id` says `room`; returns when it was seen.
    @discardableResult
    func waitForRoom(_ id: BeaconID, _ room: String?, timeout: Duration = .seconds(15)) async throws -> ContinuousClock.Instant {
        try await waitFor("presence of \(id) in \(room ?? "nil")", timeout: timeout) { _ in
            self.presence(id).last?.room == room
        }
        return .now
    }

    /// Waits until every one of `ids` has had its presence republished `times` times since the
    /// first `index` messages seen. With `output.refresh_interval_s: 1` the aggregator republishes
    /// its state in force each second, after that second's decisions: the event to await before
    /// asserting that something did not happen (no flap, no leak) while it kept deciding.
    func waitForRefreshes(of ids: [BeaconID], _ times: Int, after index: Int, timeout: Duration = .seconds(15)) async throws {
        let topics = ids.map { Topics().presence($0) }
        try await waitFor("\(times) refreshes of \(ids.map(\.rawValue))", timeout: timeout) { all in
            let since = all.dropFirst(index)
            return topics.allSatisfy { topic in since.lazy.filter { $0.topic == topic }.count >= times }
        }
    }

    func stop() async {
        seen.cancel()
        await client.shutdown()
    }
}

extension MosquittoBroker {
    /// Client ids that the broker logged publishing on topics starting with `prefix`.
    func publishers(of prefix: String) -> Set<String> {
        // mosquitto (log_type all): "Received PUBLISH from <client> (d0, q1, r1, m2, '<topic>', ... (n bytes))"
        var out: Set<String> = []
        for line in log.split(separator: "\n") where line.contains("Received PUBLISH from ") {
            guard let from = line.range(of: "Received PUBLISH from "),
                  let quote = line.range(of: "'", range: from.upperBound..<line.endIndex) else { continue }
            let rest = line[quote.upperBound...]
            guard rest.hasPrefix(prefix) else { continue }
            let client = line[from.upperBound...].prefix { $0 != " " }
            out.insert(String(client))
        }
        return out
    }
}
