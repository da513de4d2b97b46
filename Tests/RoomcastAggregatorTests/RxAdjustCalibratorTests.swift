import Foundation
import Shared
import Testing
@testable import RoomcastAggregator

/// `aggregator calibrate`'s arithmetic: which beacon is judged, the median against the
/// beacon's 1 m power, and every reason there is no suggestion.
@Suite struct RxAdjustCalibratorTests {
    static let keys = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1")!
    static let tag = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")!
    static let site = SiteModel(rooms: [.init(name: "kitchen"), .init(name: "office")],
                                nodes: [.init(name: "kitchen-pi", room: "kitchen", rxAdjust: 1.5),
                                        .init(name: "office-pi", room: "office")],
                                beacons: [.init(id: keys, name: "Keys")])

    static func reading(_ id: BeaconID, node: String = "kitchen-pi", rssi: Double, power: Int = -59) -> BeaconReading {
        BeaconReading(id: id, node: node, ts: 1_767_225_600, seq: 1, rssi: Int(rssi.rounded()), rssiFiltered: rssi,
                      power: power, distance: 1, proximity: .near, kind: .iBeacon, mac: "c0:01:02:03:04:05")
    }

    @Test func aNodeReadingLowGetsTheDifferenceAsItsAdjustment() throws {
        var c = RxAdjustCalibrator(node: "kitchen-pi", beacon: nil, site: Self.site)
        // 20 readings around −64 (the beacon says −59 at 1 m), and two wild ones the median ignores.
        for k in 0..<20 { c.add(Self.reading(Self.keys, rssi: -64 + Double(k % 5 - 2))) }
        c.add(Self.reading(Self.keys, rssi: -95))
        c.add(Self.reading(Self.keys, rssi: -40))
        // Other nodes' readings of it, however loud, are not this node's.
        for _ in 0..<20 { c.add(Self.reading(Self.keys, node: "office-pi", rssi: -50)) }
        let s = try c.suggestion().get()
        #expect(s.beacon == Self.keys && s.name == "Keys" && s.readings == 22)
        #expect(s.median == -64 && s.expected == -59 && s.rxAdjust == 5 && s.currentRxAdjust == 1.5)
        #expect(s.spread == 2)
        #expect(!s.powerFromConfig)
        #expect(s.report.contains("kitchen-pi reads 5.0 dB low"), "\(s.report)")
        #expect(s.report.hasSuffix("nodes:\n  - name: kitchen-pi\n    rx_adjust: 5"), "\(s.report)")
        #expect(s.report.contains("(now 1.5)"), "\(s.report)")
        // Whether to set it at all: the hand calibration pays for a receiver of another kind.
        #expect(s.report.contains("Worth setting for a receiver of another kind"), "\(s.report)")
        #expect(s.report.contains("teaching the rooms (aggregator learn) gains more"), "\(s.report)")
    }

    @Test func theConfiguredPowerAndTheDistanceSetWhatItShouldRead() throws {
        var site = Self.site
        site.beacons[0].power = -62
        var c = RxAdjustCalibrator(node: "office-pi", beacon: Self.keys, distance: 2, pathLossExponent: 2, site: site)
        for _ in 0..<12 { c.add(Self.reading(Self.keys, node: "office-pi", rssi: -61)) }
        let s = try c.suggestion().get()
        // −62 dBm at 1 m is −68.0 at 2 m: the node reads 7 dB high.
        #expect(s.powerFromConfig && s.power == -62)
        #expect(abs(s.expected - (-62 - 20 * log10(2))) < 1e-9)
        #expect(s.rxAdjust == -7)
        #expect(s.report.contains("reads 7.0 dB high"), "\(s.report)")
    }

    @Test func withoutABeaconNamedTheLoudestMustStandOut() throws {
        var c = RxAdjustCalibrator(node: "kitchen-pi", beacon: nil, site: Self.site)
        for _ in 0..<15 { c.add(Self.reading(Self.keys, rssi: -60)); c.add(Self.reading(Self.tag, rssi: -80)) }
        // A beacon heard too rarely to judge does not compete.
        for _ in 0..<3 { c.add(Self.reading(BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-3")!, rssi: -45)) }
        #expect(try c.suggestion().get().beacon == Self.keys)

        var close = RxAdjustCalibrator(node: "kitchen-pi", beacon: nil, site: Self.site)
        for _ in 0..<15 { close.add(Self.reading(Self.keys, rssi: -60)); close.add(Self.reading(Self.tag, rssi: -63)) }
        guard case .failure(.ambiguous(_, let loudest, _, let next, _)) = close.suggestion() else {
            Issue.record("expected ambiguous, got \(close.suggestion())"); return
        }
        #expect(loudest == Self.keys && next == Self.tag)
        #expect(close.suggestion().description.contains("--beacon"))

        // Naming the beacon settles it, and ignores the other.
        var named = RxAdjustCalibrator(node: "kitchen-pi", beacon: Self.tag, site: Self.site)
        for _ in 0..<15 { named.add(Self.reading(Self.keys, rssi: -60)); named.add(Self.reading(Self.tag, rssi: -63)) }
        let s = try named.suggestion().get()
        #expect(s.beacon == Self.tag && s.readings == 15 && s.rxAdjust == 4)
    }

    @Test func tooLittleToGoOnIsSaidSo() {
        let empty = RxAdjustCalibrator(node: "kitchen-pi", beacon: nil, site: Self.site)
        #expect(empty.suggestion() == .failure(.nothingHeard(node: "kitchen-pi", beacon: nil)))
        #expect(empty.suggestion().description.contains("no beacon"))

        var named = RxAdjustCalibrator(node: "kitchen-pi", beacon: Self.tag, site: Self.site)
        named.add(Self.reading(Self.keys, rssi: -60))
        #expect(named.suggestion() == .failure(.nothingHeard(node: "kitchen-pi", beacon: Self.tag)))

        var few = RxAdjustCalibrator(node: "kitchen-pi", beacon: nil, site: Self.site)
        for _ in 0..<4 { few.add(Self.reading(Self.keys, rssi: -60)) }
        #expect(few.suggestion() == .failure(.tooFewReadings(node: "kitchen-pi", beacon: Self.keys, readings: 4, needed: 10)))
        #expect(few.suggestion().description.contains("--seconds"))
    }

    @Test func aFloodOfReadingsIsBounded() {
        var c = RxAdjustCalibrator(node: "kitchen-pi", beacon: Self.keys, site: Self.site)
        let extra = 500
        for _ in 0..<(RxAdjustCalibrator.maxReadingsPerBeacon + extra) { c.add(Self.reading(Self.keys, rssi: -60)) }
        #expect(c.count(of: Self.keys) == RxAdjustCalibrator.maxReadingsPerBeacon)
        #expect(c.dropped == extra)
    }
}

extension Result where Success == RxAdjustCalibrator.Suggestion, Failure == RxAdjustCalibrator.Problem {
    var description: String {
        switch self {
        case .success(let s): return s.report
        case .failure(let p): return p.description
        }
    }
}
