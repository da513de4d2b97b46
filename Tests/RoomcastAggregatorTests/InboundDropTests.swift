import RoomcastFusion
import RoomcastLogging
import Shared
import Testing
@testable import RoomcastAggregator

/// Readings lost in the aggregator's inbound buffer are logged at most every 10 s (the first at
/// once, each line with the total and the number since the last) and exported on `/metrics`.
@Suite struct InboundDropTests {
    @Test func theFirstLossIsLoggedAtOnceThenAtMostEveryInterval() {
        var report = InboundDropReport(interval: 10)
        #expect(report.due(dropped: 0, now: 100) == nil, "nothing lost, nothing logged")
        #expect(report.due(dropped: 5, now: 101).map { [$0.total, $0.since] } == [5, 5])
        #expect(report.due(dropped: 900, now: 105) == nil, "within the interval: held back")
        #expect(report.due(dropped: 1200, now: 111).map { [$0.total, $0.since] } == [1200, 1195])
        #expect(report.due(dropped: 1200, now: 130) == nil, "no new loss, no line")
        #expect(report.due(dropped: 1201, now: 131).map { [$0.total, $0.since] } == [1201, 1])
    }

    /// The wall clock stepped back: the last line's time lies ahead, and held every line back
    /// until the clock caught up. The rate-limited log lines and the dashboards' pushes alike
    /// (open dashboards froze for as long as the step).
    @Test func aClockSteppedBackHoldsNoLineBack() {
        var report = InboundDropReport(interval: 10)
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
}
