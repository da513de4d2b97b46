import Foundation
import RoomcastMQTT
import Shared
import TestSupport

/// A real mosquitto running deploy/mosquitto/roomcast.conf and roomcast.acl as shipped,
/// with only the paths moved into a temp folder and the TLS listener on a free loopback
/// port. The password file is made with `mosquitto_passwd` as the README says.
struct LockedDownBroker: Sendable {
    /// Every account; a status guard (`<user>-guard`) has its instance's password, as the aggregator
    /// logs it in with the same one.
    static let users = [
        "aggregator": "agg-secret", "aggregator-guard": "agg-secret",
        "aggregator-standby": "standby-secret", "aggregator-standby-guard": "standby-secret",
        "kitchen-pi": "kitchen-secret", "hall-pi": "hall-secret",
        "office-pi": "office-secret", "homeassistant": "ha-secret", "dashboard": "dash-secret",
    ]

    let directory: String
    let port: Int
    let tls: TLSMaterial
    let process: ChildProcess

    var logPath: String { "\(directory)/broker.log" }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Rewrites the shipped configuration for this folder and port; every path-bearing line
    /// must be present, so a change to the shipped file that this misses fails loudly.
    static func adapt(_ shipped: String, directory: String, port: Int, tls: TLSMaterial) throws -> String {
        let replacements: [String: String] = [
            "password_file": "\(directory)/roomcast.passwd",
            "acl_file": "\(directory)/roomcast.acl",
            "listener": "\(port) 127.0.0.1",
            "certfile": tls.serverCertificate,
            "keyfile": tls.serverKey,
            "cafile": tls.caCertificate,
        ]
        var seen: Set<String> = []
        var lines = shipped.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let key = line.split(separator: " ").first.map(String.init) ?? ""
            guard let value = replacements[key] else { return String(line) }
            seen.insert(key)
            return "\(key) \(value)"
        }
        let missing = Set(replacements.keys).subtracting(seen)
        guard missing.isEmpty else {
            throw FaultRig.Unavailable(description: "roomcast.conf no longer has \(missing.sorted()); update LockedDownBroker.adapt")
        }
        // Test-only additions: log to the captured stderr, no persistence file, and stay root
        // (mosquitto otherwise drops to user `mosquitto`, which cannot read the temp certificates).
        lines += ["log_dest stderr", "log_type all", "persistence false"] + (geteuid() == 0 ? ["user root"] : [])
        return lines.joined(separator: "\n") + "\n"
    }

    /// `leavingOut`: accounts the password file does not have (a set-up step a user skipped).
    static func start(leavingOut: Set<String> = []) async throws -> LockedDownBroker {
        let deploy = "\(FaultRig.packageRoot)/deploy/mosquitto"
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-lockdown-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let tls = try await TLSMaterial.shared()
        var first = true
        for (user, password) in users.sorted(by: { $0.key < $1.key }) where !leavingOut.contains(user) {
            try await ChildProcess.run(MosquittoBroker.passwdTool,
                                       (first ? ["-c"] : []) + ["-b", "\(dir)/roomcast.passwd", user, password], in: dir)
            first = false
        }
        try FileManager.default.copyItem(atPath: "\(deploy)/roomcast.acl", toPath: "\(dir)/roomcast.acl")
        let shipped = try String(contentsOfFile: "\(deploy)/roomcast.conf", encoding: .utf8)
        var lastError: Error?
        for _ in 0..<3 {
            let port = try freePort()
            try adapt(shipped, directory: dir, port: port, tls: tls).write(toFile: "\(dir)/mosquitto.conf", atomically: true, encoding: .utf8)
            let p = try ChildProcess(MosquittoBroker.binary, ["-c", "\(dir)/mosquitto.conf"],
                                     stdoutPath: "\(dir)/broker.log", stderrPath: "\(dir)/broker.log")
            let broker = LockedDownBroker(directory: dir, port: port, tls: tls, process: p)
            do {
                try await eventually("the locked-down mosquitto to listen on \(port)", timeout: .seconds(10), detail: { broker.log }) {
                    guard p.isRunning else { throw FaultRig.Unavailable(description: "mosquitto exited:\n\(broker.log)") }
                    return acceptsConnections(port: port)
                }
                return broker
            } catch {
                p.send(SIGKILL)
                await p.waitForExit()
                lastError = error
            }
        }
        throw lastError!
    }

    /// A client of this broker; `user` nil connects without credentials; `clientID` nil picks a unique one.
    func client(_ user: String?, password: String? = nil, caFile: String? = nil, clientID: String? = nil) throws -> MQTTClient {
        try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: port, clientID: clientID ?? "\(user ?? "anon")-\(UUID().uuidString.prefix(6))",
            username: user, password: user.map { password ?? Self.users[$0] ?? "" },
            tls: .init(caFile: caFile ?? tls.caCertificate),
            reconnectBackoff: MQTTBackoff(initial: 0.1, maximum: 0.5)), logger: .silent)
    }

    /// The `mqtt:` section a program logged in as `user` has, as deploy/mosquitto/README.md
    /// says to write it (the password goes in ROOMCAST_MQTT_PASSWORD, see `environment`).
    func mqttSection(_ user: String) -> [String: Any] {
        ["broker": "mqtts://\(user)@127.0.0.1:\(port)", "tls": ["ca_file": tls.caCertificate]]
    }

    /// The environment of a program logged in as `user`.
    static func environment(_ user: String) -> [String: String] {
        ["ROOMCAST_MQTT_PASSWORD": users[user] ?? ""]
    }

    /// The same `mqtt:` settings as a value, for a client configured the way the programs configure theirs.
    func mqttConfig(_ user: String) -> MQTTConfig {
        MQTTConfig(broker: BrokerURL(isTLS: true, host: "127.0.0.1", port: port, username: user),
                   password: Self.users[user], tls: .init(caFile: tls.caCertificate))
    }

    func stop() async {
        process.send(SIGTERM)
        await process.waitForExit()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
