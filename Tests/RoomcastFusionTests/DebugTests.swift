import Foundation
import Testing
import RoomcastFusion
import Shared

@Suite struct DebugTests {
    @Test func debugStill() throws {
        guard let path = ProcessInfo.processInfo.environment["FUSION_DEBUG"] else { return }
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") where !line.isEmpty {
            let settings = try JSONDecoder().decode(FusionSettings.self, from: Data(line.utf8))
            var counts: [Int] = []
            for (sigma, gap) in [(6.0, 2.0), (4.0, 2.0), (6.0, 0.0)] {
                var engine = FusionEngine(site: Synthetic.twoRooms, settings: settings)
                let changes = FusionEngineTests.drive(&engine, from: 1000, to: 4600, sigma: sigma, seed: 1) { _ in ["n-kitchen": -72, "n-office": -72 - gap] }
                counts.append(changes.count)
            }
            var engine = FusionEngine(site: Synthetic.twoRooms, settings: settings)
            let move = FusionEngineTests.drive(&engine, from: 0, to: 300, sigma: 5, seed: 2) { t in
                t < 150 ? ["n-kitchen": -60, "n-office": -78] : ["n-kitchen": -78, "n-office": -60]
            }
            print(line, "changes/h:", counts, "move at", move.map { $0.0 })
        }
    }
}
