import Foundation
import Shared
import Testing
import TestSupport
@testable import RoomcastAgent

@Suite struct DecodeCommandTests {
    // ble_monitor-style iBeacon: H4 event, LE Advertising Report, public address a1:b2:c3:d4:e5:f6 reversed on the wire.
    static let event = "043e2a02010000a1b2c3d4e5f61e0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e002a30017c5c8"
    static let id = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23"

    @Test(arguments: [
        (event, "hci-event-h4"),
        (String(event.dropFirst(2)), "hci-event"),
        (String(event.dropFirst(8)), "le-advertising-report"),
        ("0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e002a30017c5", "ad-structures"),
    ])
    func acceptsEveryLayer(_ hex: String, _ layer: String) throws {
        let out = try DecodeCommand.decode(hex)
        #expect(out.input == layer)
        let report = try #require(out.reports.first)
        #expect(report.beacons.first?.id?.rawValue == Self.id)
        #expect(report.beacons.first?.major == 675 && report.beacons.first?.minor == 23)
        if layer != "ad-structures" {
            #expect(report.address == "f6:e5:d4:c3:b2:a1")
            #expect(report.rssi == -56)
        }
        let json = try DecodeCommand.json(out)
        #expect(json.contains("\"address_type\"") == (layer != "ad-structures"))
    }

    @Test(arguments: ["zz", "", "0"])
    func rejectsWhatIsNotHex(_ hex: String) {
        #expect(throws: DecodeCommand.Failure.self) { try DecodeCommand.decode(hex) }
    }

    @Test func rejectsBytesThatAreNothing() {
        #expect(throws: DecodeCommand.Failure.self) { try DecodeCommand.decode("00") }
    }

    @Test func theExecutableExits65OnBadInputAndZeroOnGood() async throws {
        let bad = try await BuiltExecutable.run("edge-agent", ["decode", "zz"])
        #expect(bad.status == 65)
        #expect(bad.stderr.contains("not hex"))
        let good = try await BuiltExecutable.run("edge-agent", ["decode", Self.event])
        #expect(good.status == 0)
        #expect(good.stdout.contains(Self.id))
    }

    @Test func dryRunReplayNeedsNoConfigAndIsDeterministic() async throws {
        let path = try ReplayServiceTests.capture()
        let args = ["run", "--node", "hall-pi", "--source", "btsnoop:\(path)", "--speed", "max", "--dry-run"]
        let a = try await BuiltExecutable.run("edge-agent", args)
        let b = try await BuiltExecutable.run("edge-agent", args)
        #expect(a.status == 0, "\(a.stderr)")
        #expect(a.stdout == b.stdout)
        let lines = a.stdout.split(separator: "\n")
        #expect(lines.count > 20)
        #expect(lines.last?.contains("\"offline\"") == true, "the end of the file shuts down gracefully")
        let missing = try await BuiltExecutable.run("edge-agent", ["run", "--node", "x", "--source", "btsnoop:/nonexistent", "--dry-run"])
        #expect(missing.status == 65, "an unreadable capture is bad input data: \(missing.stderr)")
        let usage = try await BuiltExecutable.run("edge-agent", ["run", "--frobnicate"])
        #expect(usage.status == 64)
        let config = try await BuiltExecutable.run("edge-agent", ["run", "--node", "a/b", "--dry-run"])
        #expect(config.status == 78)
        #expect(config.stderr.contains("node: must not contain '/'"))
    }
}
