import Foundation
import Testing
@testable import RoomcastFusion

/// `SpotCalibration` on its own: which spells become spots, how many are kept, and the
/// joint solve on exact data along a line of cells.
@Suite("Offsets from the spots where tracked beacons held still")
struct SpotCalibrationTests {
    /// A spell of `seconds` one-second steps in which each of `levels` is heard.
    static func spell(_ calibration: inout SpotCalibration, beacon: Int, levels: [Int: Double], seconds: Int) {
        for _ in 0..<seconds {
            for (node, rssi) in levels.sorted(by: { $0.key < $1.key }) {
                calibration.accumulate(beacon: beacon, node: node, rssi: rssi, seconds: 1, power: -59)
            }
            calibration.advance(beacon: beacon, seconds: 1)
        }
    }

    @Test func aSpellCountsWhenLongAndWideEnough() {
        var calibration = SpotCalibration(minimumSeconds: 20)
        Self.spell(&calibration, beacon: 0, levels: [0: -60, 1: -70, 2: -75], seconds: 19)
        calibration.close(beacon: 0)
        #expect(calibration.count == 0, "19 s is too short")
        Self.spell(&calibration, beacon: 0, levels: [0: -60, 1: -70], seconds: 60)
        calibration.close(beacon: 0)
        #expect(calibration.count == 0, "two nodes cannot say anything about a receiver")
        Self.spell(&calibration, beacon: 0, levels: [0: -60, 1: -70, 2: -75], seconds: 20)
        #expect(calibration.count == 0 && calibration.usable().count == 1, "an open spell is used, not kept")
        calibration.close(beacon: 0)
        #expect(calibration.count == 1)
        let links = calibration.spots[0].links()
        #expect(links.map(\.node) == [0, 1, 2] && links.map(\.mean) == [-60, -70, -75])
    }

    @Test func aNodeHeardForLessThanHalfTheSpellIsLeftOut() {
        var calibration = SpotCalibration(minimumSeconds: 20)
        Self.spell(&calibration, beacon: 3, levels: [0: -60, 1: -70, 2: -75, 4: -80], seconds: 10)
        Self.spell(&calibration, beacon: 3, levels: [0: -62, 1: -70, 2: -75], seconds: 30)
        calibration.close(beacon: 3)
        let links = calibration.spots[0].links()
        #expect(links.map(\.node) == [0, 1, 2])
        #expect(abs(links[0].mean - -61.5) < 1e-9, "the time-weighted mean of the spell")
    }

    @Test func theOldestSpotGivesWayAtCapacity() {
        var calibration = SpotCalibration(minimumSeconds: 1)
        for k in 0..<(SpotCalibration.capacity + 5) {
            Self.spell(&calibration, beacon: 0, levels: [0: -Double(k), 1: -70, 2: -75], seconds: 1)
            calibration.close(beacon: 0)
        }
        #expect(calibration.count == SpotCalibration.capacity)
        let first = calibration.spots.map { $0.links()[0].mean }
        #expect(!first.contains(0) && !first.contains(-4) && first.contains(-5) && first.contains(-260))
    }

    /// Nodes on a line at x = 0, 4, 8, 12; cells every 0.5 m; free-space loss from 1 m.
    static let nodeX = [0.0, 4, 8, 12]
    static let cells = stride(from: 0.0, through: 12, by: 0.5).map { $0 }
    static func loss(_ node: Int, _ cell: Int) -> Double {
        -20 * log10(max(abs(nodeX[node] - cells[cell]), 1))
    }
    /// The best cell by least squares with the power profiled out, as the engine's grid does.
    static func place(_ nodes: [Int], _ m: [Double]) -> [(expected: Double, weight: Double)]? {
        var best = -1, bestCost = Double.infinity
        for c in cells.indices {
            let r = nodes.indices.map { m[$0] - loss(nodes[$0], c) }
            let mean = r.reduce(0, +) / Double(r.count)
            let cost = r.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
            if cost < bestCost { bestCost = cost; best = c }
        }
        return nodes.map { (loss($0, best), 1.0 / 25) }
    }

    @Test func theSolveRecoversOffsetsFromExactSpots() {
        let offsets = [0.0, 5, 0, -3]
        var calibration = SpotCalibration(minimumSeconds: 20)
        for (b, x) in [1.0, 2.5, 3.5, 5.5, 6.5, 9.5, 10.5, 11].enumerated() {
            let cell = Self.cells.firstIndex(of: x)!
            var levels: [Int: Double] = [:]
            for n in Self.nodeX.indices { levels[n] = -59 + Self.loss(n, cell) + offsets[n] }
            Self.spell(&calibration, beacon: b, levels: levels, seconds: 30)
            calibration.close(beacon: b)
        }
        let solved = calibration.solve(nodeCount: 4, start: [0, 0, 0, 0], fixed: [nil, nil, nil, nil],
                                       priorSigma: 100, place: Self.place)
        let learned = solved.map { $0 ?? .nan }
        // Relative to node 0: a common offset is the beacons' power.
        for n in 1..<4 {
            #expect(abs((learned[n] - learned[0]) - offsets[n]) < 0.3, "node \(n): \(learned[n] - learned[0])")
        }

        // An offset known from node beacons is held; the others are fitted around it.
        let held = calibration.solve(nodeCount: 4, start: [0, 0, 0, 0], fixed: [nil, 5, nil, nil],
                                     priorSigma: 100, place: Self.place)
        #expect(held[1] == nil, "a fixed node is not reported as learned")
        #expect(abs((held[3]! - held[0]!) - -3) < 0.3 && abs(held[0]!) < 0.3)

        // The prior is centred where an earlier run left off (`FusionEngine.resume`): held
        // tightly, the offsets stay there.
        let centred = calibration.solve(nodeCount: 4, start: [0, 0, 0, 0], fixed: [nil, nil, nil, nil],
                                        priorSigma: 0.01, priorMean: [2, 2, 2, 2], place: Self.place)
        #expect(centred.allSatisfy { abs($0! - 2) < 0.05 }, "\(centred)")

        // Fewer than three spots placing a node: nothing learned.
        var few = SpotCalibration(minimumSeconds: 20)
        Self.spell(&few, beacon: 0, levels: [0: -60, 1: -66, 2: -75, 3: -80], seconds: 30)
        few.close(beacon: 0)
        #expect(few.solve(nodeCount: 4, start: [0, 0, 0, 0], fixed: [nil, nil, nil, nil], priorSigma: 6,
                          place: Self.place).allSatisfy { $0 == nil })
    }
}
