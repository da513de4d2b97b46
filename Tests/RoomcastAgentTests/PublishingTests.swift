import Shared
import Testing
@testable import RoomcastAgent

let tag = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")!

@Suite struct PublishPolicyTests {
    @Test func firstThenAtMostOncePerIntervalWithSampleCounts() {
        let p = PublishPolicy(reportInterval: 1.0, significantChangeDB: 6, significantChangeMeters: 1.5)
        var state: PublishPolicy.State?
        // 10 advertisements a second for 3 seconds, steady signal.
        var published: [(Double, Int)] = []
        for i in 0..<30 {
            let ts = 100 + Double(i) * 0.1
            if let due = p.offer(&state, ts: ts, filtered: -70, distance: 3.2, proximity: .far) { published.append((ts, due.samples)) }
        }
        #expect(published.map(\.0) == [100, 101, 102])
        #expect(published.map(\.1) == [1, 10, 10])
    }

    @Test func slowBeaconIsPublishedEveryAdvertisementNeverMore() {
        let p = PublishPolicy(reportInterval: 1.0)
        var state: PublishPolicy.State?
        var count = 0
        for i in 0..<5 where p.offer(&state, ts: Double(i) * 10, filtered: -80, distance: 8, proximity: .far) != nil { count += 1 }
        #expect(count == 5)
    }

    @Test func significantChangeGoesOutAtOnce() {
        let p = PublishPolicy(reportInterval: 1.0, significantChangeDB: 6, significantChangeMeters: 100)
        var state: PublishPolicy.State?
        #expect(p.offer(&state, ts: 0, filtered: -80, distance: 8, proximity: .far)?.reason == .first)
        #expect(p.offer(&state, ts: 0.1, filtered: -77, distance: 8, proximity: .far) == nil)
        #expect(p.offer(&state, ts: 0.2, filtered: -72, distance: 8, proximity: .far)?.reason == .significantChange)
        #expect(p.offer(&state, ts: 0.3, filtered: -72, distance: 8, proximity: .near)?.reason == .significantChange)
    }

    /// A threshold of 0 turns its criterion off. Read as "any change", it published every
    /// advertisement, unchanged ones included.
    @Test func aThresholdOfZeroIsOff() {
        let p = PublishPolicy(reportInterval: 1.0, significantChangeDB: 0, significantChangeMeters: 0)
        var state: PublishPolicy.State?
        #expect(p.offer(&state, ts: 0, filtered: -80, distance: 8, proximity: .far)?.reason == .first)
        #expect(p.offer(&state, ts: 0.1, filtered: -80, distance: 8, proximity: .far) == nil)
        #expect(p.offer(&state, ts: 0.2, filtered: -60, distance: 30, proximity: .far) == nil)
        #expect(p.offer(&state, ts: 0.3, filtered: -60, distance: 30, proximity: .near)?.reason == .significantChange)
        #expect(p.offer(&state, ts: 1.3, filtered: -60, distance: 30, proximity: .near)?.reason == .interval)
    }

    /// Advertisements without an RSSI between measured ones (HCI's 127): their `unknown`
    /// proximity is no news, so they do not publish at the advertising rate.
    @Test func anAdvertisementWithoutRSSIIsNoSignificantChange() {
        let p = PublishPolicy(reportInterval: 1.0, significantChangeDB: 6, significantChangeMeters: 1.5)
        var state: PublishPolicy.State?
        var published: [Double] = []
        for i in 0..<30 {
            let ts = Double(i) * 0.1, measured = i % 2 == 0
            if p.offer(&state, ts: ts, filtered: -70, distance: 3.2, proximity: measured ? .far : .unknown, measured: measured) != nil {
                published.append(ts)
            }
        }
        #expect(published == [0, 1, 2])
        // The interval falling on one without an RSSI: the measured one after it is no change.
        state = nil
        published = []
        for i in 0..<30 {
            let ts = Double(i) * 0.1, measured = i % 10 != 0 || i == 0
            if p.offer(&state, ts: ts, filtered: -70, distance: 3.2, proximity: measured ? .far : .unknown, measured: measured) != nil {
                published.append(ts)
            }
        }
        #expect(published == [0, 1, 2], "\(published)")
    }

    @Test func forgottenStateCountsAsFirst() {
        let p = PublishPolicy(reportInterval: 10)
        var state: PublishPolicy.State?
        _ = p.offer(&state, ts: 0, filtered: -70, distance: 3, proximity: .far)
        #expect(p.offer(&state, ts: 1, filtered: -70, distance: 3, proximity: .far) == nil)
        state = nil
        #expect(p.offer(&state, ts: 2, filtered: -70, distance: 3, proximity: .far)?.reason == .first)
    }
}

@Suite struct RegionTrackerTests {
    @Test func enterOnceExitAfterDelayNotOnAMissedAdvertisement() {
        var t = RegionTracker(node: "kitchen-pi", exitDelay: 10)
        #expect(t.heard(tag, inRegions: ["office"], ts: 0).map(\.event) == [.enter])
        #expect(t.heard(tag, inRegions: ["office"], ts: 1).isEmpty)
        #expect(t.expire(now: 8).isEmpty, "a gap shorter than the exit delay is not an exit")
        #expect(t.heard(tag, inRegions: ["office"], ts: 8).isEmpty)
        let exits = t.expire(now: 18)
        #expect(exits.map(\.event) == [.exit])
        #expect(exits.first?.region == "office" && exits.first?.node == "kitchen-pi")
        #expect(t.expire(now: 30).isEmpty, "one event per transition")
        #expect(t.heard(tag, inRegions: ["office"], ts: 31).map(\.event) == [.enter])
    }

    @Test func sequenceIsMonotonicAcrossRestarts() {
        var a = SequenceNumber(startTime: 1000)
        var last: UInt64 = 0
        for _ in 0..<500 { last = a.next() }
        var b = SequenceNumber(startTime: 1001)
        #expect(b.next() > last)
    }
}
