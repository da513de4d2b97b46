import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Shared
import TestSupport
import Testing
@testable import RoomcastSimulation
import RoomcastAgent
import RoomcastAggregator
import RoomcastConfig
import RoomcastYAML

/// The simulator's per-node btsnoop captures and configs, read back the way the system reads them.
@Suite("Simulation captures")
struct SimulationCaptureTests {
    /// A short house scenario whose phones rotate their address every 30 s, so 90 s see several.
    static func generate(seed: UInt64 = 3, duration: Double = 90, plan: FloorPlan = .house) -> GeneratedScenario {
        var s = SimulationSettings(plan: plan, seed: seed, duration: duration)
        s.phones = 2
        s.addressRotation = 30
        return ScenarioSimulator(settings: s).run()
    }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-sim-\(UUID().uuidString)")
    }

    /// The tracking config an agent of `node` builds from the written agent.yaml.
    static func agentTracking(_ dir: URL, node: String) throws -> AdvertisingConfig {
        var overrides = Overrides()
        overrides.set("node", to: node, from: "--node")
        let text = String(decoding: try Data(contentsOf: dir.appendingPathComponent("agent.yaml")), as: UTF8.self)
        let agent = try ConfigLoader.parse(AgentConfig.self, yaml: text, overrides: overrides)
        return agent.advertising
    }

    @Test("replaying every node's capture with agent.yaml gives raw.jsonl's tracked packets, phones resolved across rotations")
    func captureRoundTrip() async throws {
        let g = Self.generate()
        let dir = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try DirectoryScenarioWriter(directory: dir).write(g)

        let scenario = try Scenario.load(from: dir)
        let nodes = scenario.layout.nodes.map(\.name)
        let tracking = try Self.agentTracking(dir, node: nodes[0])
        #expect(tracking.irks.map(\.name) == ["phone-0", "phone-1"])
        let result = try await withTimeout(.seconds(300), "capture replay") {
            try await CaptureReplay.run(directory: dir, nodes: nodes, config: tracking)
        }

        let tracked = Set(scenario.beacons.map(\.id))
        let expected = scenario.packets.filter { tracked.contains($0.id) }
        #expect(expected.count > 3000)
        #expect(result.packets.count == expected.count)
        #expect(result.packets == expected)
        if result.packets != expected, let i = zip(result.packets, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            Issue.record("first difference at \(i): \(result.packets[i]) vs \(expected[i])")
        }
        // Untracked devices are in the captures too, and stay untracked.
        var strangers: [String: Int] = [:]
        for p in scenario.packets where !tracked.contains(p.id) { strangers[p.node, default: 0] += 1 }
        #expect(!strangers.isEmpty)
        #expect(result.untracked == strangers)
        // Among them the neighbour's phone, rotating under a key nobody configured.
        let neighbour = scenario.packets.filter { !tracked.contains($0.id) && $0.mac != nil }
        #expect(Set(neighbour.compactMap(\.mac)).count >= 3)
        #expect(result.withoutRSSI.isEmpty)

        // The phones really rotate: several resolvable addresses each, all resolving to one id.
        for phone in ["phone-0", "phone-1"] {
            let macs = Set(result.packets.filter { $0.id == BeaconID.irk(phone) }.compactMap(\.mac))
            #expect(macs.count >= 3, "\(phone): \(macs)")
            if phone == "phone-0", let air = g.advertisers[BeaconID.irk(phone)!] {
                // The iPhone's payload changes with its address, so only the key links them.
                let payloads = Set(macs.compactMap { Hex.decode($0) }.map { air.data(from: $0) })
                #expect(payloads.count == macs.count)
            }
            #expect(macs.allSatisfy { BLEAddress($0)?.randomKind == .resolvablePrivate })
        }
    }

    @Test("without the IRKs the phones' packets are untracked")
    func phonesNeedTheirKeys() async throws {
        let g = Self.generate(duration: 40, plan: .flat)
        let dir = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try BTSnoopScenarioWriter(directory: dir).write(g)
        let nodes = g.scenario.layout.nodes.map(\.name)
        let result = try await withTimeout(.seconds(300), "capture replay") {
            try await CaptureReplay.run(directory: dir, nodes: nodes, config: AdvertisingConfig())
        }
        let phones = g.scenario.packets.filter { $0.id.scheme == "irk" }.count
        let strangers = g.scenario.packets.filter { $0.id.scheme == "mac" }.count
        #expect(g.irks.map(\.name) == ["phone-0", "phone-1"])
        #expect(phones > 0)
        #expect(!result.packets.contains { $0.id.scheme == "irk" })
        #expect(result.untracked.values.reduce(0, +) == phones + strangers)
    }

    @Test("a packet without an advertiser, or a phone packet without its address, is refused")
    func unwritablePackets() throws {
        var g = Self.generate(duration: 10, plan: .flat)
        let tag = try #require(g.scenario.beacons.first { $0.id.scheme == "ibeacon" }).id
        let phone = try #require(g.scenario.packets.first { $0.id.scheme == "irk" })
        var withoutMac = phone
        withoutMac.mac = nil
        #expect(throws: BTSnoopScenarioWriter.UnwritablePacket.self) {
            try BTSnoopScenarioWriter.event(for: withoutMac, advertisers: g.advertisers)
        }
        g.advertisers[tag] = nil
        let dir = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(throws: BTSnoopScenarioWriter.UnwritablePacket.self) { try BTSnoopScenarioWriter(directory: dir).write(g) }
    }

    @Test("captures are byte-identical for a seed and differ for another")
    func capturesAreDeterministic() throws {
        func captures(seed: UInt64) throws -> [String: Data] {
            let dir = Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let g = Self.generate(seed: seed, duration: 30, plan: .flat)
            try BTSnoopScenarioWriter(directory: dir).write(g)
            try ScenarioConfigWriter(directory: dir).write(g)
            var out: [String: Data] = [:]
            for n in g.scenario.layout.nodes {
                out[n.name] = try Data(contentsOf: dir.appendingPathComponent("nodes/\(n.name).btsnoop"))
            }
            out["agent.yaml"] = try Data(contentsOf: dir.appendingPathComponent("agent.yaml"))
            return out
        }
        let a = try captures(seed: 11), b = try captures(seed: 11), c = try captures(seed: 12)
        #expect(a.count == FloorPlan.flat.rooms.count + 1)
        #expect(a == b)
        #expect(a["agent.yaml"] != c["agent.yaml"])
        #expect(a["hall-pi"] != c["hall-pi"])
    }

    @Test("each capture record is an LE Advertising Report with the packet's time, RSSI, address and data")
    func captureRecords() throws {
        let g = Self.generate(duration: 20, plan: .flat)
        let dir = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try BTSnoopScenarioWriter(directory: dir).write(g)
        let node = "kitchen-pi"
        let packets = g.scenario.packets.filter { $0.node == node }
        let reader = try BTSnoopReader(path: dir.appendingPathComponent("nodes/\(node).btsnoop").path)
        defer { reader.shutdown() }
        var index = 0
        while let record = try reader.next() {
            try #require(index < packets.count)
            let p = packets[index], air = try #require(g.advertisers[p.id])
            #expect(record.type == .event && record.direction == .controllerToHost)
            #expect(abs(record.timestamp - p.t) < 1e-6)
            var r = record.reader
            guard case let .leMeta(.advertisingReports(reports)) = try HCIEvent.decode(from: &r, timestamp: record.timestamp) else {
                Issue.record("record \(index) is not an LE Advertising Report")
                return
            }
            let report = try #require(reports.count == 1 ? reports[0] : nil)
            // #require: one wrong record says enough.
            try #require(report.rssi == p.rssi, "record \(index)")
            try #require(report.data == air.data(from: report.address), "record \(index)")
            try #require(report.addressType.rawValue == air.addressType, "record \(index)")
            try #require(report.eventType.legacyCode == air.eventType, "record \(index)")
            try #require(report.addressString == (p.mac ?? BLEAddress(air.address(for: nil) ?? [])?.description), "record \(index)")
            index += 1
        }
        #expect(index == packets.count)
    }

    @Test("btmon -r reads every record as the advertisement it is", .requiresBtmon)
    func btmonReadsCaptures() async throws {
        let btmon = try RequiredTool.btmon.require()
        let g = Self.generate(duration: 20, plan: .flat)
        let dir = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try BTSnoopScenarioWriter(directory: dir).write(g)
        let node = "hall-pi"
        let process = try ChildProcess(btmon, ["-r", dir.appendingPathComponent("nodes/\(node).btsnoop").path],
                                       stdoutPath: dir.appendingPathComponent("btmon.out").path,
                                       stderrPath: dir.appendingPathComponent("btmon.err").path)
        let status = try await withTimeout(.seconds(30), "btmon -r") { await process.waitForExit() }
        #expect(status == 0, "\(process.stderr)")
        let text = process.stdout
        func count(_ s: String) -> Int { text.components(separatedBy: s).count - 1 }
        let packets = g.scenario.packets.filter { $0.node == node }
        #expect(packets.count > 100)
        #expect(count("LE Advertising Report (0x02)") == packets.count)
        #expect(count("Type: iBeacon (2)") == packets.filter { $0.id.scheme == "ibeacon" }.count)
        #expect(count("Service Data: Google (0xfeaa)") == packets.filter { $0.id.scheme == "eddystone" }.count)
        #expect(count("(Resolvable)") == packets.filter { $0.mac != nil }.count)
        // btmon prints every RSSI it decoded.
        let rssis = text.split(separator: "\n").compactMap { line -> Int? in
            guard let r = line.range(of: "RSSI: ") else { return nil }
            return Int(line[r.upperBound...].prefix { $0 == "-" || $0.isNumber })
        }
        #expect(rssis == packets.map(\.rssi))
    }

    // Core 5.4 Vol 3 Part H §D.7 sample: IRK ec0234a3 57c8ad05 341010a6 0a397d9b,
    // prand 0x708194 → hash 0x0dfbaa, so the address is 70:81:94:0d:fb:aa.
    @Test("resolvable private addresses follow the Core sample and resolve with their key")
    func resolvableAddress() throws {
        let irk = try #require(IdentityResolvingKey(name: "sample", hex: "ec0234a357c8ad05341010a60a397d9b"))
        #expect(ResolvablePrivateAddress.make(irk: irk, random: 0x308194) == [0x70, 0x81, 0x94, 0x0D, 0xFB, 0xAA])
        let resolver = AddressResolver(keys: [irk])
        for random: UInt32 in [0, 1, 0x3F_FFFF, 0xFFFF_FFFF, 0x12_3456] {
            let bytes = try #require(ResolvablePrivateAddress.make(irk: irk, random: random))
            let address = try #require(BLEAddress(bytes))
            #expect(address.randomKind == .resolvablePrivate)
            #expect(bytes[0..<3] != [0x40, 0x00, 0x00] && bytes[0..<3] != [0x7F, 0xFF, 0xFF])
            #expect(resolver.resolve(address, type: .random) == irk)
        }
    }

    // An iBeacon report as a controller sends it: LE Meta, subevent 0x02, one report,
    // ADV_NONCONN_IND, random address C2:33:12:38:5A:9C (little-endian on the wire),
    // 30 AD bytes (flags, Apple 02 15, uuid 11…11, major 1, minor 2, power -59), RSSI -70.
    @Test("the LE Advertising Report encoder matches the spec layout byte for byte")
    func reportGoldenBytes() throws {
        let ad = AdvertisingPayload.iBeacon(uuid: [UInt8](repeating: 0x11, count: 16), major: 1, minor: 2, power: -59)
        let bytes = AdvertisingReportEvent.encode(eventType: 0x03, addressType: 0x01,
                                                  address: [0xC2, 0x33, 0x12, 0x38, 0x5A, 0x9C], data: ad, rssi: -70)
        let expected: [UInt8] = [0x3E, 0x2A, 0x02, 0x01, 0x03, 0x01, 0x9C, 0x5A, 0x38, 0x12, 0x33, 0xC2, 0x1E,
                                 0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]
            + [UInt8](repeating: 0x11, count: 16) + [0x00, 0x01, 0x00, 0x02, 0xC5, 0xBA]
        #expect(bytes == expected)
        // Over-long data is cut to a legacy PDU's 31 bytes; RSSI stays in range.
        let long = AdvertisingReportEvent.encode(eventType: 0, addressType: 0, address: [1, 2, 3, 4, 5, 6],
                                                 data: [UInt8](repeating: 0, count: 40), rssi: 200)
        #expect(long.count == 2 + 12 + 31 && long[1] == 43 && long[12] == 31 && long.last == 20)
    }

    @Test("every simulated payload decodes to the id its packets carry")
    func payloadsDecode() throws {
        let g = Self.generate(duration: 10)
        let decoder = try AdvertisementDecoder(config: g.advertisingConfig)
        for (id, air) in g.advertisers {
            let mac = g.scenario.packets.first { $0.id == id }?.mac
            let bytes = try #require(air.address(for: mac), "\(id)")
            let address = try #require(BLEAddress(bytes))
            let decoded = decoder.decode(air.data(from: bytes), address: address, addressType: BLEAddressType(hci: air.addressType))
            #expect(decoded.data.issues.isEmpty, "\(id): \(decoded.data.issues)")
            if id.scheme == "mac" {
                #expect(decoded.identity == nil, "\(id)")
            } else if mac != nil || id.scheme != "irk" {
                #expect(decoded.identity?.id == id)
            }
            if let power = g.scenario.beacon(id)?.measuredPower {
                #expect(decoded.identity?.referencePower == power, "\(id)")
            }
        }
    }

    @Test("site.yaml loads as the aggregator's config: rooms, nodes at absolute height, tracked beacons")
    func siteConfig() throws {
        let g = Self.generate(duration: 10)
        let text = ScenarioConfigWriter.siteYAML(g)
        let config = try ConfigLoader.parse(AggregatorConfig.self, yaml: text)
        #expect(config.site.rooms == g.scenario.layout.siteModel().rooms)
        #expect(config.site.nodes.count == g.scenario.layout.nodes.count)
        for (n, layout) in zip(config.site.nodes, g.scenario.layout.nodes) {
            #expect(n.name == layout.name && n.room == layout.room && n.rxAdjust == 0)
            let z = try #require(n.position?.last)
            #expect(abs(z - (Double(layout.floor) * 3 + layout.z)) < 1e-9)
        }
        #expect(config.site.beacons.map(\.id) == g.scenario.beacons.map(\.id))
        #expect(config.site.beacons.map(\.power) == g.scenario.beacons.map(\.measuredPower))
    }
}
