import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Shared
import Testing
import TestSupport
@testable import RoomcastAgent

@Suite struct AgentCoreTests {
    let address: [UInt8] = [0xC8, 0x1F, 0x66, 0x0A, 0x1B, 0x2C]

    func report(t: Double, rssi: Int?, major: UInt16 = 675, minor: UInt16 = 23, data: [UInt8]? = nil) -> AdvertisingReport {
        AdvertisingReport(address: address, addressType: .random, eventType: AdvertisingEventType(legacy: 0x03), rssi: rssi,
                          data: data ?? CaptureBuilder.iBeacon(major: major, minor: minor), timestamp: t)
    }

    func readings(_ msgs: [OutboundMessage]) throws -> [BeaconReading] {
        try msgs.filter { $0.topic.contains("/beacons/") }.map { try WireFormat.decode(BeaconReading.self, from: $0.payload) }
    }

    @Test func rangesAndPublishesWithWireFields() throws {
        var core = AgentCore(settings: AgentSettings(node: "kitchen-pi", room: "kitchen"), decoder: try AdvertisementDecoder(), startTime: 1000)
        var all: [BeaconReading] = []
        for i in 0..<30 { all += try readings(core.handle(report(t: 1000 + Double(i) * 0.1, rssi: -65))) }
        #expect(all.count == 3, "10 Hz for 3 s at a 1 s report interval")
        let r = try #require(all.first)
        #expect(r.id.rawValue == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23")
        #expect(r.uuid == "e2c56db5-dffb-48d2-b060-d0f5a71096e0" && r.major == 675 && r.minor == 23)
        #expect(r.node == "kitchen-pi" && r.kind == .iBeacon && r.mac == "c8:1f:66:0a:1b:2c" && r.power == -59)
        #expect(r.rssi == -65 && r.ts == 1000)
        #expect(all.map(\.seq) == all.map(\.seq).sorted() && Set(all.map(\.seq)).count == 3)
        #expect(all[2].samples == 10)
        #expect(all[2].distance > 1 && all[2].distance < 3, "-65 dBm at -59 dBm reference is a couple of metres")
        // How sure the filter is: the first sample alone is one measurement's noise (4 dB), ten
        // a second later much less.
        #expect(all[0].rssiSD == 4 && (all[2].rssiSD ?? 9) < 2, "\(all.map(\.rssiSD))")
    }

    @Test func majorAndMinorDistinguishBeacons() throws {
        var core = AgentCore(settings: AgentSettings(node: "n"), decoder: try AdvertisementDecoder(), startTime: 0)
        let a = try readings(core.handle(report(t: 0, rssi: -60, major: 675, minor: 23)))
        let b = try readings(core.handle(report(t: 0.1, rssi: -60, major: 67, minor: 523)))
        #expect(a.count == 1 && b.count == 1 && a[0].id != b[0].id)
    }

    @Test func unavailableRSSIIsNotRangedButSeen() throws {
        var core = AgentCore(settings: AgentSettings(node: "n"), decoder: try AdvertisementDecoder(), startTime: 0)
        let r = try #require(try readings(core.handle(report(t: 0, rssi: nil))).first)
        #expect(r.proximity == .unknown && r.rssi == -127 && r.rssiSD == nil, "the floor is no measured level")
        #expect(core.stats.readings == 1)
    }

    /// Advertisements without an RSSI are the beacon heard: they count for its advertising
    /// interval and its last time heard. Skipped, a beacon whose every other report lacks one
    /// read as advertising half as often, and went `unknown` while still heard.
    @Test func reportsWithoutAnRSSICountForTheInterval() throws {
        var core = AgentCore(settings: AgentSettings(node: "n"), decoder: try AdvertisementDecoder(), startTime: 0)
        var all: [BeaconReading] = []
        for i in 0..<40 { all += try readings(core.handle(report(t: Double(i) * 0.5, rssi: i % 2 == 0 ? -60 : nil))) }
        let last = try #require(all.last)
        #expect(abs((last.interval ?? 0) - 0.5) < 0.01, "\(String(describing: last.interval))")
        for i in 40..<70 { all += try readings(core.handle(report(t: Double(i) * 0.5, rssi: nil))) }
        #expect(core.scanTable(now: 34.6).sorted.first?.proximity != .unknown, "heard for 15 s without an RSSI: still in view")
    }

    /// A still tag at 3 m: the readings' class holds (`BeaconRanger.nextProximity`), while a
    /// distance crossing the threshold is still reported at once, as the aggregator expects.
    @Test func aStillTagAtAThresholdKeepsItsClassWhileCrossingsAreReported() throws {
        var core = AgentCore(settings: AgentSettings(node: "n"), decoder: try AdvertisementDecoder(), startTime: 0)
        let config = RangingConfig()
        let atThreshold = -59 - 10 * config.pathLossExponent * log10(config.nearBelow)
        var rng = SeededRandom(seed: 5)
        var all: [BeaconReading] = []
        for k in 0..<1800 {
            let rssi = Int((atThreshold + rng.gaussian() * 4).rounded())
            all += try readings(core.handle(report(t: Double(k) / 3, rssi: rssi)))
        }
        func changes(_ classes: [Proximity]) -> Int { zip(classes, classes.dropFirst()).filter { $0 != $1 }.count }
        let carried = changes(all.map(\.proximity))
        let crossed = changes(all.map { Proximity(distance: $0.distance, config: config) })
        #expect(carried <= 40, "\(carried) class changes in the readings of 10 minutes")
        #expect(crossed > 100, "only \(crossed) readings across the threshold")
    }

    /// A receiver calibrated below the model (`rx_adjust_db`) reads a weak beacon under the floor:
    /// the reading says the floor, within the contract, and the aggregator takes it.
    @Test func aFilteredLevelStaysWithinTheContractWhateverTheAdjustment() throws {
        var ranging = RangingConfig()
        ranging.rxAdjust = -20
        var core = AgentCore(settings: AgentSettings(node: "n", ranging: ranging), decoder: try AdvertisementDecoder(), startTime: 0)
        let r = try #require(try readings(core.handle(report(t: 0, rssi: -115))).first)
        #expect(r.rssiFiltered == -127)
        #expect(try JSONSchemaValidator.contract("reading.schema.json").validate(json: WireFormat.encode(r)) == [])
    }

    /// `edge-agent scan` lists the beacons in view nearest first: one gone quiet keeps its last
    /// distance until forgotten, and stood first, above beacons heard now.
    @Test func theScanListsBeaconsInViewBeforeThoseGoneQuiet() throws {
        var core = AgentCore(settings: AgentSettings(node: "n"), decoder: try AdvertisementDecoder(), startTime: 0)
        _ = core.handle(report(t: 0, rssi: -45, minor: 1))
        for i in 0...40 { _ = core.handle(report(t: Double(i) * 0.5, rssi: -65, minor: 2)) }
        let rows = core.scanTable(now: 20).sorted
        #expect(rows.map(\.proximity) == [.far, .unknown] || rows.map(\.proximity) == [.near, .unknown], "\(rows)")
        #expect(rows.first?.label.hasSuffix("-675-2") == true)
    }

    @Test func untrackedAdvertisementsAreCountedNotPublished() throws {
        var core = AgentCore(settings: AgentSettings(node: "n"), decoder: try AdvertisementDecoder(), startTime: 0)
        #expect(core.handle(report(t: 0, rssi: -50, data: [0x02, 0x01, 0x06, 0x05, 0xFF, 0x4C, 0x00, 0x10, 0x05])).isEmpty)
        #expect(core.handle(report(t: 0, rssi: -50, data: [0x1F, 0xFF])).isEmpty, "malformed AD never traps")
        #expect(core.stats.untracked == 2)
    }

    @Test func regionEnterAndExitAtThisNode() throws {
        var config = AdvertisingConfig()
        config.regions = [RegionConfig(name: "office", uuid: "e2c56db5-dffb-48d2-b060-d0f5a71096e0")]
        var core = AgentCore(settings: AgentSettings(node: "n", regionExitDelay: 10), decoder: try AdvertisementDecoder(config: config),
                             startTime: 0)
        let first = core.handle(report(t: 0, rssi: -60))
        let enter = first.filter { $0.topic == "roomcast/nodes/n/events" }
        #expect(try enter.map { try WireFormat.decode(RegionEvent.self, from: $0.payload).event } == [.enter])
        #expect(core.tick(now: 5).filter { $0.topic.hasSuffix("/events") }.isEmpty)
        let exit = core.tick(now: 11).filter { $0.topic == "roomcast/nodes/n/events" }
        #expect(try exit.map { try WireFormat.decode(RegionEvent.self, from: $0.payload).event } == [.exit])
        // Events are held through a broker outage; the first reading, at QoS 1 for the delivery
        // check, is not: stale, it would pass for fresh.
        #expect((enter + exit).allSatisfy { $0.qos == 1 && $0.heldThroughOutage })
        let reading = try #require(first.first { $0.topic.hasPrefix("roomcast/nodes/n/beacons/") })
        #expect(reading.qos == 1 && !reading.heldThroughOutage)
    }

    @Test func telemetryIsRetainedAndPeriodic() throws {
        var core = AgentCore(settings: AgentSettings(node: "n", telemetryInterval: 30), decoder: try AdvertisementDecoder(), startTime: 0)
        _ = core.handle(report(t: 0, rssi: -60))
        let first = core.tick(now: 0).filter { $0.topic == "roomcast/nodes/n/telemetry" }
        #expect(first.count == 1 && first[0].retain)
        let t = try WireFormat.decode(NodeTelemetry.self, from: first[0].payload)
        #expect(t.beaconsInView == 1 && t.node == "n")
        #expect(core.tick(now: 10).filter { $0.topic.hasSuffix("/telemetry") }.isEmpty)
        #expect(core.tick(now: 31).filter { $0.topic.hasSuffix("/telemetry") }.count == 1)
    }

    /// The wall clock steps back an hour (an NTP correction, a clock set by hand) while a beacon
    /// in a region is heard. Every time the core kept lay ahead of the clock: the RSSI filter
    /// saw no time pass between samples and stopped following the signal, and neither the
    /// region exit, the forgetting of the silent beacon nor telemetry came, all for an hour.
    @Test func afterTheClockStepsBackRangingRegionsAndTelemetryGoOn() throws {
        var config = AdvertisingConfig()
        config.regions = [RegionConfig(name: "office", uuid: "e2c56db5-dffb-48d2-b060-d0f5a71096e0")]
        let settings = AgentSettings(node: "n", telemetryInterval: 30, regionExitDelay: 10)
        var core = AgentCore(settings: settings, decoder: try AdvertisementDecoder(config: config), startTime: 10_000)
        var t = 10_000.0
        func run(seconds: Double, rssi: Int?) throws -> [OutboundMessage] {
            var out: [OutboundMessage] = []
            let end = t + seconds
            while t < end - 1e-9 {
                if let rssi { out += core.handle(report(t: t, rssi: rssi)) }
                t += 0.1
                if (t * 10).rounded().truncatingRemainder(dividingBy: 10) == 0 { out += core.tick(now: t) }
            }
            return out
        }
        _ = try run(seconds: 60, rssi: -50)
        t -= 3600
        // A report still in the queue from before the step: it must not put the times ahead again.
        _ = core.handle(report(t: t + 3600, rssi: -50))
        let after = try readings(run(seconds: 60, rssi: -80))
        let last = try #require(after.last)
        #expect(last.rssiFiltered < -75, "the filter follows the signal after the step: \(last.rssiFiltered) dBm")
        #expect(core.stats.clockSteps == 1)
        let quiet = try run(seconds: 150, rssi: nil)
        let exits = try quiet.filter { $0.topic == "roomcast/nodes/n/events" }.map { try WireFormat.decode(RegionEvent.self, from: $0.payload) }
        #expect(exits.map(\.event) == [.exit], "the region is left 10 s after the beacon fell silent")
        #expect(core.trackedBeacons == 0, "the silent beacon is forgotten")
        let telemetry = quiet.filter { $0.topic == "roomcast/nodes/n/telemetry" }
        #expect(telemetry.count >= 4, "telemetry every 30 s: \(telemetry.count) in 150 s")
        let uptime = try WireFormat.decode(NodeTelemetry.self, from: try #require(telemetry.last).payload).uptime
        #expect(uptime > 230 && uptime < 275, "uptime runs on across the step (the last telemetry came 240 s after the start): \(uptime) s")
    }
}

/// An Eddystone beacon sends its telemetry in TLM advertisements of their own, which carry no id.
@Suite struct EddystoneTelemetryTests {
    static let uid = Hex.decode("0201060303aafe1716aafe00e3123456789012346789010000000000010000")!
    /// Battery 2840 mV, 24.5 °C.
    static let tlm = Hex.decode("0201060303aafe1116aafe" + "20000b1818800000146700002ac4")!

    static func report(_ data: [UInt8], t: Double, address: [UInt8] = [0xD1, 0x2, 0x3, 0x4, 0x5, 0x6]) -> AdvertisingReport {
        AdvertisingReport(address: address, addressType: .random, eventType: AdvertisingEventType(legacy: 0x03), rssi: -60,
                          data: data, timestamp: t)
    }

    /// The TLM frame's battery and temperature reach the readings of the Eddystone-UID beacon
    /// its address advertises; a TLM frame from another address does not.
    @Test func tlmTelemetryGoesWithTheUIDBeaconOfItsAddress() throws {
        var core = AgentCore(settings: AgentSettings(node: "n"), decoder: try AdvertisementDecoder(), startTime: 0)
        func readings(_ out: [OutboundMessage]) throws -> [BeaconReading] {
            try out.filter { $0.topic.contains("/beacons/") }.map { try WireFormat.decode(BeaconReading.self, from: $0.payload) }
        }
        var before = try readings(core.handle(Self.report(Self.uid, t: 0)))
        #expect(before.count == 1 && before[0].id.rawValue.hasPrefix("eddystone:") && before[0].telemetry == nil)
        // Another device's TLM: nothing of it.
        _ = core.handle(Self.report(Self.tlm, t: 0.5, address: [0xD9, 9, 9, 9, 9, 9]))
        before = try readings(core.handle(Self.report(Self.uid, t: 1.2)))
        #expect(before.count == 1 && before[0].telemetry == nil)
        #expect(try readings(core.handle(Self.report(Self.tlm, t: 1.5))).isEmpty, "a TLM frame is no reading of its own")
        let after = try readings(core.handle(Self.report(Self.uid, t: 2.4)))
        let telemetry = try #require(after.first?.telemetry)
        #expect(telemetry.batteryMillivolts == 2840 && telemetry.temperature == 24.5, "\(telemetry)")
    }

    /// A beacon that stops sending TLM frames (reconfigured to UID only) had its last
    /// temperature and battery level sent with its readings for as long as it was heard. They
    /// go with its readings for five minutes after the frame, then no more.
    @Test func tlmTelemetryNotHeardForFiveMinutesIsNoLongerSent() throws {
        var core = AgentCore(settings: AgentSettings(node: "n"), decoder: try AdvertisementDecoder(), startTime: 0)
        func telemetry(at t: Double) throws -> BeaconTelemetry? {
            let out = core.handle(Self.report(Self.uid, t: t)).filter { $0.topic.contains("/beacons/") }
            try #require(out.count == 1, "a reading at \(t) s")
            return try WireFormat.decode(BeaconReading.self, from: out[0].payload).telemetry
        }
        _ = core.handle(Self.report(Self.uid, t: 0))
        _ = core.handle(Self.report(Self.tlm, t: 0.5))
        var t = 1.5
        while t < 300 {
            #expect(try telemetry(at: t)?.temperature == 24.5, "at \(t) s")
            _ = core.tick(now: t)
            t += 10
        }
        #expect(try telemetry(at: 301) == nil)
        // The next TLM frame brings it back.
        _ = core.handle(Self.report(Self.tlm, t: 302))
        #expect(try telemetry(at: 312)?.batteryMillivolts == 2840)
    }
}
