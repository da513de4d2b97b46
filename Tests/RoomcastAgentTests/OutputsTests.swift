import Foundation
import Shared
import Testing
@testable import RoomcastAgent
import RoomcastCLI

func sampleReading(_ id: BeaconID = tag, distance: Double = 2.5, name: String? = "Keys") -> BeaconReading {
    var r = BeaconReading(id: id, node: "kitchen-pi", ts: 100, seq: 1, rssi: -70, rssiFiltered: -69.5, power: -59,
                          distance: distance, proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
    r.name = name
    r.interval = 0.1
    return r
}

@Suite struct CompatibilityOutputsTests {
    @Test func offByDefault() {
        #expect(CompatibilityOutputs(room: "kitchen").messages(for: sampleReading()).isEmpty)
    }

    @Test func mqttRoomAndESPresenseShapes() throws {
        let out = CompatibilityOutputs(room: "kitchen", enabled: CompatibilityOutput.all).messages(for: sampleReading())
        let room = try #require(out.first { $0.topic == "room_presence/kitchen" })
        let r = try #require(try JSONSerialization.jsonObject(with: Data(room.payload)) as? [String: Any])
        #expect(r["id"] as? String == tag.rawValue && r["name"] as? String == "Keys" && r["distance"] as? Double == 2.5)
        // ESPresense's own spelling of the id (topics match case-sensitively), and its raw level.
        let espresenseID = "iBeacon:" + tag.rawValue.dropFirst("ibeacon:".count)
        let esp = try #require(out.first { $0.topic == "espresense/devices/\(espresenseID)/kitchen" })
        let e = try #require(try JSONSerialization.jsonObject(with: Data(esp.payload)) as? [String: Any])
        #expect(e["id"] as? String == espresenseID)
        #expect(e["rssi"] as? Int == -70)
        #expect(e["rssi@1m"] as? Int == -59)
        #expect(e["mac"] as? String == "aabbccddeeff")
        // ESPresense's name for the mean interval (ms), which ESPresense's own tools read.
        #expect(e["int"] as? Int == 100 && e["interval"] == nil)
        // Marked as this node's, so an aggregator reading ESPresense topics does not count it twice.
        #expect(e["roomcast_node"] as? String == "kitchen-pi")
    }
}

extension CompatibilityOutputsTests {
    /// A reading of a packet without a level goes out on Roomcast's topic (heard, not ranged), not
    /// as an ESPresense report, whose `rssi` is the packet's level.
    @Test func aPacketWithoutALevelIsNoESPresenseReport() {
        var r = sampleReading()
        r.rssi = -127
        r.proximity = .unknown
        let out = CompatibilityOutputs(room: "kitchen", enabled: CompatibilityOutput.all).messages(for: r)
        #expect(out.map(\.topic) == ["room_presence/kitchen"])
    }

    /// Each id in the form an ESPresense node gives it (a device listed by its address as the bare
    /// address); the aggregator's ESPresense input reads the iBeacon, AltBeacon, Eddystone and
    /// address ones back as the same beacon.
    @Test(arguments: [
        ("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23", "iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23"),
        ("altbeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2", "altBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2"),
        ("eddystone:edd1ebeac04e5defa017-0bdb87539b67", "eddy:edd1ebeac04e5defa017-0bdb87539b67"),
        ("irk:alice-phone", "irk:alice-phone"),
        ("mac:a4c138aabbcc", "a4c138aabbcc"),
    ])
    func idsInESPresensesSpelling(_ ours: String, _ theirs: String) throws {
        #expect(CompatibilityOutput.espresenseID(try #require(BeaconID(ours))) == theirs)
    }
}

@Suite struct ScanTableTests {
    @Test func nearestFirstAndExpiry() {
        var t = ScanTable()
        let far = BeaconID("mac:a4c138aabbcc")!
        t.update(sampleReading(far, distance: 7, name: nil))
        t.update(sampleReading(tag, distance: 0.4, name: "Keys"))
        #expect(t.sorted.map(\.label) == ["Keys", far.rawValue])
        let text = t.render(now: 101)
        let lines = text.split(separator: "\n")
        #expect(lines[0].hasPrefix("BEACON"))
        #expect(lines[1].hasPrefix("Keys") && lines[1].contains("0.40m") && lines[1].contains("1s"))
        #expect(ScanTable.abbreviate("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23", to: 20) == "ibeacon:e2…e0-675-23")
        t.expire(now: 200, forgetAfter: 30)
        #expect(t.render(now: 200).contains("(no beacons in view)"))
    }

    /// Every row fits the terminal it is drawn for: at 100 columns it was 97 wide, so the view
    /// took that width on every terminal and an 80-column console wrapped each row.
    @Test(arguments: [80, 100, 160])
    func rowsFitTheTerminal(_ width: Int) {
        var t = ScanTable()
        t.update(sampleReading(BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23")!, distance: 12.25, name: nil))
        let lines = t.render(now: 101, width: width).split(separator: "\n")
        #expect(lines.allSatisfy { $0.count <= width }, "\(lines.map(\.count)) for \(width)")
        #expect(lines[1].contains("675-23"))
        // Not told a width (piped, no COLUMNS): a console's 80.
        #expect(t.render(now: 101).split(separator: "\n").allSatisfy { $0.count <= 80 })
    }

    /// Names in wide characters and emoji take two columns each: rows are padded and shortened
    /// in columns, so they fit the terminal and line up as Latin names do.
    @Test func wideNamesFitTheTerminalInColumns() {
        var t = ScanTable()
        t.update(sampleReading(tag, distance: 1, name: "客厅温度计"))
        t.update(sampleReading(BeaconID("mac:a4c138aabbcc")!, distance: 2, name: "Katze 🐈 im Wohnzimmer mit einem sehr langen Namen 客厅温度计客厅温度计"))
        t.update(sampleReading(BeaconID("mac:a4c138aabbcd")!, distance: 3, name: "Keys"))
        let lines = t.render(now: 101, width: 80).split(separator: "\n").map(String.init)
        #expect(lines.allSatisfy { TerminalWidth.of($0) <= 80 }, "\(lines.map(TerminalWidth.of))")
        // The columns after the name start at one place on every row.
        let kindColumns = lines.dropFirst().map { line in TerminalWidth.of(String(line[..<line.range(of: " ibeacon")!.lowerBound])) }
        #expect(Set(kindColumns).count == 1, "\(kindColumns)")
        #expect(TerminalWidth.of("客厅") == 4 && TerminalWidth.of("🐈") == 2 && TerminalWidth.of("e\u{301}") == 1)
        // One glyph of several scalars: a family joined by zero-width joiners, a flag, a heart as emoji.
        #expect(TerminalWidth.of("👨\u{200D}👩\u{200D}👧") == 2 && TerminalWidth.of("🇫🇷") == 2 && TerminalWidth.of("❤\u{FE0F}") == 2)
        #expect(TerminalWidth.of("🐈\u{200D}⬛ tag") == 6)
    }

    /// Piped, the scan view has no terminal to ask: `COLUMNS`, else 80.
    @Test func theWidthWithoutATerminal() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        #expect(TerminalScreen.columns(of: ends[1], environment: ["COLUMNS": "132"]) == 132)
        #expect(TerminalScreen.columns(of: ends[1], environment: ["COLUMNS": "wide"]) == 80)
        #expect(TerminalScreen.columns(of: ends[1], environment: [:]) == 80)
    }
}
