import Testing
import RoomcastFusion
import Shared

/// How much a second of a beacon's levels counts follows how sure the nodes are of them
/// (`rssi_sd`): their mean precision. It was their mean variance, so the least sure link ruled: one far node
/// whose filter had heard the beacon rarely (sd 15 dB) cut every room's evidence twentyfold,
/// and a walk from the kitchen into the office was followed 5.5 s after it, not 0.5 s.
@Suite struct LevelCertaintyTests {
    static let site = SiteModel(
        rooms: [.init(name: "kitchen"), .init(name: "office"), .init(name: "hall")],
        nodes: [.init(name: "n-kitchen", room: "kitchen"), .init(name: "n-office", room: "office"), .init(name: "n-hall", room: "hall")])

    /// Seconds from the walk until the office is shown, the hall's node as sure as `hallSD`.
    static func followed(hallSD: Double) -> Double? {
        var engine = FusionEngine(site: site)
        var synth = Synthetic()
        for t in stride(from: 0.0, to: 120, by: 1) {
            let walked = t >= 60
            for (node, rssi, sd) in [("n-kitchen", walked ? -76.0 : -60, 2.0), ("n-office", walked ? -60 : -76, 2), ("n-hall", -88, hallSD)] {
                var r = synth.reading(node, rssi: rssi, at: t, interval: 1)
                r.rssiSD = sd
                engine.ingest(r, now: t)
            }
            let decided = engine.tick(now: t + 0.5)
            if walked, decided.contains(where: { $0.room == "office" }) { return t + 0.5 - 60 }
            if t == 59 { #expect(engine.decision(for: Synthetic.tag)?.room == "kitchen") }
        }
        return nil
    }

    @Test func oneUnsureFarNodeDoesNotSilenceTheSureOnes() throws {
        let sure = try #require(Self.followed(hallSD: 2), "followed with every node sure")
        let unsure = try #require(Self.followed(hallSD: 15), "followed with the hall's node unsure")
        #expect(unsure <= sure + 2, "followed after \(unsure) s with the hall's node unsure, \(sure) s without")
    }
}
