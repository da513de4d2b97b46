import Foundation
import Testing
import RoomcastFusion
import Shared

/// What the engine does when a beacon stops being heard: its evidence ages and expires
/// node by node, and the last node left must not take it; a beacon that walks to where only
/// one node hears it must move.
@Suite("Fading evidence: a beacon that leaves keeps its room until away")
struct FadingEvidenceTests {
    /// Kitchen, hall (the way out), landing upstairs and a garage, one node each; no geometry.
    static let site = SiteModel(
        rooms: ["kitchen", "hall", "landing", "garage"].map { SiteModel.Room(name: $0) },
        nodes: ["kitchen", "hall", "landing", "garage"].map { SiteModel.Node(name: "n-" + $0, room: $0) })

    typealias Change = (t: Double, room: String?, reason: String?)

    /// A beacon sits in the kitchen for 20 s and walks into the hall over the next 4 s (the
    /// kitchen and hall nodes hear it five times a second, the landing's every 2 s,
    /// faintly, so its evidence stays fresh longest); from 24 s on `after(t)` says what each node hears (nil: nothing). Ticks
    /// ten times a second until `end`; returns every decision change.
    static func run(_ settings: FusionSettings, end: Double = 90, after: (Double) -> [String: Double]) -> [Change] {
        var engine = FusionEngine(site: site, settings: settings)
        var synth = Synthetic()
        var rng = SeededRandom(seed: 6)
        var out: [Change] = []
        for step in 0..<Int(end * 10) {
            let t = Double(step) / 10
            var heard: [String: Double] = [:]
            if t < 24 {
                let walked = min(max((t - 20) / 4, 0), 1)
                if step % 2 == 0 { heard = ["n-kitchen": -60 - 14 * walked, "n-hall": -74 + 14 * walked] }
                if step % 20 == 5 { heard["n-landing"] = -84 }
            } else {
                heard = after(t)
            }
            for (node, mean) in heard.sorted(by: { $0.key < $1.key }) {
                engine.ingest(synth.reading(node, rssi: mean + rng.gaussian(sigma: 1.5), at: t), now: t)
            }
            for d in engine.tick(now: t) { out.append((t, d.room, d.reason)) }
        }
        return out
    }

    /// Out of the front door at 24 s: everything stops, except the landing upstairs, which
    /// catches a faint packet every 1.5 s for another 3 s.
    static func leaving(_ t: Double) -> [String: Double] {
        t < 28 && Int((t * 10).rounded()) % 15 == 0 ? ["n-landing": -84] : [:]
    }

    @Test("leaving through the hall: the hall until away, never the landing that heard the last faint packets")
    func leavingKeepsTheLastRoom() throws {
        let changes = Self.run(FusionSettings(), after: Self.leaving)
        #expect(changes.map(\.room) == ["kitchen", "hall", nil])
        let away = try #require(changes.last)
        #expect(away.reason == "timeout")
        // Away 30 s after the last reading (the landing's, at 27 s).
        #expect(away.t > 27 + 30 && away.t < 27 + 31)
    }

    @Test("evidence that only ages is no news: a beacon no node hears any more keeps its room until away")
    func agingEvidenceHoldsTheRoom() {
        // Nothing at all after 24 s: the evidence expires node by node (the landing's last),
        // and no node is heard again.
        #expect(Self.run(FusionSettings()) { _ in [:] }.map(\.room) == ["kitchen", "hall", nil])
    }

    /// From 24 s the beacon walks on from the hall into the garage over 3 s: the kitchen
    /// and hall nodes hear it fade and then lose it, the garage node (which only hears the
    /// garage) hears it rise to `level`.
    static func intoTheGarage(level: Double) -> (Double) -> [String: Double] {
        { t in
            let step = Int((t * 10).rounded())
            guard step % 2 == 0 else { return [:] }
            let walked = min((t - 24) / 3, 1)
            var heard = ["n-garage": -88 + (88 + level) * walked]
            if walked < 1 { heard["n-hall"] = -60 - 25 * walked; heard["n-kitchen"] = -74 - 16 * walked }
            return heard
        }
    }

    @Test("a walk into a room only one node hears is followed, loud or faint", arguments: [-58.0, -78.0])
    func aLoneNodeStillTakesARealMove(level: Double) throws {
        let changes = Self.run(FusionSettings(), end: 60, after: Self.intoTheGarage(level: level))
        #expect(changes.map(\.room) == ["kitchen", "hall", "garage"])
        let garage = try #require(changes.last)
        #expect(garage.t < 27 + 6)
    }
}

extension FadingEvidenceTests {
    /// In the hall from 24 s (its node loud, the kitchen's fainter) until 100 s, long enough
    /// to hold still with a record; then `then(t)` says what each node hears.
    static func stillInTheHall(then: @escaping (Double) -> [String: Double]) -> (Double) -> [String: Double] {
        { t in
            guard Int((t * 10).rounded()) % 2 == 0 else { return [:] }
            return t < 100 ? ["n-hall": -60, "n-kitchen": -74] : then(t)
        }
    }

    @Test("a still beacon that goes out of hearing of its nodes, into a room only a new node hears, is followed")
    func outOfHearingIsAMove() throws {
        // No link parts on such a move: the hall and kitchen nodes fall silent, the garage
        // node starts hearing it at a level that then holds.
        let changes = Self.run(FusionSettings(), end: 160, after: Self.stillInTheHall { _ in ["n-garage": -62] })
        #expect(changes.map(\.room) == ["kitchen", "hall", "garage"])
        let garage = try #require(changes.last)
        #expect(garage.t > 100 && garage.t < 100 + 15)
    }

    @Test("a still beacon no node hears for a while, heard first again by a fainter node, stays put")
    func aGapIsNoMove() {
        // Nothing for 15 s (a gap like the Kolakowski robot's), then the kitchen node hears
        // it 4 s before the hall node does: both heard it before the gap.
        let changes = Self.run(FusionSettings(), end: 160, after: Self.stillInTheHall { t in
            t < 115 ? [:] : t < 119 ? ["n-kitchen": -74] : ["n-hall": -60, "n-kitchen": -74]
        })
        #expect(changes.map(\.room) == ["kitchen", "hall"])
    }

    @Test("a still beacon whose loudest node misses it for a while stays put")
    func aMissingLoudestNodeIsNoMove() {
        // The hall node hears nothing for 15 s (someone stands in the way); the kitchen node,
        // which heard it all along, is the loudest meanwhile.
        let changes = Self.run(FusionSettings(), end: 160, after: Self.stillInTheHall { t in
            t < 115 ? ["n-kitchen": -74] : ["n-hall": -60, "n-kitchen": -74]
        })
        #expect(changes.map(\.room) == ["kitchen", "hall"])
    }
}
