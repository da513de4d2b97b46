import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Shared
import Synchronization
import Testing
import TestSupport
@testable import RoomcastAgent
import RoomcastConfig
import RoomcastLogging
import RoomcastYAML

/// A crowd or a flood of distinct advertisers through the real `AgentCore` and `AgentRuntime`:
/// the beacon table stays at `max_tracked_beacons`, the least recently heard go first, a
/// beacon heard all along keeps being ranged and published, and a newcomer is tracked.
@Suite struct AdvertiserFloodTests {
    static let t0 = 1_767_225_600.0
    /// Advertisements a second in the flood (what a busy node sees).
    static let rate = 2000.0
    static let capacity = 1024
    static let resident = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1")!

    /// Flood advertiser `n`: its own address and its own iBeacon id, so each one is a new beacon.
    static func floodReport(_ n: Int, at t: Double) -> AdvertisingReport {
        let address: [UInt8] = [0xC0, 0x11, UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16),
                                UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
        return AdvertisingReport(address: address, addressType: .random, eventType: AdvertisingEventType(legacy: 0x03),
                                 rssi: -70 - n % 20, data: CaptureBuilder.iBeacon(major: UInt16(1000 + n / 65536),
                                                                                  minor: UInt16(n % 65536)),
                                 timestamp: t)
    }

    static func floodID(_ n: Int) -> BeaconID {
        BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-\(1000 + n / 65536)-\(n % 65536)")!
    }

    static func report(major: UInt16, minor: UInt16, rssi: Int, at t: Double,
                       address: [UInt8] = [0xC8, 0x1F, 0x66, 0x0A, 0x1B, 0x2C]) -> AdvertisingReport {
        AdvertisingReport(address: address, addressType: .random, eventType: AdvertisingEventType(legacy: 0x03), rssi: rssi,
                          data: CaptureBuilder.iBeacon(major: major, minor: minor), timestamp: t)
    }

    static func readings(_ messages: [OutboundMessage], of id: BeaconID) throws -> [BeaconReading] {
        try messages.filter { $0.topic.hasSuffix("/beacons/\(id.rawValue)") }
            .map { try WireFormat.decode(BeaconReading.self, from: $0.payload) }
    }

    /// A tracker that advertises a new iBeacon minor every 2 s from one address: its first ten ids
    /// are tracked, the rest are not (counted as untracked, the transmitter once in telemetry), so
    /// it neither fills the table nor sends a reading a second for each id. A beacon with an id of
    /// its own is tracked throughout. (With `beacons:` or `regions:` listed, ids not listed are not
    /// tracked at all, so a listed beacon never meets the watch.)
    @Test func aTransmitterThatChangesItsIdIsTrackedNoMore() throws {
        var core = AgentCore(settings: AgentSettings(node: "hall-pi"), decoder: try AdvertisementDecoder(), startTime: Self.t0)
        let tracker: [UInt8] = [0xD0, 0x01, 0x02, 0x03, 0x04, 0x05]
        var readings: [String: Int] = [:]
        for step in 0..<600 {
            let t = Self.t0 + Double(step) * 0.2
            let rotating = Self.report(major: 9, minor: UInt16(step / 10), rssi: -60, at: t, address: tracker)
            let resident = Self.report(major: 1, minor: 1, rssi: -65, at: t + 0.1)
            for m in core.handle(rotating) + core.handle(resident) where m.topic.contains("/beacons/") {
                readings[String(m.topic.split(separator: "/").last!), default: 0] += 1
            }
        }
        let trackerIDs = readings.keys.filter { $0.contains("-9-") }
        #expect(trackerIDs.count == UnstableIDWatch.maximumIDs, "\(trackerIDs.sorted())")
        #expect(readings["ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1", default: 0] >= 110, "the resident kept publishing: \(readings)")
        #expect(core.stats.unstableAddresses == 1)
        #expect(core.stats.untracked >= 490, "the tracker's advertisements after its tenth id: \(core.stats.untracked)")
        #expect(core.beacons.count <= UnstableIDWatch.maximumIDs + 1)
        let telemetry = try WireFormat.decode(NodeTelemetry.self, from: core.telemetry(now: Self.t0 + 120, radio: nil, dropped: 0, brokerReconnects: 0).payload)
        #expect(telemetry.beaconsUnstable == 1)
    }

    @Test func theConfigSetsTheCap() throws {
        let config = try ConfigLoader.parse(AgentConfig.self, yaml: "node: hall-pi\nmax_tracked_beacons: 99\n")
        let core = AgentCore(settings: config.agentSettings, decoder: try AdvertisementDecoder(), startTime: 0)
        #expect(core.beacons.capacity == 99)
        #expect(AgentSettings(node: "n").maxTrackedBeacons == AgentConfig.defaultMaxTrackedBeacons)
    }

    /// 200 k distinct advertisers at 2,000 a second (100 s), one beacon heard at 20 Hz
    /// throughout; the core ticks once a second as the runtime does.
    @Test func floodKeepsTheTableAtItsCapAndTheResidentPublishing() async throws {
        try await onHeavyWorkThread {
            let flood = 200_000
            var core = AgentCore(settings: AgentSettings(node: "n", maxTrackedBeacons: Self.capacity),
                                 decoder: try AdvertisementDecoder(), startTime: Self.t0)
            var residentReadings: [BeaconReading] = []
            var residentAdverts = 0
            var floodReadings = 0
            var nextTick = Self.t0 + 1
            var largest = 0
            for n in 0..<flood {
                let t = Self.t0 + Double(n) / Self.rate
                if t >= nextTick {
                    _ = core.tick(now: t)
                    nextTick += 1
                }
                floodReadings += core.handle(Self.floodReport(n, at: t)).filter { $0.topic.contains("/beacons/") }.count
                if n % 100 == 0 {
                    residentAdverts += 1
                    residentReadings += try Self.readings(core.handle(Self.report(major: 1, minor: 1, rssi: -65, at: t)),
                                                          of: Self.resident)
                }
                largest = max(largest, core.beacons.count)
            }
            let end = Self.t0 + Double(flood) / Self.rate

            #expect(largest == Self.capacity && core.beacons.count == Self.capacity, "never past the cap")
            #expect(floodReadings == flood, "every new advertiser is published once, as a beacon first heard")
            #expect(core.stats.evicted == UInt64(flood + 1 - Self.capacity), "everything but what the table holds was evicted")

            // Least recently heard first: what is left is the resident and the newest flood beacons.
            let held = Set(core.beacons.entries.map(\.id))
            let newest = Set(((flood - Self.capacity + 1)..<flood).map(Self.floodID))
            #expect(held == newest.union([Self.resident]))

            // The resident was never evicted: one filter over all its advertisements, published
            // at least once a second throughout, ranged as a lone beacon at -65 dBm would be.
            let entry = try #require(core.beacons.entry(Self.resident))
            #expect(entry.ranger.samples == residentAdverts)
            #expect(residentReadings.count >= 99 && residentReadings.count <= 110, "\(residentReadings.count) readings in 100 s")
            let gaps = zip(residentReadings.dropFirst(), residentReadings).map { ($0.ts - $1.ts) / 1000 }
            #expect((gaps.max() ?? 99) <= 1.06, "published about every second, longest gap \(gaps.max() ?? 0) s")
            let last = try #require(residentReadings.last)
            #expect(abs(last.rssiFiltered - -65) < 0.5 && last.proximity == .near && (19...21).contains(last.samples ?? 0))
            var alone = AgentCore(settings: AgentSettings(node: "n"), decoder: try AdvertisementDecoder(), startTime: Self.t0)
            let reference = try Self.readings(alone.handle(Self.report(major: 1, minor: 1, rssi: -65, at: Self.t0)), of: Self.resident)
            #expect(abs(last.distance - (reference.first?.distance ?? 0)) < 0.01)

            // A beacon new after the flood is tracked and published at once.
            let newcomer = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-2-2")!
            let first = try Self.readings(core.handle(Self.report(major: 2, minor: 2, rssi: -60, at: end,
                                                                  address: [0xC8, 0, 0, 0, 0, 2])), of: newcomer)
            #expect(first.count == 1 && first.first?.rssi == -60 && first.first?.samples == 1)
            #expect(core.beacons.entry(newcomer) != nil && core.beacons.count == Self.capacity)
            var newcomerReadings = 0
            for i in 1...30 {
                newcomerReadings += try Self.readings(core.handle(Self.report(major: 2, minor: 2, rssi: -60, at: end + Double(i) * 0.1,
                                                                              address: [0xC8, 0, 0, 0, 0, 2])), of: newcomer).count
            }
            #expect(newcomerReadings == 3, "then once a second, as any beacon")

            // An evicted advertiser heard again starts afresh: a first reading, a new filter.
            let again = try Self.readings(core.handle(Self.floodReport(0, at: end + 4)), of: Self.floodID(0))
            #expect(again.count == 1 && again.first?.samples == 1)
            #expect(core.beacons.entry(Self.floodID(0))?.ranger.samples == 1)

            // Telemetry says so.
            let telemetry = core.telemetry(now: end + 5, radio: nil, dropped: 0, brokerReconnects: 0)
            let t = try WireFormat.decode(NodeTelemetry.self, from: telemetry.payload)
            #expect(t.beaconsInView == Self.capacity && t.beaconsMax == Self.capacity)
            #expect(t.beaconsEvicted == core.stats.evicted && core.stats.evicted == UInt64(flood + 3 - Self.capacity))
        }
    }

    /// A flood of one-off advertisers far faster than the table turns over (20,000 new ones
    /// between two advertisements of a 1 Hz beacon, 64 places): the beacon, heard before the
    /// flood, keeps its place and its filter; the flood churns only beacons heard once.
    @Test func aBeaconHeardAgainOutlastsAFloodOfOneOffAdvertisers() async throws {
        try await onHeavyWorkThread {
            var core = AgentCore(settings: AgentSettings(node: "n", maxTrackedBeacons: 64), decoder: try AdvertisementDecoder(),
                                 startTime: Self.t0 - 2)
            var readings: [BeaconReading] = []
            var adverts = 2
            for t in [Self.t0 - 2, Self.t0 - 1] {
                readings += try Self.readings(core.handle(Self.report(major: 1, minor: 1, rssi: -65, at: t)), of: Self.resident)
            }
            for n in 0..<200_000 {
                let t = Self.t0 + Double(n) / 20_000
                if n % 20_000 == 0 { _ = core.tick(now: t) }
                _ = core.handle(Self.floodReport(n, at: t))
                if n % 20_000 == 0 {
                    adverts += 1
                    readings += try Self.readings(core.handle(Self.report(major: 1, minor: 1, rssi: -65, at: t)), of: Self.resident)
                }
            }
            #expect(core.beacons.count == 64 && core.beacons.entry(Self.resident)?.ranger.samples == adverts)
            #expect(readings.count == adverts && readings.dropFirst().allSatisfy { $0.interval == 1 },
                    "published every second from one filter, never afresh")
            #expect(core.stats.evicted == UInt64(200_000 + 1 - 64))
        }
    }

    /// With regions and known beacons configured, the flood (members of the region) replaces
    /// its own kind: a known beacon heard only every 10 s, far less often than the table
    /// turns over, and a phone resolved through its IRK keep their place and their filters.
    @Test func knownBeaconsAndIRKPhonesKeepTheirPlace() async throws {
        try await onHeavyWorkThread {
            let irkHex = "ec0234a357c8ad05341010a60a397d9b"
            let key = try #require(IdentityResolvingKey(name: "alice-phone", hex: irkHex, lsbFirst: false))
            var config = AdvertisingConfig()
            config.regions = [RegionConfig(name: "venue", uuid: CaptureBuilder.uuid)]
            config.knownBeacons = [KnownBeaconConfig(id: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-7-7", name: "cat")]
            config.irks = [IRKConfig(name: "alice-phone", key: irkHex)]
            let cat = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-7-7")!
            let alice = try #require(BeaconID.irk("alice-phone"))
            var core = AgentCore(settings: AgentSettings(node: "n", maxTrackedBeacons: 256),
                                 decoder: try AdvertisementDecoder(config: config), startTime: Self.t0)
            var catAdverts = 0, aliceAdverts = 0
            var catReadings: [BeaconReading] = []
            for n in 0..<100_000 {
                let t = Self.t0 + Double(n) / Self.rate
                if n % 2000 == 0 { _ = core.tick(now: t) }
                _ = core.handle(Self.floodReport(n, at: t))
                if n % 20_000 == 0 {
                    catAdverts += 1
                    catReadings += try Self.readings(core.handle(Self.report(major: 7, minor: 7, rssi: -62, at: t)), of: cat)
                }
                if n % 5000 == 0 {
                    // A new resolvable private address each time, as a phone rotates them.
                    let prand = 0x40_0000 | UInt32(n / 5000 + 1)
                    let hash = try #require(AddressResolver.ah(irk: key.key, prand: prand))
                    let value = UInt64(prand) << 24 | UInt64(hash)
                    let address = (0..<6).map { UInt8(truncatingIfNeeded: value >> (40 - 8 * $0)) }
                    aliceAdverts += 1
                    _ = core.handle(AdvertisingReport(address: address, addressType: .random,
                                                      eventType: AdvertisingEventType(legacy: 0x03), rssi: -70,
                                                      data: [0x02, 0x01, 0x1A, 0x05, 0xFF, 0x4C, 0x00, 0x10, 0x00], timestamp: t))
                }
            }
            #expect(core.beacons.count == 256 && core.stats.evicted >= 99_000)
            #expect(core.stats.evictedKnown == 0)
            #expect(core.beacons.entry(cat)?.retention == .known && core.beacons.entry(cat)?.ranger.samples == catAdverts)
            #expect(core.beacons.entry(alice)?.retention == .known && core.beacons.entry(alice)?.ranger.samples == aliceAdverts)
            #expect(catReadings.count == catAdverts && catReadings.dropFirst().allSatisfy { $0.interval == 10 },
                    "every advertisement 10 s apart is published, each with the interval of one filter kept throughout")
            #expect(core.regions.entered == ["venue"])
            #expect(core.beacons.entries.filter { $0.retention == .heardOnce }.count == 254, "the flood, each heard once")
        }
    }

    /// A table exactly as large as the list of known beacons, which validation accepts: a
    /// stranger (a member of a configured region) finds every place taken and is not tracked. The user sees that as it is, a
    /// refusal in its own count, in telemetry and in the warning, not an undecodable report;
    /// the known beacons go on being published.
    @Test func strangersTurnedAwayByKnownBeaconsAreCountedAndLogged() async throws {
        var config = AdvertisingConfig()
        config.regions = [RegionConfig(name: "venue", uuid: CaptureBuilder.uuid)]  // strangers of the region are tracked
        config.knownBeacons = [KnownBeaconConfig(id: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-7-7", name: "cat"),
                               KnownBeaconConfig(id: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-7-8", name: "dog")]
        let cat = try #require(BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-7-7"))
        let logs = InMemoryLogHandler()
        let sink = CountingSink(watching: cat)
        let core = AgentCore(settings: AgentSettings(node: "n", telemetryInterval: 30, maxTrackedBeacons: 2),
                             decoder: try AdvertisementDecoder(config: config), startTime: Self.t0)
        let runtime = AgentRuntime(core: core, sink: sink, counters: nil, ticksFromReports: true, startTime: Self.t0,
                                   logger: Logger(label: "test", level: .info, handler: logs))
        runtime.start(now: Self.t0)
        // 40 s: the cat and the dog every second, a new stranger every half second.
        for i in 0..<80 {
            let t = Self.t0 + Double(i) * 0.5
            if i % 2 == 0 {
                runtime.handle(Self.report(major: 7, minor: 7, rssi: -60, at: t))
                runtime.handle(Self.report(major: 7, minor: 8, rssi: -65, at: t, address: [0xC8, 0x1F, 0x66, 0x0A, 0x1B, 0x2D]))
            }
            runtime.handle(Self.floodReport(i, at: t))
        }
        #expect(runtime.stats.refused == 80 && runtime.stats.untracked == 0 && runtime.stats.evicted == 0)
        let telemetry = try #require(sink.lastTelemetry)
        // The telemetry of 30 s in: a stranger each half second until then.
        #expect((58...62).contains(telemetry.beaconsRefused ?? 0) && telemetry.beaconsEvicted == 0,
                "\(String(describing: telemetry.beaconsRefused))")
        let warnings = logs.records(atLeast: .warning)
        #expect(warnings.count == 1, "once a minute at most: \(warnings.map(\.message))")
        #expect(warnings.first?.message.hasPrefix("beacon table full of known beacons") == true)
        let first = warnings.first?.metadata ?? [:]
        #expect(first["beacons.refused_recent"].flatMap(Int.init) ?? 0 >= 1 && first["beacons.refused_recent"] == first["beacons.refused"],
                "the first warning counts every refusal so far: \(first)")
        #expect(runtime.scanTable.sorted.map(\.label) == ["cat", "dog"])
        #expect(sink.watchedReadings >= 20, "the cat published throughout: \(sink.watchedReadings) readings")
    }

    /// The user sees the table is full: a warning with the counts on the first eviction, then
    /// a minute later and ever further apart while there were evictions since the last one (the
    /// last reporting the flood's tail), none once they stopped; through the runtime the service
    /// runs, ticking on the capture's clock.
    @Test func fullTableIsLoggedEverFurtherApart() async throws {
        try await onHeavyWorkThread {
            let logs = InMemoryLogHandler()
            let sink = CountingSink()
            let core = AgentCore(settings: AgentSettings(node: "n", maxTrackedBeacons: 512), decoder: try AdvertisementDecoder(),
                                 startTime: Self.t0)
            let runtime = AgentRuntime(core: core, sink: sink, counters: nil, ticksFromReports: true, startTime: Self.t0,
                                       logger: Logger(label: "test", level: .info, handler: logs))
            runtime.start(now: Self.t0)
            // 150 s of flood at 2,000 a second (300 k distinct advertisers) beside one beacon, then
            // 100 s of that beacon alone.
            let flood = 300_000
            for n in 0..<flood {
                let t = Self.t0 + Double(n) / Self.rate
                runtime.handle(Self.floodReport(n, at: t))
                if n % 100 == 0 { runtime.handle(Self.report(major: 1, minor: 1, rssi: -65, at: t)) }
            }
            let end = Self.t0 + Double(flood) / Self.rate
            for i in 0..<1000 { runtime.handle(Self.report(major: 1, minor: 1, rssi: -65, at: end + Double(i) * 0.1)) }

            let warnings = logs.records(atLeast: .warning)
            #expect(warnings.count == 3, "at about 1 s, 61 s and 181 s (for 61 ... 150 s): \(warnings.map(\.metadata))")
            #expect(warnings.allSatisfy { $0.message.hasPrefix("beacon table full") && $0.metadata["beacons.max"] == "512" })
            let totals = warnings.compactMap { $0.metadata["beacons.evicted"].flatMap(UInt64.init) }
            #expect(totals == totals.sorted() && totals.count == 3 && totals.last == UInt64(flood + 1 - 512))
            let recent = warnings.compactMap { $0.metadata["beacons.evicted_recent"].flatMap(UInt64.init) }
            #expect(recent.reduce(0, +) == totals.last, "each warning counts what was evicted since the one before")
            #expect(runtime.stats.evicted == UInt64(flood + 1 - 512))
            let telemetry = try #require(sink.lastTelemetry)
            #expect(telemetry.beaconsMax == 512 && telemetry.beaconsEvicted == UInt64(flood + 1 - 512))
            #expect(telemetry.beaconsInView == 1, "the flood forgotten after forget_after, the one beacon still heard")
        }
    }
}

/// Counts what the runtime sends; keeps only the latest telemetry (a flood's readings would
/// take more memory than the test needs).
final class CountingSink: AgentSink {
    /// The beacon whose readings are counted.
    private let watched: BeaconID?
    private let state = Mutex<(messages: Int, telemetry: NodeTelemetry?, watchedReadings: Int)>((0, nil, 0))

    init(watching watched: BeaconID? = nil) { self.watched = watched }

    func send(_ messages: [OutboundMessage], at ts: Double) {
        let t = messages.last { $0.topic.hasSuffix("/telemetry") }.flatMap { try? WireFormat.decode(NodeTelemetry.self, from: $0.payload) }
        let watchedReadings = watched.map { id in messages.count { $0.topic.hasSuffix("/beacons/\(id.rawValue)") } } ?? 0
        state.withLock { s in
            s.messages += messages.count
            s.watchedReadings += watchedReadings
            if let t { s.telemetry = t }
        }
    }

    var lastTelemetry: NodeTelemetry? { state.withLock { $0.telemetry } }
    /// Readings of the watched beacon sent so far.
    var watchedReadings: Int { state.withLock { $0.watchedReadings } }
    var dropped: UInt64 { 0 }
    var reconnects: UInt64 { 0 }
    func shutdown(final: OutboundMessage?, at ts: Double) async {}
}
