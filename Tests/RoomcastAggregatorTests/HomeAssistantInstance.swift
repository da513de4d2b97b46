import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// A real Home Assistant (the version scripts/setup-home-assistant.sh installs) in a temp
/// config folder, on 127.0.0.1 and a free port, connected to a given MQTT broker, with an
/// access token from onboarding over its REST API. Its log is kept for checks.
final class HomeAssistantInstance: Sendable {
    /// A Home Assistant release the setup script installs (`scripts/setup-home-assistant.sh <version>`)
    /// and these tests verify against.
    struct Release: Sendable, CustomStringConvertible {
        let version: String
        /// Python it runs on (for messages).
        let python: String

        /// The newest release that runs on Python 3.11, before device-based discovery.
        static let v2024_3 = Release(version: "2024.3.3", python: "3.11")
        /// The newest release that runs here (pyenv's Python 3.13), with device-based discovery.
        static let v2025_4 = Release(version: "2025.4.4", python: "3.13")

        /// Where the setup script puts the virtualenv (`ROOMCAST_HA_VENV_<version with _>` overrides it).
        var virtualenv: String {
            let env = ProcessInfo.processInfo.environment
            if let v = env["ROOMCAST_HA_VENV_" + version.replacingOccurrences(of: ".", with: "_")], !v.isEmpty { return v }
            let cache = env["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory() + "/.cache"
            return "\(cache)/roomcast/ha-\(version)"
        }

        var hass: String { virtualenv + "/bin/hass" }
        var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: hass) }
        /// Run when installed, and always under CI (where a missing install must fail, not skip).
        /// The broker it talks to is a separate requirement (`.requiresMosquitto`).
        var shouldRun: Bool { MosquittoBroker.isCI || isInstalled }
        var skipReason: Comment { Comment(rawValue: skipMessage) }
        var skipMessage: String {
            "Home Assistant \(version) (Python \(python)) is not installed at \(virtualenv): run "
                + "scripts/setup-home-assistant.sh \(version) (or `make test`); with CI=true this test fails instead of skipping"
        }
        var description: String { "Home Assistant \(version)" }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let directory: String
    let port: Int
    let process: ChildProcess
    let token: String
    var logPath: String { directory + "/home-assistant.log" }

    /// Writes the config (`extraConfiguration` is appended to configuration.yaml), starts
    /// Home Assistant, waits for its HTTP API and onboards a user for a token.
    static func start(_ release: Release, brokerPort: Int, in parent: String, extraConfiguration: String = "") async throws -> HomeAssistantInstance {
        guard release.isInstalled else { throw Failure(description: release.skipMessage) }
        let dir = parent + "/home-assistant"
        try FileManager.default.createDirectory(atPath: dir + "/.storage", withIntermediateDirectories: true)
        let port = try freePort()
        // Only what the test needs: no default_config, so nothing opens mDNS/SSDP sockets.
        let configuration = """
            homeassistant:
              name: Roomcast test
              unit_system: metric
              time_zone: UTC
              latitude: 0
              longitude: 0
              elevation: 0
            http:
              server_host: 127.0.0.1
              server_port: \(port)
            api:
            logger:
              default: warning
              logs:
                homeassistant.components.mqtt.discovery: info

            """ + extraConfiguration
        try configuration.write(toFile: dir + "/configuration.yaml", atomically: true, encoding: .utf8)
        // The broker connection is a config entry, not YAML: written before the first start.
        let entries: [String: Any] = [
            "version": 1, "minor_version": 1, "key": "core.config_entries",
            "data": ["entries": [[
                "entry_id": "roomcasttestmqttentry0000000001", "version": 1, "minor_version": 1,
                "domain": "mqtt", "title": "127.0.0.1", "source": "user", "unique_id": NSNull(),
                "disabled_by": NSNull(), "options": [String: Any](),
                "pref_disable_new_entities": false, "pref_disable_polling": false,
                "data": ["broker": "127.0.0.1", "port": brokerPort, "discovery": true],
            ] as [String: Any]]],
        ]
        try JSONSerialization.data(withJSONObject: entries).write(to: URL(fileURLWithPath: dir + "/.storage/core.config_entries"))

        // --skip-pip: everything is installed by the setup script; a test never reaches PyPI.
        let process = try ChildProcess(release.hass, ["-c", dir, "--skip-pip", "--log-no-color", "--log-file", dir + "/home-assistant.log"],
                                       stdoutPath: dir + "/stdout.log", stderrPath: dir + "/stdout.log")
        let base = "http://127.0.0.1:\(port)"
        do {
            try await eventually("Home Assistant's HTTP API on port \(port)", timeout: .seconds(60), poll: .milliseconds(200),
                                 detail: { Self.tail(dir + "/stdout.log") }) {
                guard process.isRunning else { throw Failure(description: "Home Assistant exited:\n\(Self.tail(dir + "/stdout.log"))") }
                return (try? await Self.request("GET", base + "/api/onboarding").status) == 200
            }
            let clientID = base + "/"
            let user = try await Self.request("POST", base + "/api/onboarding/users", json: [
                "client_id": clientID, "name": "Roomcast", "username": "roomcast", "password": "roomcast-test", "language": "en"])
            guard user.status == 200, let code = (try? JSONSerialization.jsonObject(with: user.body) as? [String: Any])?["auth_code"] as? String else {
                throw Failure(description: "onboarding failed: \(user.status) \(String(decoding: user.body, as: UTF8.self))")
            }
            let form = "grant_type=authorization_code&code=\(code)&client_id=\(clientID)"
            let tokenReply = try await Self.request("POST", base + "/auth/token", body: Data(form.utf8),
                                                    contentType: "application/x-www-form-urlencoded")
            guard let token = (try? JSONSerialization.jsonObject(with: tokenReply.body) as? [String: Any])?["access_token"] as? String else {
                throw Failure(description: "no token: \(tokenReply.status) \(String(decoding: tokenReply.body, as: UTF8.self))")
            }
            return HomeAssistantInstance(directory: dir, port: port, process: process, token: token)
        } catch {
            process.send(SIGKILL)
            throw error
        }
    }

    private init(directory: String, port: Int, process: ChildProcess, token: String) {
        self.directory = directory
        self.port = port
        self.process = process
        self.token = token
    }

    /// One entity's state as Home Assistant's REST API reports it.
    struct EntityState: Sendable, Decodable, CustomStringConvertible {
        let entityID: String
        let state: String
        let attributes: [String: JSONValue]
        enum CodingKeys: String, CodingKey { case entityID = "entity_id", state, attributes }
        var description: String { "\(entityID)=\(state) \(attributes.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" })" }
    }

    /// Every entity's state (`GET /api/states`).
    func states() async throws -> [String: EntityState] {
        let reply = try await Self.request("GET", "http://127.0.0.1:\(port)/api/states", token: token)
        guard reply.status == 200, let list = try? JSONDecoder().decode([EntityState].self, from: reply.body) else {
            throw Failure(description: "GET /api/states: \(reply.status) \(String(decoding: reply.body.prefix(300), as: UTF8.self))")
        }
        var out: [String: EntityState] = [:]
        for item in list { out[item.entityID] = item }
        return out
    }

    /// Renders a template in Home Assistant (`POST /api/template`): how the registries (devices,
    /// areas) are reached over REST.
    func render(_ template: String) async throws -> String {
        let reply = try await Self.request("POST", "http://127.0.0.1:\(port)/api/template", token: token, json: ["template": template])
        guard reply.status == 200 else {
            throw Failure(description: "POST /api/template: \(reply.status) \(String(decoding: reply.body.prefix(300), as: UTF8.self))")
        }
        return String(decoding: reply.body, as: UTF8.self)
    }

    /// Calls a service as the UI would (`POST /api/services/<domain>/<service>`).
    func call(_ domain: String, _ service: String, _ data: [String: Any]) async throws {
        let reply = try await Self.request("POST", "http://127.0.0.1:\(port)/api/services/\(domain)/\(service)", token: token, json: data)
        guard reply.status == 200 else {
            throw Failure(description: "POST /api/services/\(domain)/\(service): \(reply.status) \(String(decoding: reply.body.prefix(300), as: UTF8.self))")
        }
    }

    /// The states of Roomcast's entities, the sensors and the Persons, one a line, for a failure.
    static func describe(_ states: [String: EntityState]) -> String {
        let ours = states.values.filter { $0.entityID.contains("roomcast") || $0.entityID.hasPrefix("sensor.") || $0.entityID.hasPrefix("person.") }
            .sorted { $0.entityID < $1.entityID }.map(\.description).joined(separator: "\n")
        return "Home Assistant states:\n\(ours)"
    }

    /// Polls the states for `span` and fails at the first poll where `condition` does not hold:
    /// a state that must last (through a timeout that would end it), not one that must come.
    func holds(_ what: String, for span: Duration,
               _ condition: @escaping ([String: EntityState]) -> Bool) async throws {
        let end = ContinuousClock.now + span
        while ContinuousClock.now < end {
            let s = try await states()
            guard condition(s) else {
                throw Failure(description: "\(what): broken after \(span - (end - ContinuousClock.now)). \(Self.describe(s))")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// Polls the states until `condition` holds; a timeout shows the Roomcast entities and the log's tail.
    @discardableResult
    func waitFor(_ what: String, timeout: Duration = .seconds(20),
                 _ condition: @escaping ([String: EntityState]) -> Bool) async throws -> [String: EntityState] {
        var last: [String: EntityState] = [:]
        try await eventually(what, timeout: timeout, poll: .milliseconds(200), detail: {
            "\(Self.describe(last))\n--- home-assistant.log ---\n\(Self.tail(self.logPath, lines: 30))"
        }) {
            last = try await states()
            return condition(last)
        }
        return last
    }

    /// Warning and error records of Home Assistant's log that concern MQTT or Roomcast's
    /// entities (bad discovery payloads, templates that fail, states HA rejects), and every
    /// other error. Each record is its first line plus any traceback lines after it.
    /// `known`: records of a limit the docs name, left out.
    func problems(except known: (String) -> Bool = { _ in false }) -> [String] {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return ["no log at \(logPath)"] }
        var records: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.range(of: #"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"#, options: .regularExpression) != nil {
                records.append(String(line))
            } else if !records.isEmpty {
                records[records.count - 1] += "\n" + line
            }
        }
        return records.filter { r in
            let head = r.prefix { $0 != "\n" }
            let error = head.contains(" ERROR ") || head.contains(" CRITICAL ")
            let warning = head.contains(" WARNING ")
            guard error || warning else { return false }
            if Self.expectedWarnings.contains(where: { head.contains($0) }) || known(r) { return false }
            return error || head.contains("homeassistant.components.mqtt") || r.lowercased().contains("roomcast")
        }
    }

    /// Log lines that say nothing about Roomcast: HA 2024.3 warns that Python 3.11 support ends in
    /// 2024.4, and every release that `--skip-pip` skips installing requirements (the setup script
    /// installed them); HA 2025.x sets up its camera helpers whatever the config says and logs an error
    /// when the system has no libturbojpeg (snapshots are slower; nothing to do with MQTT), and aiohttp
    /// warns that zlib-ng is missing.
    static let expectedWarnings = ["Support for the running Python version", "Skipping pip installation of required modules",
                                   "Error loading libturbojpeg", "zlib_ng and isal are not available"]

    /// Stops Home Assistant (SIGTERM, then SIGKILL after `grace`).
    func stop(grace: Duration = .seconds(10)) async {
        process.send(SIGTERM)
        let process = self.process
        if (try? await withTimeout(grace, "Home Assistant to stop") { await process.waitForExit() }) == nil {
            process.send(SIGKILL)
            await process.waitForExit()
        }
    }

    static func tail(_ path: String, lines: Int = 40) -> String {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    struct Reply: Sendable { let status: Int; let body: Data }

    static func request(_ method: String, _ url: String, token: String? = nil, json: [String: Any]? = nil,
                        body: Data? = nil, contentType: String? = nil) async throws -> Reply {
        var r = URLRequest(url: URL(string: url)!, timeoutInterval: 10)
        r.httpMethod = method
        if let token { r.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let json {
            r.httpBody = try JSONSerialization.data(withJSONObject: json)
            r.setValue("application/json", forHTTPHeaderField: "Content-Type")
        } else if let body {
            r.httpBody = body
            r.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: r)
        return Reply(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: data)
    }
}

/// A JSON value from Home Assistant's state attributes, comparable in expectations.
enum JSONValue: Sendable, Equatable, Decodable, CustomStringConvertible {
    case string(String), number(Double), bool(Bool), null, other

    init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else { self = .other }
    }

    var string: String? { if case .string(let s) = self { s } else { nil } }
    var number: Double? { if case .number(let n) = self { n } else { nil } }

    var description: String {
        switch self {
        case .string(let s): "\"\(s)\""
        case .number(let n): "\(n)"
        case .bool(let b): "\(b)"
        case .null: "null"
        case .other: "{...}"
        }
    }
}
