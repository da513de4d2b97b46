import Foundation
import Testing
import RoomcastFusion
import Shared

/// Parameter exploration on the real recordings: runs only when FUSION_TUNE names
/// a file of settings (one JSON object per line) and prints a score per line.
@Suite struct TuningTests {
    @Test func tune() throws {
        guard let path = ProcessInfo.processInfo.environment["FUSION_TUNE"] else { return }
        let sets = try ["robot", "calib"].map { try KolakowskiReplay.load($0) }
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") where !line.isEmpty {
            let settings = try JSONDecoder().decode(FusionSettings.self, from: Data(line.utf8))
            var out = "\(line)\n"
            for replay in sets {
                var engine = FusionEngine(site: replay.site, settings: settings)
                let changes = replay.run(&engine)
                out += "   \(replay.name): \(replay.score(changes))\n"
                if ProcessInfo.processInfo.environment["FUSION_TRACE"] != nil {
                    for s in replay.truth { out += String(format: "      truth %8.1f-%8.1f %@\n", s.t0, s.t1, s.room ?? "away") }
                    for c in changes { out += String(format: "      dec   %8.1f %@\n", c.t, c.room ?? "away") }
                }
            }
            print(out, terminator: "")
        }
    }
}
