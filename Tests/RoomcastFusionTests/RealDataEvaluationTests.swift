import Foundation
import Testing
import RoomcastFusion
import Shared

@Suite struct RealDataEvaluationTests {
    @Test(arguments: ["robot", "calib"])
    func fusionOnKolakowski(_ set: String) throws {
        let replay = try KolakowskiReplay.load(set)
        var engine = FusionEngine(site: replay.site, settings: FusionSettings())
        #expect(engine.usesGeometry)
        let score = replay.score(replay.run(&engine))
        var baseline = NearestEMABaseline(site: replay.site)
        let base = replay.score(replay.run(&baseline))
        print("kolakowski-\(set): fusion \(score); nearest-EMA \(base); offsets \(replay.site.nodes.map { engine.learnedOffset(of: $0.name) ?? 0 })")
        #expect(score.accuracy > base.accuracy)
    }
}
