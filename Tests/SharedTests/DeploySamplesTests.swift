import Foundation
import Shared
import Testing
import RoomcastAgent
import RoomcastAggregator
import RoomcastConfig
import RoomcastFusion
import RoomcastYAML

/// The commented samples in deploy/ must load as they are.
@Suite struct DeploySamplesTests {
    /// A file of the repository, by its path from the top.
    static func repositoryFile(_ relative: String, file: String = #filePath) -> URL {
        var url = URL(fileURLWithPath: file)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent(relative)
    }

    static func path(_ name: String) -> String { repositoryFile("deploy/\(name)").path }

    /// As shipped it tracks every beacon heard: a user who edits only `node` and the broker must
    /// see their own beacons, not only an example's (a region and a beacon of the sample's made
    /// every other beacon untracked, without a word in the log).
    @Test func agentSampleLoads() throws {
        let c = try ConfigLoader.load(AgentConfig.self, from: Self.path("agent.yaml"))
        #expect(c.node == "kitchen-pi" && c.regions.isEmpty && c.beacons.isEmpty)
        #expect(c.advertising.validate() == [])
        // Its commented examples of regions and beacons are valid once uncommented.
        let sample = try String(contentsOfFile: Self.path("agent.yaml"), encoding: .utf8)
        let lines = sample.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: "# regions:"))
        let example = lines[start...].prefix { $0.hasPrefix("# ") }.map { String($0.dropFirst(2)) }
        let uncommented = sample + "\n" + example.joined(separator: "\n") + "\n"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("agent-examples-\(UUID().uuidString).yaml")
        try Data(uncommented.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let withExamples = try ConfigLoader.load(AgentConfig.self, from: file.path)
        #expect(withExamples.regions.count == 2 && withExamples.beacons.count == 1)
        #expect(withExamples.advertising.validate() == [])
    }

    @Test func aggregatorSampleLoads() throws {
        let c = try ConfigLoader.load(AggregatorConfig.self, from: Self.path("aggregator.yaml"))
        #expect(c.site.rooms.count == 3 && c.site.nodes.count == 3)
        #expect(c.discovery.enabled)
        // Its fusion: section lists every setting at its default, so it shows what there is.
        #expect(c.fusion == FusionSettings())
        let sample = try String(contentsOfFile: Self.path("aggregator.yaml"), encoding: .utf8)
        for key in FusionSettings.keys {
            #expect(sample.contains("\n  \(key.name):"), "deploy/aggregator.yaml's fusion: lacks \(key.name)")
        }
    }

    /// The `section.key` rows of docs/configuration.md for `sections`, as YAML setting each
    /// key to its documented default (rows whose default is not a plain value are skipped;
    /// the generated `fusion:` tables write `30 s` and `true`).
    static func documentedDefaults(_ sections: Set<String>) throws -> (yaml: String, keys: Int) {
        let reference = try String(contentsOf: repositoryFile("docs/configuration.md"), encoding: .utf8)
        var rows: [String: [String]] = [:]
        var keys = 0
        for line in reference.split(separator: "\n") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 2, cells[0].hasPrefix("`"), let value = ConfigReferenceTests.plainDefault(cells[1]) else { continue }
            let key = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`")).split(separator: ".")
            guard key.count == 2, sections.contains(String(key[0])) else { continue }
            rows[String(key[0]), default: []].append("  \(key[1]): \(value)")
            keys += 1
        }
        let yaml = rows.sorted { $0.key < $1.key }.map { "\($0.key):\n" + $0.value.joined(separator: "\n") }.joined(separator: "\n")
        return (yaml, keys)
    }

    static func load<T: Decodable>(_ type: T.Type, _ yaml: String) throws -> T {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("documented-\(UUID().uuidString).yaml")
        try Data(yaml.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try ConfigLoader.load(type, from: file.path)
    }

    /// Every `fusion.`, `discovery.`, `output.`, `standby.` and `inputs.` key of the reference
    /// in docs/configuration.md, set to its documented default: the file loads (a documented
    /// key the config does not know would make a user's file be refused), and what loads is
    /// the default.
    @Test func everyDocumentedAggregatorKeyLoadsAtItsDocumentedDefault() throws {
        let (yaml, keys) = try Self.documentedDefaults(["fusion", "discovery", "output", "standby", "inputs"])
        #expect(keys >= 19, "\(yaml)")
        let c = try Self.load(AggregatorConfig.self, yaml)
        let defaults = AggregatorConfig()
        #expect(c.fusion == defaults.fusion)
        #expect(c.discovery == defaults.discovery)
        #expect(c.output == defaults.output)
        #expect(c.standby == defaults.standby)
        #expect(c.inputs == defaults.inputs)
    }

    /// The same for the agent's `scan.`, `ranging.`, `publish.` and `outputs.` keys.
    @Test func everyDocumentedAgentKeyLoadsAtItsDocumentedDefault() throws {
        let (yaml, keys) = try Self.documentedDefaults(["scan", "ranging", "publish", "outputs"])
        #expect(keys >= 14, "\(yaml)")
        let c = try Self.load(AgentConfig.self, "node: test-pi\n" + yaml)
        let defaults = AgentConfig(node: "test-pi")
        #expect(c.scan == defaults.scan)
        #expect(c.ranging == defaults.ranging)
        #expect(c.publish == defaults.publish)
        #expect(c.outputs == defaults.outputs)
    }
}
