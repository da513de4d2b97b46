import Foundation
import Testing
import TestSupport
@testable import Shared
@testable import RoomcastAgent
import RoomcastConfig

@Suite("Ranging")
struct RangingTests {
    static let id = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")!

    @Test("log-distance model: power at 1 m gives 1 m, each 10·n dB a decade")
    func logDistance() throws {
        let m = DistanceModel.logDistance(exponent: 2)
        #expect(try #require(m.distance(rssi: -59, power: -59)) == 1)
        #expect(abs(try #require(m.distance(rssi: -79, power: -59)) - 10) < 1e-9)
        #expect(abs(try #require(m.distance(rssi: -49, power: -59)) - 1 / 10.0.squareRoot()) < 1e-9)
        #expect(m.distance(rssi: -200, power: -59, maxDistance: 50) == 50)
        // 0 dBm is a level (the strongest a controller reports), not "not measured": it read as
        // nil, and the agent published the strongest signal as the farthest distance.
        #expect(abs(try #require(m.distance(rssi: 0, power: -59)) - pow(10, -59.0 / 20)) < 1e-9)
        #expect(m.distance(rssi: -60, power: 0) == nil, "a power of 0 is not measured")
    }

    @Test("ibeacon-ble distance vectors (curve-fit model)")
    func ibeaconBleVectors() throws {
        let vectors = try TestVectors.load("ibeacon_ble").filter { $0.json["kind"] as? String == "distance_model" }
        try #require(vectors.count >= 8)
        for v in vectors {
            let input = try #require(v.json["input"] as? [String: Any])
            let power = try #require(input["power"] as? Int)
            let rssi = try #require(input["rssi"] as? Int)
            let expected = (v.expect as? [String: Any])?["distance_m"] as? Double
            let got = DistanceModel.altBeaconCurve.distance(rssi: Double(rssi), power: Double(power), maxDistance: 400)
            if let expected {
                let d = try #require(got, "power \(power) rssi \(rssi)")
                #expect(abs(d - expected) < 1e-6 * max(1, expected), "power \(power) rssi \(rssi)")
            } else {
                #expect(got == nil)
            }
        }
    }

    @Test("proximity thresholds", arguments: [
        (0.2, Proximity.immediate), (0.49, .immediate), (0.5, .near), (2.99, .near), (3.0, .far), (40, .far),
    ])
    func proximity(distance: Double, expected: Proximity) {
        #expect(Proximity(distance: distance, config: RangingConfig()) == expected)
    }

    @Test("the median drops a single spike that a plain average would follow")
    func spikeRejected() {
        var f = RSSIFilter(config: RangingConfig())
        for i in 0..<20 { f.update(rssi: -60, at: Double(i) * 0.1) }
        f.update(rssi: -30, at: 2.0)
        #expect(abs(f.estimate! + 60) < 0.01)
        f.update(rssi: -95, at: 2.1)
        #expect(abs(f.estimate! + 60) < 0.01)
    }

    /// `ranging.filter.kind`: `none` publishes each sample's own RSSI, `median` the median of
    /// the window, whatever the samples' spacing (three channels of one advertising event
    /// arrive at one time stamp, where a Kalman stage would barely move).
    @Test("filter kinds none and median pass the samples or their median through", arguments: ["none", "median"])
    func unfilteredKinds(kind: String) throws {
        let config = try ConfigLoader.parse(AgentConfig.self, yaml: "node: hall\nranging:\n  filter: {kind: \(kind), window: 3}\n")
        var f = RSSIFilter(config: config.rangingConfig)
        let samples: [(t: Double, rssi: Double)] = [(0, -60), (0, -90), (0, -62), (1, -80), (1.001, -81), (2, -55)]
        var window: [Double] = []
        for s in samples {
            window = Array((window + [s.rssi]).suffix(3))
            let expected = kind == "none" ? s.rssi : RSSIFilter.median(window)
            #expect(f.update(rssi: s.rssi, at: s.t) == expected, "\(kind) at \(s)")
        }
    }

    /// The ranging a test or a tool gets by default is the one a user's agent runs with a config
    /// that leaves `ranging:` out: tests judged the filter and distance model at other values.
    @Test("the default ranging is the config's default")
    func defaultRangingIsTheConfigs() throws {
        let config = try ConfigLoader.parse(AgentConfig.self, yaml: "node: hall\n")
        #expect(config.rangingConfig == RangingConfig())
        #expect(AgentSettings(node: "hall").ranging == config.rangingConfig)
    }

    @Test("a real step is followed within seconds, at 10 Hz and at one sample per 10 s")
    func stepFollowed() {
        var fast = RSSIFilter(config: RangingConfig())
        for i in 0..<50 { fast.update(rssi: -60, at: Double(i) * 0.1) }
        for i in 50..<80 { fast.update(rssi: -75, at: Double(i) * 0.1) }  // 3 s after the step
        #expect(abs(fast.estimate! + 75) < 3)

        var slow = RSSIFilter(config: RangingConfig())
        for i in 0..<5 { slow.update(rssi: -60, at: Double(i) * 10) }
        for i in 5..<8 { slow.update(rssi: -75, at: Double(i) * 10) }
        #expect(abs(slow.estimate! + 75) < 3)
    }

    /// The filtered level is what the aggregator decides rooms from: its lag is part of every
    /// room switch (docs/ranging.md, "Why these defaults"). A 1 Hz beacon carried into the next
    /// room is followed within 3 dB four seconds after its level steps.
    @Test("a 1 Hz beacon's step is followed within 3 dB in 4 s")
    func oneHertzStepFollowedQuickly() {
        var f = RSSIFilter(config: RangingConfig())
        for i in 0..<30 { f.update(rssi: -60, at: Double(i)) }
        for i in 30...33 { f.update(rssi: -75, at: Double(i)) }
        #expect(abs(f.estimate! + 75) < 3, "\(f.estimate!)")
    }

    /// The aggregator counts a level by how sure the filter is of it (`rssi_sd`, docs/fusion.md):
    /// a beacon heard once a second is known less well than one heard three times, and both
    /// settle where a Kalman filter of this process and measurement noise must.
    @Test("the filter's spread: a 1 Hz beacon is known less well than a 3 Hz one, as Kalman says")
    func spreadByRate() {
        let config = RangingConfig()
        func settled(every dt: Double) -> Double {
            var f = RSSIFilter(config: config)
            for i in 0..<200 { f.update(rssi: -70, at: Double(i) * dt) }
            return f.variance
        }
        // Steady state of a random walk sampled every dt: the prior P solves P² − qP − qR = 0.
        func kalman(every dt: Double) -> Double {
            let q = config.processNoise * dt, r = config.measurementNoise
            let prior = (q + (q * q + 4 * q * r).squareRoot()) / 2
            return prior * r / (prior + r)
        }
        for dt in [1.0, 1.0 / 3] { #expect(abs(settled(every: dt) - kalman(every: dt)) < 0.01, "every \(dt) s") }
        #expect(settled(every: 1).squareRoot() > 2.8 && settled(every: 1.0 / 3).squareRoot() < 2.35)

        // Without the Kalman stage: one sample's noise, or its median's.
        for (kind, ratio) in [("none", 1.0), ("median", Double.pi / 6)] {
            var config = config
            config.kalman = false
            if kind == "none" { config.medianWindow = 1 }
            var f = RSSIFilter(config: config)
            for i in 0..<10 { f.update(rssi: -70, at: Double(i)) }
            #expect(abs(f.variance - config.measurementNoise * ratio) < 1e-9, "\(kind)")
        }
    }

    @Test("filtered noise is much calmer than the raw samples")
    func noiseReduced() {
        var rng = SeededRandom(seed: 7)
        var f = RSSIFilter(config: RangingConfig())
        var rawDev = 0.0, filteredDev = 0.0
        for i in 0..<600 {
            let raw = -65 + rng.gaussian() * 5
            let est = f.update(rssi: raw, at: Double(i) * 0.1)
            if i >= 100 {
                rawDev += (raw + 65) * (raw + 65)
                filteredDev += (est + 65) * (est + 65)
            }
        }
        #expect(filteredDev < rawDev / 4)
    }

    @Test("observed interval is the median gap; duplicates and single losses ignored")
    func interval() throws {
        var e = IntervalEstimator()
        #expect(e.interval == nil)
        var t = 0.0
        for i in 0..<20 {
            e.record(at: t)
            e.record(at: t + 0.002)  // the same packet heard by a second radio
            t += i % 5 == 4 ? 2.0 : 1.0  // every fifth packet lost
        }
        #expect(abs(try #require(e.interval) - 1.0) < 0.01)
    }

    @Test("power: override, else advertised, else default")
    func power() {
        var config = RangingConfig()
        config.defaultPower = -62
        #expect(BeaconRanger.referencePower(id: Self.id, advertised: -55, config: config) == -55)
        #expect(BeaconRanger.referencePower(id: Self.id, advertised: nil, config: config) == -62)
        #expect(BeaconRanger.referencePower(id: Self.id, advertised: 0, config: config) == -62)
        config.powerOverrides[Self.id] = -70
        #expect(BeaconRanger.referencePower(id: Self.id, advertised: -55, config: config) == -70)
    }

    @Test("rx adjustment and exponent enter the distance")
    func rxAdjust() throws {
        var config = RangingConfig()
        config.rxAdjust = 6
        config.pathLossExponent = 3
        var ranger = BeaconRanger(id: Self.id, config: config)
        ranger.ingest(rssi: -95, advertised: -59, at: 0)
        let e = try #require(ranger.estimate(now: 0))
        #expect(e.rssiFiltered == -89)
        #expect(abs(e.distance - 10) < 1e-9)
        #expect(e.proximity == .far)
        #expect(e.rssi == -95)
    }

    @Test("an unusable RSSI (127 = not available) counts as heard but does not move the filter")
    func unusableRSSI() throws {
        var ranger = BeaconRanger(id: Self.id, config: RangingConfig())
        ranger.ingest(rssi: 127, advertised: -59, at: 0)
        #expect(ranger.estimate(now: 0) == nil)
        ranger.ingest(rssi: -70, advertised: -59, at: 1)
        let first = try #require(ranger.estimate(now: 1))
        ranger.ingest(rssi: 127, advertised: -59, at: 2)
        let after = try #require(ranger.estimate(now: 2))
        #expect(after.rssiFiltered == first.rssiFiltered)
        #expect(after.rssi == -70)
        #expect(after.lastSeen == 2)
        #expect(after.samples == 1)
        ranger.ingest(rssi: -70, advertised: -59, at: .nan)
        #expect(ranger.estimate(now: 2)?.lastSeen == 2)
    }

    /// A still tag whose filtered level sits near a threshold flipped `near`/`far` every second or
    /// so, each flip published at once as a significant change. The class now changes only when the
    /// filter is sure; a tag carried across a threshold is still followed within seconds.
    @Test("a still tag at a threshold keeps its class, and a tag carried across changes it")
    func proximityHoldsAtAThresholdAndFollowsAMove() throws {
        let config = RangingConfig()
        // The level at exactly `nearBelow` (3 m) from a beacon of −59 dBm at 1 m.
        let atThreshold = -59 - 10 * config.pathLossExponent * log10(config.nearBelow)
        var rng = SeededRandom(seed: 11)
        var ranger = BeaconRanger(id: Self.id, config: config)
        var changes = 0, last: Proximity?
        for k in 0..<1800 {                                   // 10 minutes at 3 Hz, 4 dB of noise
            let t = Double(k) / 3
            ranger.ingest(rssi: Int((atThreshold + rng.gaussian() * 4).rounded()), advertised: -59, at: t)
            let p = try #require(ranger.range(now: t)).proximity
            if k >= 30, let l = last, l != p { changes += 1 }
            last = p
        }
        #expect(changes <= 40, "\(changes) class changes in 10 minutes of a still tag")

        // Carried from 1 m out to 8 m and back, still at 3 Hz with the same noise.
        func level(_ metres: Double) -> Double { -59 - 10 * config.pathLossExponent * log10(metres) }
        var carried = BeaconRanger(id: Self.id, config: config)
        var t = 0.0
        func hear(at metres: Double, for seconds: Double) -> [Proximity] {
            var seen: [Proximity] = []
            let end = t + seconds
            while t < end {
                carried.ingest(rssi: Int((level(metres) + rng.gaussian() * 4).rounded()), advertised: -59, at: t)
                seen.append(carried.range(now: t)!.proximity)
                t += 1.0 / 3
            }
            return seen
        }
        #expect(hear(at: 1, for: 20).last == .near)
        let out = hear(at: 8, for: 10)
        let farAfter = try #require(out.firstIndex(of: .far), "never far at 8 m")
        #expect(Double(farAfter) / 3 <= 3, "far only after \(Double(farAfter) / 3) s")
        #expect(out.suffix(10).allSatisfy { $0 == .far })
        let back = hear(at: 1, for: 10)
        let nearAfter = try #require(back.firstIndex(of: .near), "never near again at 1 m")
        #expect(Double(nearAfter) / 3 <= 3, "near again only after \(Double(nearAfter) / 3) s")
        #expect(back.suffix(10).allSatisfy { $0 == .near })
    }

    /// The hysteresis is at most 3 dB past a threshold: a still tag moved from 2 m to 4.5 m turns
    /// `far`, however wide the filter's spread (a slow beacon's, or with the Kalman stage off), and
    /// a beacon heard again after a silence only in frames without an RSSI has a class.
    @Test("a tag moved well past a threshold changes class whatever the filter's spread", arguments: [true, false])
    func proximityFollowsAMoveWellPastAThreshold(kalman: Bool) throws {
        var config = RangingConfig()
        config.kalman = kalman
        if !kalman { config.medianWindow = 1 }
        func level(_ metres: Double) -> Double { -59 - 10 * config.pathLossExponent * log10(metres) }
        var rng = SeededRandom(seed: 3)
        var ranger = BeaconRanger(id: Self.id, config: config)
        var t = 0.0
        func hear(at metres: Double, for seconds: Double, every gap: Double) -> [Proximity] {
            var seen: [Proximity] = []
            let end = t + seconds
            while t < end {
                ranger.ingest(rssi: Int((level(metres) + rng.gaussian() * 2).rounded()), advertised: -59, at: t)
                seen.append(ranger.range(now: t)!.proximity)
                t += gap
            }
            return seen
        }
        #expect(hear(at: 2, for: 60, every: 2).suffix(10).allSatisfy { $0 == .near })
        #expect(hear(at: 4.5, for: 60, every: 2).suffix(10).allSatisfy { $0 == .far })
        #expect(hear(at: 2, for: 60, every: 2).suffix(10).allSatisfy { $0 == .near })
        // Silent past `unknownAfter`, then heard in frames without an RSSI: the class of its level.
        t += config.unknownAfter + 5
        ranger.ingest(rssi: BeaconRanger.unavailableRSSI, advertised: -59, at: t)
        #expect(ranger.range(now: t)?.proximity == .near)
    }

    /// Forgetting it later is the agent's table's (`BeaconTableTests`).
    @Test("a silent beacon goes unknown")
    func silence() throws {
        var ranger = BeaconRanger(id: Self.id, config: RangingConfig())
        ranger.ingest(rssi: -59, advertised: -59, at: 100)
        #expect(ranger.estimate(now: 105)?.proximity == .near)
        #expect(ranger.estimate(now: 111)?.proximity == .unknown)
    }

    /// A `mac:` identity (an Eddystone-URL beacon's) hears URL frames, which carry its power,
    /// between TLM frames, which do not: the power fell back to the default at each TLM frame,
    /// and at a steady −70 dBm the distance jumped between 6.9 m and 2.75 m.
    @Test("a frame without a power keeps the power last advertised")
    func aFrameWithoutPowerKeepsThePowerLastAdvertised() throws {
        let id = try #require(BeaconID("mac:c81f660a1b2c"))
        var ranger = BeaconRanger(id: id, config: RangingConfig())
        var powers: Set<Int> = [], distances: Set<Double> = []
        for k in 0..<20 {
            ranger.ingest(rssi: -70, advertised: k % 2 == 0 ? -49 : nil, at: Double(k) * 0.5)
            powers.insert(ranger.power)
            if k >= 10, let e = ranger.estimate(now: Double(k) * 0.5) { distances.insert((e.distance * 10).rounded() / 10) }
        }
        #expect(powers == [-49])
        #expect(distances.count == 1, "\(distances)")
        ranger.ingest(rssi: -70, advertised: 20, at: 10)
        #expect(ranger.power == -49, "an implausible power is none")
        var never = BeaconRanger(id: id, config: RangingConfig())
        never.ingest(rssi: -70, advertised: nil, at: 0)
        #expect(never.power == RangingConfig().defaultPower)
    }
}
