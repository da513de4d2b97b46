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
                out += "   \(replay.name): \(replay.score(replay.run(&engine)))\n"
            }
            print(out, terminator: "")
        }
    }
}
