import Foundation
import RoomcastAggregator
import Shared
import Testing

/// Inputs on which the aggregator's fuzz harnesses (Sources/Fuzz) trapped, replayed through the
/// same decoder and checks. Each fixture is named for what it broke (Fixtures/README.md).
@Suite struct FuzzRegressionTests {
    static let directory = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/fuzz")

    /// Every fixture, by harness; a fixture missing from the table would replay nothing.
    static let espresense = ["rssi-at-1m-beyond-int.bin"]

    @Test func everyFixtureIsInTheTable() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory.appendingPathComponent("espresense").path)
        #expect(files.sorted() == Self.espresense.sorted())
    }

    /// As the `espresense` harness: a reading is within the intake's ranges and the intake
    /// accepts it unchanged on its own topic.
    @Test(arguments: espresense)
    func espresenseInputGivesAReadingTheIntakeAccepts(_ name: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.directory.appendingPathComponent("espresense/\(name)")))
        let nul = try #require(bytes.firstIndex(of: 0))
        let topic = String(decoding: bytes[..<nul], as: UTF8.self)
        var input = ESPresenseInput()
        let reading = try input.reading(topic: topic, payload: Array(bytes[(nul + 1)...]), now: 1_732_880_000).get()
        #expect((-127...20).contains(reading.power))
        var intake = InputIntake(topics: Topics())
        let back = intake.accept(topic: Topics().nodeBeacon(reading.node, reading.id), payload: try WireFormat.encode(reading))
        #expect(back == .success(.reading(reading)))
    }

    /// The first crash: `rssi@1m` was converted to Int before its range check, so a value beyond
    /// Int trapped. Out of range it now falls back to the iBeacon default like any other bad value.
    @Test(arguments: [
        ("-5.3e88", -59), ("1e300", -59), ("-127.4", -127), ("-127.6", -59), ("20.4", 20), ("21", -59), ("-62.4", -62),
    ])
    func rssiAtOneMetreIsRangeCheckedBeforeConversion(_ value: String, _ power: Int) throws {
        var input = ESPresenseInput()
        let payload = Array(#"{"rssi":-65,"distance":2.1,"rssi@1m":\#(value)}"#.utf8)
        let reading = try input.reading(topic: "espresense/devices/c81f660a1b2c/kitchen-pi", payload: payload, now: 10).get()
        #expect(reading.power == power)
    }
}
