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

    @Test func motionGateHoldsAStillBeaconThroughOneLinksShadowing() {
        var gated = FusionSettings(), ungated = FusionSettings()
        gated.motionGate = true
        ungated.motionGate = false
        ungated.positionMargin = 0
        gated.positionMargin = 0
        #expect(FusionSettings().motionGate)
        // Without the gate one link's slow excursion is enough to move the beacon…
        #expect(Self.roomsThroughOneLinkExcursion(ungated, excursion: 14) == ["left", "right"])
        // …unless the position estimate must first be 0.6 m out of the room (the default),
        ungated.positionMargin = 0.6
        #expect(Self.roomsThroughOneLinkExcursion(ungated, excursion: 14) == ["left"])
        // …with it, a change on one link alone is shadowing, and the room holds.
        #expect(Self.roomsThroughOneLinkExcursion(gated, excursion: 14) == ["left"])
    }

    static var particles: FusionSettings {
        var s = FusionSettings()
        s.roomFilter = .particles
        return s
    }

    @Test func particleFilterHoldsAStillBeaconThroughOneLinksShadowing() {
        // The same excursion that moves the room-level filter is taken up by that
        // link's shadowing in the particle filter.
        #expect(Self.roomsThroughOneLinkExcursion(Self.particles, excursion: 14) == ["left"])
    }

    /// The sticky modes still follow a real move through the wall within 4 s.
    @Test(arguments: ["motion_gate", "particles"]) func stickyModesFollowAMoveThroughTheWall(mode: String) throws {
        var settings = Self.particles
        if mode == "motion_gate" { settings = FusionSettings(); settings.motionGate = true }
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

    /// A beacon creeping from x = 2 to x = 8 at 0.1 m/s (a robot vacuum): the particles
    /// drift with it, so the switch comes soon after it crosses the wall at x = 5.
    @Test(arguments: [false, true]) func slowMoverIsFollowed(particles: Bool) throws {
        var engine = FusionEngine(site: Self.wallSite, settings: particles ? Self.particles : FusionSettings())
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

    @Test func particleFilterIsDeterministic() {
        func run() -> [PresenceDecision] {
            var engine = FusionEngine(site: Self.wallSite, settings: Self.particles)
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
        #expect(engine.geometryNote?.contains("right") == true)
    }

    /// One open 10 × 10 m hall (no walls), a node in each corner and one in the middle.
    static let hall = SiteModel(
        rooms: [.init(name: "hall", polygon: [[0, 0], [10, 0], [10, 10], [0, 10]])],
        nodes: [.init(name: "a", room: "hall", position: [1, 1, 2.2]),
                .init(name: "b", room: "hall", position: [9, 1, 2.2]),
                .init(name: "c", room: "hall", position: [1, 9, 2.2]),
                .init(name: "d", room: "hall", position: [9, 9, 2.2]),
                .init(name: "e", room: "hall", position: [5, 5, 2.2])])

    /// Readings of a tag that walks (1 m/s) to each of `stops` in turn and stays `stay`
    /// seconds, in the hall: free-space path loss from -59 dBm at 1 m, `sigma` dB of noise
    /// per reading, node "c" reading `bias` dB high.
    static func tour(_ engine: inout FusionEngine, stops: [[Double]], stay: Double, bias: Double, from t0: Double = 0,
                     rng: inout SeededRandom, synth: inout Synthetic) -> Double {
        func hear(at p: [Double], _ t: Double) {
            for node in hall.nodes {
                let n = node.position!
                let d = max(((p[0] - n[0]) * (p[0] - n[0]) + (p[1] - n[1]) * (p[1] - n[1]) + (p[2] - n[2]) * (p[2] - n[2])).squareRoot(), 0.3)
                let mean = -59 - 20 * log10(d) + (node.name == "c" ? bias : 0)
                engine.ingest(synth.reading(node.name, rssi: mean + rng.gaussian(sigma: 3), at: t), now: t)
            }
            _ = engine.tick(now: t)
        }
        var t = t0
        var here = stops[0]
        for stop in stops {
            let length = hypot(stop[0] - here[0], stop[1] - here[1])
            var walked = 0.0
            while walked < length {
                let f = walked / length
                hear(at: [here[0] + f * (stop[0] - here[0]), here[1] + f * (stop[1] - here[1]), 1], t)
                walked += 0.2
                t += 0.2
            }
            here = stop
            let end = t + stay
            while t < end { hear(at: stop, t); t += 0.2 }
        }
        return t
    }

    @Test func offsetLearningConvergesOnABiasedReceiver() throws {
        var settings = FusionSettings()
        settings.gridResolution = 0.5
        var engine = FusionEngine(site: Self.hall, settings: settings)
        var rng = SeededRandom(seed: 13), synth = Synthetic()
        // A tag put down in 30 places for 40 s each: 30 spots in about 25 minutes.
        let stops = (0..<30).map { _ in [Double.random(in: 1...9, using: &rng), Double.random(in: 1...9, using: &rng), 1.0] }
        _ = Self.tour(&engine, stops: stops, stay: 40, bias: 6, rng: &rng, synth: &synth)
        // Offsets are relative (a bias common to every node is the tag's power): judged
        // against the median of the unbiased nodes.
        let others = try ["a", "b", "d", "e"].map { try #require(engine.learnedOffset(of: $0)) }.sorted()
        let reference = (others[1] + others[2]) / 2
        let c = try #require(engine.learnedOffset(of: "c")) - reference
        #expect(c > 4.5 && c < 7.5, "learned \(c) dB for a +6 dB receiver")
        for o in others { #expect(abs(o - reference) < 1.5, "learned \(o - reference) dB for an unbiased node") }

        settings.learnCalibration = false
        var fixed = FusionEngine(site: Self.hall, settings: settings)
        _ = Self.tour(&fixed, stops: Array(stops.prefix(5)), stay: 40, bias: 6, rng: &rng, synth: &synth)
        #expect(fixed.learnedOffset(of: "c") == 0)
    }

    @Test func aTagLyingStillTeachesNoOffsetOnItsOwn() throws {
        // One spot, however long a tag lies there, cannot tell a receiver's bias from the
        // spot's own shadowing: a node's offset moves only once three spots place it.
        var settings = FusionSettings()
        settings.gridResolution = 0.5
        var engine = FusionEngine(site: Self.hall, settings: settings)
        var rng = SeededRandom(seed: 3), synth = Synthetic()
        var t = Self.tour(&engine, stops: [[3, 4, 1]], stay: 600, bias: 6, rng: &rng, synth: &synth)
        for node in ["a", "b", "c", "d", "e"] { #expect(engine.learnedOffset(of: node) == 0) }
        t = Self.tour(&engine, stops: [[3, 4, 1], [7, 2, 1], [5, 8, 1], [2, 7, 1], [8, 7, 1]], stay: 60, bias: 6, from: t,
                      rng: &rng, synth: &synth)
        let c = try #require(engine.learnedOffset(of: "c")) - (try #require(engine.learnedOffset(of: "a")))
        #expect(c > 3, "learned \(c) dB for a +6 dB receiver from five spots")
    }

    @Test func offsetsResumedFromAnEarlierRunAreRefinedNotRelearned() throws {
        var settings = FusionSettings()
        settings.gridResolution = 0.5
        let report = ReceiverCalibrationReport(ts: 0, nodes: [.init(node: "c", offsetDb: 6, source: .beacons),
                                                              .init(node: "nowhere", offsetDb: 9, source: .beacons)])
        var resumed = FusionEngine(site: Self.hall, settings: settings)
        resumed.resume(report)
        #expect(resumed.learnedOffset(of: "c") == 6 && resumed.learnedOffset(of: "a") == 0)
        var fresh = FusionEngine(site: Self.hall, settings: settings)
        // Three spots: enough to learn from, too few to learn all of a +6 dB receiver.
        let stops: [[Double]] = [[3, 4, 1], [7, 2, 1], [5, 8, 1]]
        var rng = SeededRandom(seed: 21), synth = Synthetic()
        _ = Self.tour(&resumed, stops: stops, stay: 60, bias: 6, rng: &rng, synth: &synth)
        rng = SeededRandom(seed: 21); synth = Synthetic()
        _ = Self.tour(&fresh, stops: stops, stay: 60, bias: 6, rng: &rng, synth: &synth)
        let r = try #require(resumed.learnedOffset(of: "c")) - (try #require(resumed.learnedOffset(of: "a")))
        let f = try #require(fresh.learnedOffset(of: "c")) - (try #require(fresh.learnedOffset(of: "a")))
        #expect(f != 0, "the fresh engine learned from the spots")
        #expect(r > f + 0.5 && r > 4.5, "resumed \(r) dB, fresh \(f) dB for a +6 dB receiver")
        // Once this run has learned, a report (its own, echoed back) no longer moves it.
        let learned = resumed.learnedOffset(of: "c")
        resumed.resume(ReceiverCalibrationReport(ts: 1, nodes: [.init(node: "c", offsetDb: -3, source: .beacons)]))
        #expect(resumed.learnedOffset(of: "c") == learned)
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
}
