import Testing
import RoomcastFusion
import Shared
@testable import RoomcastAggregator

/// Two devices that advertise one id (tags with the factory's iBeacon UUID, major and minor) are
/// one beacon to fusion, whose room then follows whichever is heard better: the user is told,
/// with the addresses and the nodes that hear them. A transmitter that changes its address is
/// one device, and is not named.
@Suite struct SharedIDTests {
    static let topics = Topics()

    static func feed(_ core: inout AggregatorCore<StrongestLatest>, _ node: String, mac: String, at t: Double,
                     seq: UInt64) throws -> InputIntake.RejectionDetail? {
        var r = reading(node, rssi: -60, ts: t, seq: seq)
        r.mac = mac
        return try core.handle(topic: topics.nodeBeacon(node, cat), payload: WireFormat.encode(r), now: t).rejection
    }

    @Test func twoTransmittersOfOneIdAreNamedOnce() throws {
        var core = makeCore(discovery: false)
        _ = try core.start(now: 100)
        var notes: [InputIntake.RejectionDetail] = []
        for i in 0..<120 {
            let t = 100 + Double(i)
            // One tag in the kitchen, its twin in the office.
            if let n = try Self.feed(&core, "kitchen-pi", mac: "C0:01:02:03:04:05", at: t, seq: UInt64(i + 1)) { notes.append(n) }
            if let n = try Self.feed(&core, "office-pi", mac: "c0:aa:bb:cc:dd:ee", at: t + 0.5, seq: UInt64(i + 1)) { notes.append(n) }
        }
        #expect(notes.map(\.reason) == [.sharedID], "\(notes)")
        let message = try #require(notes.first?.message)
        #expect(message.contains("C0:01:02:03:04:05 at kitchen-pi") && message.contains("c0:aa:bb:cc:dd:ee at office-pi"), "\(message)")
        #expect(core.sharedIDBeacons == 1)
        #expect(core.intake.rejected[.sharedID] == 1)

        // The twin switched off: a minute later the beacon is one transmitter again.
        for i in 120..<200 {
            let t = 100 + Double(i)
            _ = try Self.feed(&core, "kitchen-pi", mac: "c0:01:02:03:04:05", at: t, seq: UInt64(i + 1))
        }
        #expect(core.sharedIDBeacons == 0)
    }

    /// A phone's beacon app changes its address every few minutes; one node hears the old and the
    /// new address together for a second or two, never for long.
    @Test func aTransmitterThatChangesItsAddressIsNotNamed() throws {
        var core = makeCore(discovery: false)
        _ = try core.start(now: 100)
        var notes: [InputIntake.RejectionDetail] = []
        for i in 0..<600 {
            let t = 100 + Double(i)
            let mac = "4a:00:00:00:00:0\(i / 120)"
            if let n = try Self.feed(&core, "kitchen-pi", mac: mac, at: t, seq: UInt64(2 * i + 1)) { notes.append(n) }
            // Spelt in capitals now and then: the same transmitter.
            if i % 7 == 0, let n = try Self.feed(&core, "kitchen-pi", mac: mac.uppercased(), at: t + 0.2,
                                                  seq: UInt64(2 * i + 1)) { notes.append(n) }
            // The other node still says the address before for two seconds.
            let lagging = "4a:00:00:00:00:0\(max(0, i - 2) / 120)"
            if let n = try Self.feed(&core, "office-pi", mac: lagging, at: t + 0.5, seq: UInt64(2 * i + 2)) { notes.append(n) }
        }
        #expect(notes.isEmpty, "\(notes)")
        #expect(core.sharedIDBeacons == 0)
    }

    /// The wall clock steps back a minute and a half while a phone changes its address: the old
    /// address is not heard "now" for as long, nor taken with the new one for two transmitters.
    @Test func aClockSteppedBackMakesNoSecondTransmitter() throws {
        var core = makeCore(discovery: false)
        _ = try core.start(now: 100)
        var notes: [InputIntake.RejectionDetail] = []
        var seq: UInt64 = 0
        for i in 0..<60 {
            seq += 1
            if let n = try Self.feed(&core, "kitchen-pi", mac: "4a:00:00:00:00:01", at: 100 + Double(i), seq: seq) { notes.append(n) }
        }
        core.clockSteppedBack(by: 90)
        for i in 0..<120 {
            seq += 1
            if let n = try Self.feed(&core, "kitchen-pi", mac: "4a:00:00:00:00:02", at: 70 + Double(i), seq: seq) { notes.append(n) }
        }
        #expect(notes.isEmpty, "\(notes)")
        #expect(core.sharedIDBeacons == 0)
    }

    /// Twin tags heard by ESPresense nodes are named as well.
    @Test func twinsHeardByESPresenseNodesAreNamed() throws {
        let topics = Topics()
        var core = AggregatorCore(engine: FusionEngine(site: SiteModel()), site: SiteModel(), topics: topics, discovery: nil)
        core.acceptsESPresense = true
        _ = try core.start(now: 100)
        var notes: [InputIntake.RejectionDetail] = []
        for i in 0..<60 {
            let t = 100 + Double(i)
            for (room, mac) in [("kitchen", "c00102030405"), ("office", "c0aabbccddee")] {
                let payload = Array(#"{"id":"iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45","rssi":-60,"rssi@1m":-59,"distance":1.2,"mac":"\#(mac)"}"#.utf8)
                if let n = try core.handle(topic: "espresense/devices/iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45/\(room)",
                                           payload: payload, now: t).rejection { notes.append(n) }
            }
        }
        #expect(notes.filter { $0.reason == .sharedID }.count == 1, "\(notes)")
        #expect(notes.first { $0.reason == .sharedID }?.message.contains("c0:01:02:03:04:05 at kitchen") == true)
    }
}
