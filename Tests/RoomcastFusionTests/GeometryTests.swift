import Foundation
import Testing
import RoomcastFusion
import Shared

@Suite struct GeometryTests {
    /// Two rooms sharing the wall x = 5; the right room's node hangs right next to it.
    static let wallSite = SiteModel(
        rooms: [.init(name: "left", polygon: [[0, 0], [5, 0], [5, 4], [0, 4]]),
                .init(name: "right", polygon: [[5, 0], [10, 0], [10, 4], [5, 4]])],
        nodes: [.init(name: "l1", room: "left", position: [1, 1, 2.2]),
                .init(name: "l2", room: "left", position: [1, 3, 2.2]),
                .init(name: "r1", room: "right", position: [5.4, 2, 2.2]),
                .init(name: "r2", room: "right", position: [9, 2, 2.2])])

    /// Log-distance (n = 2, −59 dBm at 1 m) with 4 dB per wall crossed at x = 5.
    static func rssi(from node: [Double], to p: [Double]) -> Double {
        let dx = p[0] - node[0], dy = p[1] - node[1], dz = p[2] - node[2]
        let d = max((dx * dx + dy * dy + dz * dz).squareRoot(), 0.3)
        let walls = (p[0] < 5) != (node[0] < 5) ? 1.0 : 0.0
        return -59 - 20 * log10(d) - 4 * walls
    }

    static func replay(_ engine: inout FusionEngine, site: SiteModel, at position: [Double], from t0: Double,
                       seconds: Double, sigma: Double, bias: [String: Double] = [:],
                       rng: inout SeededRandom, synth: inout Synthetic) {
        var t = t0
        while t < t0 + seconds {
            for node in site.nodes {
                let mean = rssi(from: node.position!, to: position) + (bias[node.name] ?? 0)
                engine.ingest(synth.reading(node.name, rssi: mean + rng.gaussian(sigma: sigma), at: t), now: t)
            }
            _ = engine.tick(now: t)
            t += 0.2
        }
    }

    /// Two small rooms 90 km apart on one floor (a typo in a coordinate): the wall raster and
    /// the cell lattice span the floor's bounding box, and at the configured resolution they
    /// asked for about 10^11 cells, and the aggregator died allocating them at start. The box
    /// now bounds the resolution; the engine starts and still places the beacon.
    @Test func roomsFarApartDoNotExhaustMemory() throws {
        let site = SiteModel(
            rooms: [.init(name: "near", polygon: [[0, 0], [4, 0], [4, 4], [0, 4]]),
                    .init(name: "far", polygon: [[90_000, 90_000], [90_004, 90_000], [90_004, 90_004], [90_000, 90_004]])],
            nodes: [.init(name: "n1", room: "near", position: [2, 2, 2.2]),
                    .init(name: "f1", room: "far", position: [90_002, 90_002, 2.2])])
        var engine = FusionEngine(site: site, settings: FusionSettings())
        var synth = Synthetic()
        var t = 0.0
        while t < 30 {
            engine.ingest(synth.reading("n1", rssi: -60, at: t), now: t)
            _ = engine.tick(now: t)
            t += 0.5
        }
        #expect(engine.decision(for: Synthetic.tag)?.room == "near")
    }

    /// A garden coarsens the grid to about 1.27 m (a grid of at most 6,000 cells), and a hall
    /// 0.8 m wide between the kitchen and the garden's far edge holds no lattice centre. With no
    /// cell it could never be shown: a tag beside the hall's node was shown in the kitchen. It
    /// has one cell, inside it.
    @Test func aRoomNarrowerThanTheGridsStepCanBeShown() throws {
        let site = SiteModel(
            rooms: [.init(name: "garden", polygon: [[0, 0], [120, 0], [120, 80], [0, 80]]),
                    .init(name: "kitchen", polygon: [[120, 0], [126.2, 0], [126.2, 5], [120, 5]]),
                    .init(name: "hall", polygon: [[126.2, 0], [127, 0], [127, 5], [126.2, 5]])],
            nodes: [.init(name: "garden-pi", room: "garden", position: [60, 40, 2]),
                    .init(name: "kitchen-pi", room: "kitchen", position: [123, 2.5, 2]),
                    .init(name: "hall-pi", room: "hall", position: [126.6, 2.5, 2])])
        var engine = FusionEngine(site: site, settings: FusionSettings())
        #expect(engine.usesGeometry)
        var synth = Synthetic()
        var t = 0.0
        while t < 30 {
            engine.ingest(synth.reading("hall-pi", rssi: -52, at: t), now: t)
            engine.ingest(synth.reading("kitchen-pi", rssi: -74, at: t), now: t)
            _ = engine.tick(now: t)
            t += 0.5
        }
        #expect(engine.decision(for: Synthetic.tag)?.room == "hall")
    }

    @Test func geometryBeatsNearestNodeNearASharedWall() throws {
        // In the left room, 0.7 m from the wall: r1 (other side, 1.6 m) is the
        // strongest node even through the wall; l1 and l2 are 3.6 m away.
        let beacon = [4.3, 2, 1.0]
        #expect(Self.rssi(from: [5.4, 2, 2.2], to: beacon) > Self.rssi(from: [1, 1, 2.2], to: beacon))

        var engine = FusionEngine(site: Self.wallSite, settings: FusionSettings())
        #expect(engine.usesGeometry)
        var rng = SeededRandom(seed: 11), synth = Synthetic()
        Self.replay(&engine, site: Self.wallSite, at: beacon, from: 0, seconds: 60, sigma: 2, rng: &rng, synth: &synth)
        let d = try #require(engine.decision(for: Synthetic.tag))
        #expect(d.room == "left")
        #expect(d.runnerUp == "right")
        #expect(d.node == "l1" || d.node == "l2")
        let p = try #require(d.position)
        #expect(p[0] > 3 && p[0] < 5, "estimated x \(p[0])")

        var nearestSettings = FusionSettings()
        nearestSettings.useGeometry = false
        var nearest = FusionEngine(site: Self.wallSite, settings: nearestSettings)
        rng = SeededRandom(seed: 11); synth = Synthetic()
        Self.replay(&nearest, site: Self.wallSite, at: beacon, from: 0, seconds: 60, sigma: 2, rng: &rng, synth: &synth)
        #expect(nearest.decision(for: Synthetic.tag)?.room == "right")
    }

    @Test func geometryFollowsAMoveThroughTheWall() throws {
        var engine = FusionEngine(site: Self.wallSite, settings: FusionSettings())
        var rng = SeededRandom(seed: 12), synth = Synthetic()
        Self.replay(&engine, site: Self.wallSite, at: [2, 2, 1], from: 0, seconds: 30, sigma: 4, rng: &rng, synth: &synth)
        #expect(engine.decision(for: Synthetic.tag)?.room == "left")
        Self.replay(&engine, site: Self.wallSite, at: [7.5, 2, 1], from: 30, seconds: 4, sigma: 4, rng: &rng, synth: &synth)
        let d = try #require(engine.decision(for: Synthetic.tag))
        #expect(d.room == "right")
        #expect(d.reason == "moved_geometry")
        #expect(d.since > 30 && d.since < 34)
    }

    /// A still beacon in the left room, 0.1 m from the wall; from t = 30 s the right room's near node
    /// reads `excursion` dB high for 15 s (slow shadowing on one link: someone
    /// standing between, a door), then back. Returns the rooms decided after 30 s.
    static func roomsThroughOneLinkExcursion(_ settings: FusionSettings, excursion: Double) -> Set<String?> {
        var engine = FusionEngine(site: wallSite, settings: settings)
        var rng = SeededRandom(seed: 21), synth = Synthetic()
        let beacon = [4.9, 2, 1.0]
        replay(&engine, site: wallSite, at: beacon, from: 0, seconds: 30, sigma: 2, rng: &rng, synth: &synth)
        var rooms: Set<String?> = [engine.decision(for: Synthetic.tag)?.room]
        var t = 30.0
        while t < 60 {
            for node in wallSite.nodes {
                var mean = rssi(from: node.position!, to: beacon)
                if node.name == "r1" && t < 45 { mean += excursion }
                engine.ingest(synth.reading(node.name, rssi: mean + rng.gaussian(sigma: 2), at: t), now: t)
            }
            for d in engine.tick(now: t) { rooms.insert(d.room) }
            t += 0.2
        }
        return rooms
    }

    @Test func aStillBeaconHoldsItsRoomThroughOneLinksShadowing() {
        // A change on one link alone, for 45 s, is shadowing: the room holds.
        withKnownIssue("still beacons under drifting shadowing: the shadow moves the spot's mean itself (docs/fusion.md, Known limits)") {
            #expect(Self.roomsThroughOneLinkExcursion(FusionSettings(), excursion: 14) == ["left"])
        }
    }

    /// A still beacon still follows a real move through the wall within 4 s.
    @Test func aStillBeaconFollowsAMoveThroughTheWall() throws {
        let settings = FusionSettings()
        var engine = FusionEngine(site: Self.wallSite, settings: settings)
        var rng = SeededRandom(seed: 12), synth = Synthetic()
        Self.replay(&engine, site: Self.wallSite, at: [2, 2, 1], from: 0, seconds: 60, sigma: 4, rng: &rng, synth: &synth)
        #expect(engine.decision(for: Synthetic.tag)?.room == "left")
        Self.replay(&engine, site: Self.wallSite, at: [7.5, 2, 1], from: 60, seconds: 6, sigma: 4, rng: &rng, synth: &synth)
        let d = try #require(engine.decision(for: Synthetic.tag))
        #expect(d.room == "right")
        #expect(d.since > 60 && d.since < 64, "switched at \(d.since)")
        let p = try #require(d.position)
        #expect(p[0] > 5.5 && p[0] < 9.5, "estimated x \(p[0])")
    }

    /// A beacon creeping from x = 2 to x = 8 at 0.1 m/s (a robot vacuum): too slow to part
    /// the links' averages much, yet the switch comes soon after it crosses the wall at x = 5.
    @Test func slowMoverIsFollowed() throws {
        var engine = FusionEngine(site: Self.wallSite, settings: FusionSettings())
        var rng = SeededRandom(seed: 31), synth = Synthetic()
        Self.replay(&engine, site: Self.wallSite, at: [2, 2, 1], from: 0, seconds: 30, sigma: 3, rng: &rng, synth: &synth)
        var t = 30.0
        while t < 100 {
            let x = min(8, 2 + 0.1 * (t - 30))
            for node in Self.wallSite.nodes {
                let mean = Self.rssi(from: node.position!, to: [x, 2, 1])
                engine.ingest(synth.reading(node.name, rssi: mean + rng.gaussian(sigma: 3), at: t), now: t)
            }
            _ = engine.tick(now: t)
            t += 0.2
        }
        let d = try #require(engine.decision(for: Synthetic.tag))
        #expect(d.room == "right")
        // Crossing at t = 60 s.
        #expect(d.since > 58 && d.since < 75, "switched at \(d.since)")
    }

    @Test func decisionsAreDeterministic() {
        func run() -> [PresenceDecision] {
            var engine = FusionEngine(site: Self.wallSite, settings: FusionSettings())
            var rng = SeededRandom(seed: 5), synth = Synthetic()
            var out: [PresenceDecision] = []
            var t = 0.0
            while t < 40 {
                let x = t < 20 ? 3.0 : 7.0
                for node in Self.wallSite.nodes {
                    let mean = Self.rssi(from: node.position!, to: [x, 2, 1])
                    engine.ingest(synth.reading(node.name, rssi: mean + rng.gaussian(sigma: 4), at: t), now: t)
                }
                out += engine.tick(now: t)
                t += 0.5
            }
            return out + engine.allDecisions()
        }
        let a = run(), b = run()
        #expect(a.count >= 3)
        #expect(a == b)
    }

    @Test func geometryNeedsPolygonsForEveryNodeRoom() {
        var site = Self.wallSite
        site.rooms[1].polygon = nil
        let engine = FusionEngine(site: site, settings: FusionSettings())
        #expect(!engine.usesGeometry)
        #expect(engine.modeSummary.contains("node membership (room 'right' has a node but no polygon)"), "\(engine.modeSummary)")
    }

    @Test func floorsSeparateStackedRooms() throws {
        let site = SiteModel(
            rooms: [.init(name: "living", floor: 0, polygon: [[0, 0], [6, 0], [6, 6], [0, 6]]),
                    .init(name: "bedroom", floor: 1, polygon: [[0, 0], [6, 0], [6, 6], [0, 6]])],
            nodes: [.init(name: "down", room: "living", position: [1, 1, 2.4]),
                    .init(name: "down2", room: "living", position: [5, 5, 2.4]),
                    .init(name: "up", room: "bedroom", position: [1, 5, 5.4]),
                    .init(name: "up2", room: "bedroom", position: [5, 1, 5.4])])
        var engine = FusionEngine(site: site, settings: FusionSettings())
        var synth = Synthetic()
        // Upstairs at (3, 3): the upstairs nodes read it clearly, downstairs through 15 dB of floor.
        for k in 0..<100 {
            let t = Double(k) * 0.2
            for (node, rssi) in [("up", -69.0), ("up2", -69.0), ("down", -86.0), ("down2", -86.0)] {
                engine.ingest(synth.reading(node, rssi: rssi, at: t), now: t)
            }
            _ = engine.tick(now: t)
        }
        let d = try #require(engine.decision(for: Synthetic.tag))
        #expect(d.room == "bedroom" && d.floor == 1)
        #expect(try #require(d.position)[2] > 3)
    }

    /// Two rooms mirrored about the wall y = 5, heard alike by two nodes on the wall's ends, so
    /// that what they hear cannot tell the rooms apart, and a third node in the north room.
    static let mirroredSite = SiteModel(
        rooms: [.init(name: "south", polygon: [[0, 0], [10, 0], [10, 5], [0, 5]]),
                .init(name: "north", polygon: [[0, 5], [10, 5], [10, 10], [0, 10]])],
        nodes: [.init(name: "w", room: "south", position: [0.5, 4.9, 2.2]),
                .init(name: "e", room: "north", position: [9.5, 5.1, 2.2]),
                .init(name: "n", room: "north", position: [5, 9, 2.2])])

    /// The decision for the tag at (5, 2) in the south room after a minute, heard by `w` and `e`
    /// only, while `n` hears another beacon at −60…−78 dBm five times a second, or nothing.
    static func shownWhile(nHearsAnotherBeacon: Bool) throws -> PresenceDecision {
        var engine = FusionEngine(site: mirroredSite, settings: FusionSettings())
        var synth = Synthetic()
        let tag = [5.0, 2, 1]
        for k in 0..<300 {
            let t = Double(k) * 0.2
            for node in ["w", "e"] {
                let position = try #require(mirroredSite.nodes.first { $0.name == node }?.position)
                engine.ingest(synth.reading(node, rssi: rssi(from: position, to: tag), at: t), now: t)
            }
            if nHearsAnotherBeacon {
                engine.ingest(synth.reading("n", rssi: -60 - Double(k % 19), at: t, id: Synthetic.other), now: t)
            }
            _ = engine.tick(now: t)
        }
        return try #require(engine.decision(for: Synthetic.tag))
    }

    @Test func aNodeThatHearsNothingOfTheBeaconRulesOutTheCellsNearIt() throws {
        // At the mirror spot (5, 8) `n` would hear the tag at about −65 dBm, far above the
        // weakest level it hears (about −78): the north room is ruled out, as far as a still
        // beacon's spot can rule out anything (its seconds together are worth a few).
        let shown = try Self.shownWhile(nHearsAnotherBeacon: true)
        #expect(shown.room == "south")
        #expect(shown.confidence > 0.8, "confidence \(shown.confidence)")
        // With `n` deaf, only the nodes that hear the tag count, and the fit takes the mirror
        // spot in the north room.
        #expect(try Self.shownWhile(nHearsAnotherBeacon: false).room == "north")
    }

    @Test func aNodeThatHearsNothingAtAllSaysNothing() throws {
        // `n` deaf to everything (its radio stalled while it stays online): no floor speaks.
        var engine = FusionEngine(site: Self.mirroredSite, settings: FusionSettings())
        var synth = Synthetic()
        let tag = [5.0, 8, 1]
        for k in 0..<600 {
            let t = Double(k) * 0.2
            // For a minute n hears another beacon (its floor is learned); then it falls
            // silent altogether, and only then does the tag arrive, heard by w and e.
            if t < 60 {
                engine.ingest(synth.reading("n", rssi: -60 - Double(k % 19), at: t, id: Synthetic.other), now: t)
            } else {
                for node in ["w", "e"] {
                    let position = try #require(Self.mirroredSite.nodes.first { $0.name == node }?.position)
                    engine.ingest(synth.reading(node, rssi: Self.rssi(from: position, to: tag), at: t), now: t)
                }
            }
            _ = engine.tick(now: t)
        }
        // The tag at (5, 8), beside n. To w and e it is the mirror image of (5, 2) in the
        // south room, so without n either room fits: a deaf n must not rule out the north
        // room, as a listening n rules out the south one (aNodeThatHearsNothingOfTheBeacon…).
        let shown = try #require(engine.decision(for: Synthetic.tag))
        #expect(shown.room == "north" || shown.confidence < 0.7, "\(shown.room ?? "away") at \(shown.confidence)")
    }
}
