import RoomcastFusion
import RoomcastLogging
import Shared
import Testing
@testable import RoomcastAggregator

/// Readings lost in the aggregator's inbound buffer are logged at most every 10 s (the first at
/// once, each line with the total and the number since the last) and exported on `/metrics`.
@Suite struct InboundDropTests {
    @Test func theFirstLossIsLoggedAtOnceThenAtMostEveryInterval() {
        var report = DropReport(interval: 10)
        #expect(report.due(dropped: 0, now: 100) == nil, "nothing lost, nothing logged")
        #expect(report.due(dropped: 5, now: 101).map { [$0.total, $0.since] } == [5, 5])
        #expect(report.due(dropped: 900, now: 105) == nil, "within the interval: held back")
        #expect(report.due(dropped: 1200, now: 111).map { [$0.total, $0.since] } == [1200, 1195])
        #expect(report.due(dropped: 1200, now: 130) == nil, "no new loss, no line")
        #expect(report.due(dropped: 1201, now: 131).map { [$0.total, $0.since] } == [1201, 1])
    }

    /// Fusion behind the broker for good (a site too big for its host): a line every 10 s was
    /// 8,640 a day. They come ever further apart while losses go on, up to hourly, each with the
    /// total; after a calm, the next loss is said at once and at 10 s again.
    @Test func lossesThatGoOnAreLoggedEverFurtherApart() {
        var report = DropReport(interval: 10)
        var lines: [Double] = []
        var dropped = 0
        for t in stride(from: 0.0, to: 86_400, by: 1) {
            dropped += 3
            if let line = report.due(dropped: dropped, now: t) {
                lines.append(t)
                #expect(line.total == dropped)
            }
        }
        #expect(lines.prefix(4) == [0, 10, 30, 70], "\(lines.prefix(6))")
        #expect(lines.count < 40, "\(lines.count) lines in a day")
        let back = 86_400 + 7_200.0
        #expect(report.due(dropped: dropped + 1, now: back) != nil && report.due(dropped: dropped + 2, now: back + 5) == nil
                && report.due(dropped: dropped + 3, now: back + 10) != nil)
    }

    /// The wall clock stepped back: the last line's time lies ahead, and held every line back
    /// until the clock caught up. The rate-limited log lines and the dashboards' pushes alike
    /// (open dashboards froze for as long as the step).
    @Test func aClockSteppedBackHoldsNoLineBack() {
        var report = DropReport(interval: 10)
        #expect(report.due(dropped: 5, now: 10_000) != nil)
        #expect(report.due(dropped: 9, now: 6_400).map { [$0.total, $0.since] } == [9, 4])
        #expect(report.due(dropped: 12, now: 6_405) == nil, "then every 10 s again")
        let log = RateLimitedLog(interval: 10)
        #expect(log.admit("reading refused", now: 10_000).admit)
        #expect(log.admit("reading refused", now: 10_005).admit == false)
        #expect(log.admit("reading refused", now: 6_400).admit)
        #expect(log.admit("reading refused", now: 6_405).admit == false)
        var pushes = Pacer(interval: 1)
        #expect(pushes.due(now: 10_000) && !pushes.due(now: 10_000.5))
        #expect(pushes.due(now: 6_400) && !pushes.due(now: 6_400.5) && pushes.due(now: 6_401))
    }

    /// A caller that moves its own times with a clock step (the agent's full beacon table) moves
    /// the pacing with them: the condition goes on being said at its pace, not at once again
    /// after each step, nor held back for the step's length.
    @Test func aPacingMovedWithTheClockGoesOnWhereItWas() {
        var pacing = LogPacing(interval: 60)
        #expect(pacing.admit(now: 0).admit && pacing.admit(now: 60).admit, "at once, then a minute later")
        pacing.clockSteppedBack(by: 1000)
        #expect(pacing.admit(now: 60 - 1000 + 119).admit == false, "the next is 120 s after the last, on the stepped clock")
        #expect(pacing.admit(now: 60 - 1000 + 120) == (true, 1))
        pacing.clockSteppedBack(by: -5000)
        #expect(pacing.admit(now: 180 - 1000 + 5000 + 239).admit == false, "a step forward is no calm")
    }

    /// A condition that lasts (a node whose clock is off, judged every 10 s; a Pi publishing under
    /// a name the site does not list) was logged every 10 s for as long as it lasted: 8,640
    /// lines a day onto a Pi's SD card. Its lines come ever further apart, up to hourly; one that
    /// stays away for twice its gap starts again at the first interval.
    @Test func aLastingConditionIsLoggedEverFurtherApart() {
        let log = RateLimitedLog(interval: 10)
        var admitted: [Double] = []
        var suppressedTotal = 0
        for t in stride(from: 0.0, to: 86_400, by: 10) {
            let (admit, suppressed) = log.admit("clock_skew/kitchen-pi", now: t)
            if admit { admitted.append(t) }
            suppressedTotal += suppressed
        }
        #expect(admitted.prefix(4) == [0, 10, 30, 70], "each gap twice the last at first: \(admitted.prefix(6))")
        #expect(admitted.count < 40, "\(admitted.count) lines in a day")
        let gaps = zip(admitted.dropFirst(), admitted).map { $0 - $1 }
        #expect(gaps.suffix(5).allSatisfy { $0 >= 3600 && $0 < 3610 }, "hourly once it lasts: \(gaps.suffix(5))")
        // Quiet for two hours, then back: logged at once (with the count of those held back since
        // the last line), and from the first interval again.
        let back = 86_400 + 7_200.0
        let again = log.admit("clock_skew/kitchen-pi", now: back)
        #expect(again.admit)
        #expect(suppressedTotal + again.suppressed + admitted.count == 8_640, "every line suppressed is counted")
        #expect(!log.admit("clock_skew/kitchen-pi", now: back + 5).admit && log.admit("clock_skew/kitchen-pi", now: back + 10).admit)
        // Keys name things from the network: past the bound, new ones share one.
        let bounded = RateLimitedLog(interval: 10, maximumKeys: 4)
        let firsts = (0..<10).map { bounded.admit("unknown_node/pi-\($0)", now: 0).admit }
        #expect(firsts == [true, true, true, true, false, false, false, false, false, false], "\(firsts)")
    }

    /// Keys name things from the network (a node's name, a topic). Once a stranger had cycled
    /// through enough names to fill the table, every later key shared one line, for good: a day
    /// later, two new unknown nodes were said as one, the second held back. Keys that have had
    /// their calm make room; one still recurring keeps its pace.
    @Test func keysThatHadTheirCalmMakeRoomForNewOnes() {
        let log = RateLimitedLog(interval: 10, maximumKeys: 4)
        for k in 0..<3 { #expect(log.admit("unknown_node/pi-\(k)", now: 0).admit) }
        #expect(log.admit("unknown_node/pi-3", now: 1).admit && !log.admit("unknown_node/pi-4", now: 2).admit,
                "full: further keys share one line")
        #expect(log.admit("unknown_node/garage-pi", now: 86_400).admit)
        #expect(log.admit("unknown_node/shed-pi", now: 86_401).admit, "a day later, each new name is said on its own")

        let busy = RateLimitedLog(interval: 10, maximumKeys: 3)
        _ = busy.admit("clock_skew/kitchen-pi", now: 0)
        for t in stride(from: 0.0, through: 95, by: 5) { _ = busy.admit("clock_skew/hall-pi", now: t) }
        _ = busy.admit("unknown_node/garage-pi", now: 100)
        #expect(!busy.admit("clock_skew/hall-pi", now: 101).admit, "the table full, the key still recurring kept its pace")
    }

    /// A condition that recurs slowly but regularly (an adapter reset every 4 minutes in a room
    /// where nothing is heard, a state file save failing every 5) stayed away longer than twice
    /// the first interval each time, and was logged every time, for ever. It recurs at its pace:
    /// it too is said ever further apart, and after a real calm from the first interval again.
    @Test func aConditionThatRecursSlowlyIsLoggedEverFurtherApartToo() {
        let log = RateLimitedLog(interval: 60)
        var admitted: [Double] = []
        for k in 0..<360 where log.admit("adapter reset", now: Double(k) * 241).admit { admitted.append(Double(k) * 241) }
        #expect(admitted.count < 40, "\(admitted.count) of 360 logged in a day")
        let gaps = zip(admitted.dropFirst(), admitted).map { $0 - $1 }
        #expect(gaps.suffix(3).allSatisfy { $0 >= 3600 }, "hourly once it lasts: \(gaps.suffix(3))")
        // A day of calm, then twice a minute apart: the first is said, the second held back.
        let back = 360 * 241 + 86_400.0
        #expect(log.admit("adapter reset", now: back).admit && !log.admit("adapter reset", now: back + 30).admit)
    }

    /// Two nodes' lasting conditions are logged each on its own: one node's line must not hold
    /// another's back for an hour.
    @Test func eachNodesConditionIsLoggedOnItsOwn() async throws {
        let site = SiteModel(rooms: [.init(name: "kitchen")], nodes: [.init(name: "kitchen-pi", room: "kitchen")])
        let core = AggregatorCore(engine: FusionEngine(site: site), site: site, topics: Topics(), discovery: nil,
                                  restrictToKnownNodes: true)
        let records = InMemoryLogHandler()
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 0,
                                        logger: Logger(label: "test", level: .warning, handler: records))
        let id = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1-1")!
        for (k, node) in ["garage-pi", "shed-pi"].enumerated() {
            let r = BeaconReading(id: id, node: node, ts: 100, seq: 1, rssi: -60, rssiFiltered: -60, power: -59, distance: 1,
                                  proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
            _ = await runtime.handle(topic: Topics().nodeBeacon(node, id), payload: try WireFormat.encode(r), now: 100 + Double(k))
        }
        let refused = records.records.filter { $0.message == "rejected inbound message" }.map { "\($0.metadata["detail"] ?? "")" }
        #expect(refused.count == 2 && refused[0].contains("'garage-pi'") && refused[1].contains("'shed-pi'"), "\(refused)")
    }

    @Test func theCountIsExportedOnMetrics() async {
        let site = SiteModel(rooms: [.init(name: "kitchen")], nodes: [.init(name: "kitchen-pi", room: "kitchen")])
        let core = AggregatorCore(engine: FusionEngine(site: site), site: site, topics: Topics(), discovery: nil)
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 1000, logger: .silent)
        var sample = await runtime.metricsSample(now: 1000)
        sample.mqttDroppedInbound = 7_694
        let lines = sample.render().split(separator: "\n")
        #expect(lines.contains("# TYPE roomcast_mqtt_inbound_dropped_total counter"))
        #expect(lines.contains("roomcast_mqtt_inbound_dropped_total 7694"))
    }

    /// Readings the intake passes and fusion refuses (a reading repeated, as QoS 1 redelivers
    /// one; one captured long before it arrived) are on /metrics by reason.
    @Test func readingsFusionRefusesAreCountedOnMetrics() async throws {
        let site = SiteModel(rooms: [.init(name: "kitchen")], nodes: [.init(name: "kitchen-pi", room: "kitchen")])
        let core = AggregatorCore(engine: FusionEngine(site: site), site: site, topics: Topics(), discovery: nil)
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 0, logger: .silent)
        let id = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1-1")!
        func reading(seq: UInt64, ts: Double) -> BeaconReading {
            BeaconReading(id: id, node: "kitchen-pi", ts: ts, seq: seq, rssi: -60, rssiFiltered: -60, power: -59, distance: 1,
                          proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
        }
        for (seq, ts, now) in [(1, 100.0, 100.0), (1, 100.0, 100.2), (2, 101.0, 101.0)] as [(UInt64, Double, Double)] {
            _ = await runtime.handle(topic: Topics().nodeBeacon("kitchen-pi", id), payload: try WireFormat.encode(reading(seq: seq, ts: ts)), now: now)
        }
        let lines = await runtime.metricsSample(now: 102).render().split(separator: "\n")
        #expect(lines.contains("# TYPE roomcast_fusion_readings_rejected_total counter"))
        #expect(lines.contains("roomcast_fusion_readings_rejected_total{reason=\"duplicate\"} 1"), "\(lines.filter { $0.contains("fusion") })")
        #expect(lines.contains("roomcast_fusion_readings_rejected_total{reason=\"too_old\"} 0"))
    }
}
