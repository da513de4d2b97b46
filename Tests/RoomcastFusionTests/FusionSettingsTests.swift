import Foundation
import Testing
import RoomcastFusion

@Suite struct FusionSettingsTests {
    @Test func decodesSnakeCaseWithDefaults() throws {
        let json = #"{"away_timeout": 60, "switch_margin": 0.4, "use_geometry": false, "rssi_input": "filtered"}"#
        let s = try JSONDecoder().decode(FusionSettings.self, from: Data(json.utf8))
        #expect(s.awayTimeout == 60 && s.switchMargin == 0.4 && !s.useGeometry && s.rssiInput == .filtered)
        #expect(s.freshness == FusionSettings().freshness)
        #expect(s.validate().isEmpty)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let text = String(decoding: try encoder.encode(s), as: UTF8.self)
        #expect(text.contains(#""away_timeout":60"#) && text.contains(#""skew_bound":2"#))
        #expect(try JSONDecoder().decode(FusionSettings.self, from: Data(text.utf8)) == s)
    }

    @Test func validateReportsEveryProblemWithItsPath() {
        var s = FusionSettings()
        s.awayTimeout = 0
        s.switchMargin = 1.5
        s.evidenceWeight = .nan
        s.maxBeacons = 0
        s.stillRecentTimeConstant = 0
        let problems = s.validate()
        #expect(problems.count == 5)
        #expect(problems.contains { $0.hasPrefix("fusion.away_timeout:") })
        #expect(problems.contains { $0.hasPrefix("fusion.switch_margin:") })
        #expect(problems.contains { $0.hasPrefix("fusion.evidence_weight:") })
        #expect(problems.contains { $0.hasPrefix("fusion.max_beacons:") })
        #expect(problems.contains { $0.hasPrefix("fusion.still_recent_time_constant:") })
    }
}
