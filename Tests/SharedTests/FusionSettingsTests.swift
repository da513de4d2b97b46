import Foundation
import Testing
import Shared
import RoomcastAggregator
import RoomcastConfig
import RoomcastFusion
import RoomcastYAML

@Suite struct FusionSettingsTests {
    @Test func theTableDecodesEveryKeyAndLeavesTheRestAtTheirDefaults() throws {
        let json = #"{"away_timeout_s": 60, "use_geometry": false, "max_beacons": 50}"#
        let s = try JSONDecoder().decode(FusionSettings.self, from: Data(json.utf8))
        var expected = FusionSettings()
        (expected.awayTimeout, expected.useGeometry, expected.maxBeacons) = (60, false, 50)
        #expect(s == expected)
        #expect(s.validate().isEmpty)
        // The file's form round-trips, every key of the table in it.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(s), as: UTF8.self)
        for key in FusionSettings.keys { #expect(text.contains("\"\(key.name)\":"), "\(key.name) missing from \(text)") }
        #expect(try JSONDecoder().decode(FusionSettings.self, from: Data(text.utf8)) == s)
    }

    @Test func aUserCanSetFewSettingsEachDocumentedOnce() {
        let names = FusionSettings.keys.map(\.name)
        #expect(names.count <= 15)
        #expect(Set(names).count == names.count)
        for key in FusionSettings.keys { #expect(!key.summary.isEmpty, "\(key.name) has no summary") }
    }

    @Test func everyValueOutOfBoundsIsReportedWithItsPath() {
        var s = FusionSettings()
        s.awayTimeout = 0
        s.wallLoss = .nan
        s.maxBeacons = 0
        #expect(s.validate() == [
            "fusion.away_timeout_s: must be between 1 and 86400 s, found 0.0",
            "fusion.wall_loss_db: must be between 0 and 40 dB, found nan",
            "fusion.max_beacons: must be between 1 and 1000000, found 0",
        ])
    }

    /// Listed beacons are never evicted and listed nodes never refused: a table smaller than
    /// the lists would leave some silently untracked.
    @Test func theTablesHoldWhatTheSiteLists() throws {
        let yaml = """
            fusion: {max_beacons: 1, max_nodes: 1}
            rooms: [{name: kitchen}]
            nodes: [{name: a, room: kitchen}, {name: b, room: kitchen}]
            beacons: [{id: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1"}, {id: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2"}]

            """
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(AggregatorConfig.self, yaml: yaml) }
        #expect(error.messages.sorted() == ["fusion.max_beacons: must be at least the number of beacons listed (2)",
                                            "fusion.max_nodes: must be at least the number of nodes listed (2)"])
        _ = try ConfigLoader.parse(AggregatorConfig.self, yaml: yaml.replacingOccurrences(of: "max_beacons: 1, max_nodes: 1", with: "max_beacons: 2, max_nodes: 2"))
    }

    @Test func anUnknownOrRetiredKeyIsAnErrorWithTheClosestKey() throws {
        let yaml = "fusion:\n  away_timout_s: 20\n  motion_gate: true\n"
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fusion-\(UUID().uuidString).yaml")
        try Data(yaml.utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.load(AggregatorConfig.self, from: url.path) }
        let messages = error.problems.map { "\($0.path): \($0.message)" }
        #expect(messages.contains("fusion.away_timout_s: unknown key; did you mean 'away_timeout_s'?"), "\(messages)")
        #expect(messages.contains { $0.hasPrefix("fusion.motion_gate: unknown key") }, "\(messages)")
    }

    /// docs/configuration.md carries the reference the table generates (`roomcast-bench
    /// reference`), so no key is documented that the config does not take, and none taken
    /// that is not documented.
    @Test func theConfigurationReferenceIsTheTables() throws {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/configuration.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- fusion-settings:begin -->\n"))
        let end = try #require(text.range(of: "<!-- fusion-settings:end -->"))
        let carried = String(text[begin.upperBound..<end.lowerBound])
        #expect(carried == FusionSettings.referenceMarkdown(),
                "docs/configuration.md is out of date: replace its fusion-settings block with `swift run roomcast-bench reference`")
    }
}
