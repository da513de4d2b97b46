import Foundation
import Testing
@testable import RoomcastFusion
import RoomcastSimulation
import Shared
import TestSupport

@Suite("Calibration from the nodes' own beacons")
struct NodeCalibrationTests {
    /// Two rooms of a flat (wall at x = 5), five nodes; every node advertises its own iBeacon.
    static let site = SiteModel(
        rooms: [.init(name: "left", polygon: [[0, 0], [5, 0], [5, 6], [0, 6]]),
                .init(name: "right", polygon: [[5, 0], [10, 0], [10, 6], [5, 6]])],
        nodes: [.init(name: "a", room: "left", position: [0.5, 0.5, 1.5], beacon: beacon(1)),
                .init(name: "b", room: "left", position: [4.6, 5.0, 1.0], beacon: beacon(2)),
                .init(name: "c", room: "right", position: [5.5, 1.0, 2.0], beacon: beacon(3)),
                .init(name: "d", room: "right", position: [9.5, 5.5, 0.8], beacon: beacon(4)),
                .init(name: "e", room: "right", position: [8.0, 0.5, 1.2], beacon: beacon(5))])
    /// What each receiver reads above the truth, and each node's real 1 m power.
    static let offsets = ["a": 5.0, "b": -3.0, "c": 0.0, "d": 2.0, "e": -4.0]
    static let powers = ["a": -57.0, "b": -61.0, "c": -59.0, "d": -63.0, "e": -55.0]

    static func beacon(_ minor: UInt16) -> BeaconID {
        BeaconID("ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e-900-\(minor)")!
    }

    /// The engine's own model (exponent 2, 4 dB per wall), so only the offsets are unknown.
    static func link(_ tx: SiteModel.Node, _ rx: SiteModel.Node) -> Double {
        let p = tx.position!, q = rx.position!
        let d = max(((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2])).squareRoot(), 0.3)
        let walls = (p[0] < 5) != (q[0] < 5) ? 1.0 : 0.0
        return powers[tx.name]! - 20 * log10(d) - 4 * walls + offsets[rx.name]!
    }

    /// Every node hears every other node's beacon once a second, with `sigma` dB of noise.
    static func feed(_ engine: inout FusionEngine, seconds: Int, sigma: Double, seed: UInt64 = 5) {
        var rng = SeededRandom(seed: seed), synth = Synthetic()
        for s in 0..<seconds {
            let t = Double(s)
            for tx in site.nodes {
                for rx in site.nodes where rx.name != tx.name {
                    let r = synth.reading(rx.name, rssi: link(tx, rx) + rng.gaussian(sigma: sigma), at: t,
                                          id: tx.beacon!, interval: 1)
                    engine.ingest(r, now: t)
                }
            }
            _ = engine.tick(now: t)
        }
    }

    /// Offsets only matter relative to each other (a common one is the beacons' power).
    static func relative(_ values: [String: Double]) -> [String: Double] {
        let mean = values.values.reduce(0, +) / Double(values.count)
        return values.mapValues { $0 - mean }
    }

    @Test("links between nodes at known positions give every receiver's offset")
    func learnsOffsets() throws {
        var engine = FusionEngine(site: Self.site)
        Self.feed(&engine, seconds: 120, sigma: 3)
        var learned: [String: Double] = [:]
        for node in Self.site.nodes {
            learned[node.name] = try #require(engine.learnedOffset(of: node.name))
            #expect(engine.isCalibratedByLinks(node.name))
        }
        let want = Self.relative(Self.offsets), got = Self.relative(learned)
        for (name, value) in want {
            // The prior pulls a little towards 0; the links carry almost all of it.
            #expect(abs(got[name]! - value) < 1.0, "\(name): learned \(got[name]!) for \(value)")
        }
        // The nodes' beacons are never tracked, however often they are heard.
        #expect(engine.trackedBeacons == 0)
        #expect(engine.allDecisions().isEmpty)
        #expect(engine.counters.calibrationReadings == 120 * 20)
        #expect(engine.counters.accepted == 0)
    }

    @Test("a calibrated site places a beacon right where a hot receiver would pull it away")
    func calibrationFixesTheRoom() throws {
        // 0.3 m left of the wall, 1.3 m from 'c' across it: with 'c' reading 8 dB hot and
        // the left room's receivers cold, uncalibrated the beacon is dragged right.
        var site = Self.site
        site.beacons = [.init(id: Synthetic.tag, name: "tag")]
        let hot = ["a": -2.0, "b": -4.0, "c": 8.0, "d": 0.0, "e": 0.0]
        func run(calibrate: Bool) -> String? {
            let p = [4.7, 1.0, 1.0]
            var settings = FusionSettings()
            settings.learnCalibration = calibrate
            var engine = FusionEngine(site: site, settings: settings)
            var rng = SeededRandom(seed: 9), synth = Synthetic()
            for s in 0..<180 {
                let t = Double(s)
                for tx in site.nodes {
                    for rx in site.nodes where rx.name != tx.name {
                        let mean = Self.link(tx, rx) - Self.offsets[rx.name]! + hot[rx.name]!
                        engine.ingest(synth.reading(rx.name, rssi: mean + rng.gaussian(sigma: 2), at: t, id: tx.beacon!, interval: 1), now: t)
                    }
                }
                if s >= 120 {
                    for rx in site.nodes {
                        let q = rx.position!
                        let d = max(((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2])).squareRoot(), 0.3)
                        let walls = (p[0] < 5) != (q[0] < 5) ? 1.0 : 0.0
                        let mean = -59 - 20 * log10(d) - 4 * walls + hot[rx.name]!
                        engine.ingest(synth.reading(rx.name, rssi: mean + rng.gaussian(sigma: 2), at: t), now: t)
                    }
                }
                _ = engine.tick(now: t)
            }
            return engine.decision(for: Synthetic.tag)?.room
        }
        #expect(run(calibrate: false) == "right")
        #expect(run(calibrate: true) == "left")
    }

    @Test("learn_calibration off: node beacons are still kept out of tracking, offsets stay 0")
    func off() {
        var settings = FusionSettings()
        settings.learnCalibration = false
        var engine = FusionEngine(site: Self.site, settings: settings)
        Self.feed(&engine, seconds: 30, sigma: 3)
        for node in Self.site.nodes {
            #expect(engine.learnedOffset(of: node.name) == 0)
            #expect(!engine.isCalibratedByLinks(node.name))
        }
        #expect(engine.trackedBeacons == 0)
    }

    @Test("the solver separates receivers from transmitters, and says nothing without enough links")
    func solver() {
        var calibration = NodeCalibration()
        // Three nodes on a line 4 m apart, no walls; R = [+3, 0, −3], T = [−50, −60, −55].
        let r = [3.0, 0.0, -3.0], tx = [-50.0, -60.0, -55.0]
        let x = [0.0, 4.0, 8.0]
        func loss(_ a: Int, _ b: Int) -> Double { 20 * log10(abs(x[a] - x[b])) }
        for _ in 0..<10 {
            for a in 0..<3 { for b in 0..<3 where a != b { calibration.observe(tx: a, rx: b, rssi: tx[a] + r[b] - loss(a, b)) } }
        }
        let solved = calibration.solve(nodeCount: 4, priorSigma: 100) { a, b in (loss(a, b), 5) }
        #expect(solved[3] == nil)
        let values = solved.prefix(3).compactMap { $0 }
        #expect(values.count == 3)
        let mean = values.reduce(0, +) / 3
        for i in 0..<3 { #expect(abs(values[i] - mean - r[i]) < 0.05, "node \(i): \(values[i] - mean)") }

        // One link only: its transmitter's power explains it, nothing is learned.
        var lone = NodeCalibration()
        for _ in 0..<10 { lone.observe(tx: 0, rx: 1, rssi: -70) }
        #expect(lone.solve(nodeCount: 2, priorSigma: 6) { _, _ in (10, 5) }.allSatisfy { $0 == nil })
        // Too few readings yet, and a node never hears itself.
        var young = NodeCalibration()
        young.observe(tx: 0, rx: 0, rssi: -40)
        for a in 0..<3 { for b in 0..<3 where a != b { young.observe(tx: a, rx: b, rssi: -70) } }
        #expect(young.links.count == 6)
        #expect(young.solve(nodeCount: 3, priorSigma: 6) { _, _ in (10, 5) }.allSatisfy { $0 == nil })
    }
}
