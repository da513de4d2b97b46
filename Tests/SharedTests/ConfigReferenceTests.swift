import Foundation
import Shared
import Testing
import RoomcastAgent
import RoomcastAggregator
@testable import RoomcastConfig
import RoomcastYAML

/// docs/configuration.md and the config types agree, both ways: a file that sets every
/// documented key decodes with no unknown key, and every key the decoder asks for (present
/// in the file or not: `ConfigDecoder.Result.requestedKeys`) has a row of its own.
@Suite struct ConfigReferenceTests {
    enum Program: CaseIterable { case agent, aggregator }

    /// One `| `key` | default | … |` row of the reference.
    struct Row: Equatable {
        var key: String
        var defaultCell: String
    }

    /// The rows of each program: the `## ` sections marked "(both programs)" count for
    /// both, "Edge agent" for the agent, "Aggregator" (with its generated `fusion:` block)
    /// for the aggregator; others (flags, exit codes) hold no keys.
    static func rows(_ markdown: String) -> (rows: [Program: [Row]], malformed: [String]) {
        var out: [Program: [Row]] = [.agent: [], .aggregator: []]
        var malformed: [String] = []
        var programs: [Program] = []
        let keyShape = /[a-z_0-9]+(\[\])?(\.[a-z_0-9]+(\[\])?)*/
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") {
                if line.contains("(both programs)") { programs = Program.allCases }
                else if line == "## Edge agent" { programs = [.agent] }
                else if line == "## Aggregator" { programs = [.aggregator] }
                else { programs = [] }
                continue
            }
            guard !programs.isEmpty, line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2 else { malformed.append(String(line)); continue }
            let key = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            guard cells[0].hasPrefix("`"), cells[0].hasSuffix("`"), key.wholeMatch(of: keyShape) != nil else {
                malformed.append(String(line)); continue
            }
            for p in programs { out[p]!.append(Row(key: key, defaultCell: cells[1])) }
        }
        return (out, malformed)
    }

    static func reference() throws -> String {
        try String(contentsOf: DeploySamplesTests.repositoryFile("docs/configuration.md"), encoding: .utf8)
    }

    /// Values for the documented keys whose default is not a plain value to copy (required,
    /// none, derived); each is valid for its key, so the file decodes without a problem.
    static let samples: [String: String] = [
        "node": "test-pi", "room": "kitchen", "scan.burst_window_ms": "20",
        "mqtt.username": "roomcast", "mqtt.password": "secret", "mqtt.password_env": "ROOMCAST_MQTT_PASSWORD",
        "mqtt.client_id": "roomcast-test", "mqtt.tls.ca_file": "/etc/roomcast/ca.pem",
        "mqtt.tls.cert_file": "/etc/roomcast/client.pem", "mqtt.tls.key_file": "/etc/roomcast/client.key",
        "regions[].name": "office", "regions[].uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0",
        "regions[].major": "100", "regions[].minor": "7",
        "regions[].namespace": "\"12345678901234678901\"", "regions[].instance": "\"0123456789ab\"",
        "beacons[].id": "\"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-100-7\"", "beacons[].name": "Keys",
        "beacons[].power": "-61",
        "irks[].name": "anna-phone", "irks[].key": "\"0123456789abcdef0123456789abcdef\"",
        "ibeacon_company_ids": "[0x0059]", "fingerprints.builtins": "[ruuvi]",
        "fingerprints.rules[].name": "tag", "fingerprints.rules[].company_id": "0x004C",
        "fingerprints.rules[].manufacturer_prefix": "\"0215\"", "fingerprints.rules[].service_uuid": "feaa",
        "fingerprints.rules[].service_data_prefix": "\"00\"", "fingerprints.rules[].local_name": "Tag",
        "fingerprints.rules[].local_name_prefix": "Ta", "fingerprints.rules[].value": "one",
        "fingerprints.rules[].offset": "2", "fingerprints.rules[].length": "6",
        "advertise.uuid": "e2c56db5-dffb-48d2-b060-d0f5a71096e0",
        "http.listen": "\"127.0.0.1:8267\"", "http.token": "secret", "http.token_env": "ROOMCAST_HTTP_TOKEN",
        "rooms[].name": "kitchen", "rooms[].polygon": "[[0, 0], [4, 0], [4, 4]]", "rooms[].display_name": "Kitchen",
        "rooms[].area": "Kitchen", "rooms[].open_plan": "downstairs",
        "rooms[].doorways": "[[[4, 1], [4, 2]]]",
        "nodes[].name": "kitchen-pi", "nodes[].room": "kitchen", "nodes[].display_name": "Kitchen Pi",
        "nodes[].position": "[1, 1, 1]", "nodes[].beacon": "\"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-900-1\"",
        "people[].name": "Alice", "people[].id": "alice",
        "people[].beacons": "[\"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-100-7\"]",
        "partition.floors": "[0]", "partition.rooms": "[kitchen]", "standby.guard_username": "aggregator-guard",
        "learn.state_file": "/tmp/learned-rooms.json",
    ]

    /// The value a file gives `row`: its sample, else its documented default when that is a
    /// plain value (`` `30` ``, `` `"5"` ``, `30 s`, `true`); nil when there is neither.
    static func value(_ row: Row) -> String? {
        samples[row.key] ?? plainDefault(row.defaultCell)
    }

    /// A default cell as a YAML value: `` `30` `` or `` `"5"` `` as written, the generated
    /// tables' `30 s` and `true` without their unit; nil for none, required, derived.
    static func plainDefault(_ cell: String) -> String? {
        if cell.hasPrefix("`"), cell.hasSuffix("`"), cell.count > 2, cell.dropFirst().dropLast().allSatisfy({ $0 != "`" }) {
            return String(cell.dropFirst().dropLast())
        }
        if let m = cell.wholeMatch(of: /(-?[0-9.]+)( [a-zA-Z]+)?/) { return String(m.1) }
        if cell == "true" || cell == "false" { return cell }
        return nil
    }

    /// A YAML file setting every documented key of `rows` (a key that other rows extend,
    /// like `regions` for `regions[].name`, is their mapping or one-entry list), and the
    /// keys that have no value.
    static func file(_ rows: [Row], extra: [String: String] = [:]) -> (yaml: String, missing: [String]) {
        final class Tree {
            var entries: [(String, Tree)] = []
            var leaf: String?
            var isList = false
            func child(_ name: String) -> Tree {
                if let e = entries.first(where: { $0.0 == name }) { return e.1 }
                let t = Tree()
                entries.append((name, t))
                return t
            }
            func lines(_ indent: Int) -> [String] {
                let pad = String(repeating: " ", count: indent)
                return entries.flatMap { name, t -> [String] in
                    if let leaf = t.leaf { return ["\(pad)\(name): \(leaf)"] }
                    guard t.isList else { return ["\(pad)\(name):"] + t.lines(indent + 2) }
                    var inner = t.lines(indent + 4)
                    inner[0] = pad + "  - " + inner[0].dropFirst(indent + 4)
                    return ["\(pad)\(name):"] + inner
                }
            }
        }
        let root = Tree()
        let keys = Set(rows.map(\.key))
        var missing: [String] = []
        var all = rows.map { ($0.key, value($0)) }
        for (k, v) in extra.sorted(by: { $0.key < $1.key }) { all.append((k, v)) }
        for (key, value) in all {
            if keys.contains(where: { $0.hasPrefix(key + ".") || $0.hasPrefix(key + "[].") }) { continue }
            guard let value else { missing.append(key); continue }
            var node = root
            for part in key.split(separator: ".") {
                if part.hasSuffix("[]") {
                    node = node.child(String(part.dropLast(2)))
                    node.isList = true
                } else {
                    node = node.child(String(part))
                }
            }
            node.leaf = value
        }
        return (root.lines(0).joined(separator: "\n") + "\n", missing)
    }

    static func decode(_ program: Program, _ yaml: String) throws -> (problems: [ConfigProblem], unknown: [ConfigProblem], requested: Set<String>) {
        guard let tree = try YAMLReader().parse(yaml) else { throw ConfigProblem(path: "", message: "empty") }
        func run<T: Decodable>(_ type: T.Type) -> (problems: [ConfigProblem], unknown: [ConfigProblem], requested: Set<String>) {
            let result = ConfigDecoder().decode(T.self, from: tree)
            return (result.problems, result.unknownKeys, requestedKeys(result.requestedKeys))
        }
        switch program {
        case .agent: return run(AgentConfig.self)
        case .aggregator: return run(AggregatorConfig.self)
        }
    }

    /// `nodes[0]` + `room` → `nodes[].room`: the form the reference writes keys in.
    static func requestedKeys(_ byPath: [String: Set<String>]) -> Set<String> {
        var out: Set<String> = []
        for (path, keys) in byPath {
            let parent = path.replacing(/\[[0-9]+\]/, with: "[]")
            for key in keys { out.insert(parent.isEmpty ? key : parent + "." + key) }
        }
        return out
    }

    /// Keys asked for that no row documents, itself or (for a section or list) through a
    /// row below it.
    static func undocumented(requested: Set<String>, documented: Set<String>) -> [String] {
        requested.filter { key in
            !documented.contains(key) && !documented.contains { $0.hasPrefix(key + ".") || $0.hasPrefix(key + "[].") }
        }.sorted()
    }

    @Test(arguments: Program.allCases)
    func everyDocumentedKeyExistsAndEveryKeyIsDocumented(_ program: Program) throws {
        let (all, malformed) = Self.rows(try Self.reference())
        #expect(malformed.isEmpty, "rows whose first cell is not a `key`: \(malformed)")
        let rows = all[program]!
        let documented = Set(rows.map(\.key))
        // The reference really was read: both programs' sections, shared and own keys.
        let expected = program == .agent ? ["node", "mqtt.broker", "regions[].uuid", "irk_cache_size", "http.listen"]
                                         : ["mqtt.broker", "nodes[].position", "fusion.away_timeout_s", "learn.state_file", "http.listen"]
        for key in expected {
            let found = documented.contains(key)
            #expect(found, "docs/configuration.md has no row `\(key)`")
        }
        #expect(documented.count == rows.count, "a key documented twice for \(program)")

        let (yaml, missing) = Self.file(rows)
        #expect(missing.isEmpty, "no sample value for \(missing); add one to ConfigReferenceTests.samples")
        let decoded = try Self.decode(program, yaml)
        // Every value decoded, so no type stopped early and left keys unasked.
        #expect(decoded.problems.isEmpty, "\(decoded.problems)\n\(yaml)")
        #expect(decoded.unknown.isEmpty, "documented keys the config rejects: \(decoded.unknown.map(\.path))")
        for key in documented.sorted() {
            let read = decoded.requested.contains(key)
            #expect(read, "`\(key)` is documented but never read")
        }
        let undocumented = Self.undocumented(requested: decoded.requested, documented: documented)
        #expect(undocumented.isEmpty, "config keys without a row in docs/configuration.md: \(undocumented)")
        #expect(decoded.requested.count >= documented.count)
    }

    /// The checks above catch what they are for: a key the config does not know, and a key
    /// the reference leaves out.
    @Test func theChecksFailOnAMismatch() throws {
        let rows = Self.rows(try Self.reference()).rows[.agent]!
        let (yaml, _) = Self.file(rows, extra: ["mqtt.brokr": "x", "regions[].colour": "red"])
        let decoded = try Self.decode(.agent, yaml)
        #expect(Set(decoded.unknown.map(\.path)) == ["mqtt.brokr", "regions[0].colour"])

        let fewer = Set(rows.map(\.key)).subtracting(["mqtt.keepalive", "irk_cache_size", "regions[].minor"])
        #expect(Self.undocumented(requested: decoded.requested, documented: fewer) == ["irk_cache_size", "mqtt.keepalive", "regions[].minor"])
        // A section is documented through the rows below it; without any, it is not.
        let noScan = Set(rows.map(\.key)).filter { !$0.hasPrefix("scan.") }
        #expect(Self.undocumented(requested: decoded.requested, documented: noScan).contains("scan"))
    }

    /// A key in the wrong section (a line indented one level too little, a key under the wrong
    /// heading) is pointed to the one section that reads it. The catalogue it is looked up in is
    /// found by probing the decoders, and holds every key a file setting every documented key
    /// makes them read.
    @Test(arguments: Program.allCases)
    func aKeyInTheWrongSectionIsPointedToItsSection(_ program: Program) throws {
        let rows = Self.rows(try Self.reference()).rows[program]!
        let decoded = try Self.decode(program, Self.file(rows).yaml)
        let catalogue = switch program {
        case .agent: KeyCatalogue.keys(of: AgentConfig.self)
        case .aggregator: KeyCatalogue.keys(of: AggregatorConfig.self)
        }
        let probed = Self.requestedKeys(catalogue)
        #expect(decoded.requested.subtracting(probed).isEmpty, "keys the probe did not find: \(decoded.requested.subtracting(probed).sorted())")
        func messages(_ yaml: String) -> [String] {
            do {
                switch program {
                case .agent: _ = try ConfigLoader.parse(AgentConfig.self, yaml: "node: hall-pi\n" + yaml)
                case .aggregator: _ = try ConfigLoader.parse(AggregatorConfig.self, yaml: yaml)
                }
                return []
            } catch { return error.problems.map(\.description) }
        }
        let misplaced = program == .agent
            ? messages("path_loss_exponent: 3\npublish:\n  filter: {kind: kalman}\n")
            : messages("away_timeout_s: 20\nfusion:\n  broker: mqtt://x\nmqtt:\n  ca_file: /x\n")
        let expected = program == .agent
            ? ["path_loss_exponent: unknown key; did you mean 'ranging.path_loss_exponent'?",
               "publish.filter: unknown key; did you mean 'ranging.filter'?"]
            : ["away_timeout_s: unknown key; did you mean 'fusion.away_timeout_s'?",
               "fusion.broker: unknown key; did you mean 'mqtt.broker'?",
               "mqtt.ca_file: unknown key; did you mean 'mqtt.tls.ca_file'?"]
        for line in expected { #expect(misplaced.contains { $0.hasPrefix(line) }, "\(line)\n\(misplaced)") }
        // A key several sections read names none of them.
        let ambiguous = messages("name: x\n").first { $0.hasPrefix("name:") }
        #expect(ambiguous.map { $0.hasPrefix("name: unknown key") && !$0.contains("did you mean") } == true, "\(String(describing: ambiguous))")
    }
}
