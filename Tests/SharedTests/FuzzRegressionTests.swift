import Foundation
import Shared
import Testing

/// Inputs on which the `wire` fuzz harness (Sources/Fuzz/WireHarness.swift) trapped, replayed
/// through the same decoders and round trips. Each fixture is named for what it broke.
@Suite struct FuzzRegressionTests {
    static let directory = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/fuzz/wire")

    static var inputs: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    @Test func fixturesArePresent() {
        #expect(Self.inputs.contains("logline-ts-beyond-int64-ms.json"))
    }

    @Test(arguments: inputs)
    func wireInputRoundTrips(_ name: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.directory.appendingPathComponent(name)))
        try roundTrip(BeaconReading.self, bytes)
        try roundTrip(PresenceDecision.self, bytes)
        try roundTrip(NodeTelemetry.self, bytes)
        try roundTrip(RoomOccupancy.self, bytes)
        if let line = try? MessageLogLine.decode(String(decoding: bytes, as: UTF8.self)) {
            let again = try MessageLogLine.decode(line.encoded())
            #expect(again.topic == line.topic)
            #expect((again.ts - line.ts).magnitude <= 0.0005 + line.ts.magnitude * 1e-12)
        }
    }

    /// The first crash: `ts` of 1.7e29 s made `encoded()` convert 1.7e32 ms to Int64 and trap.
    @Test func hugeTimestampEncodes() throws {
        let line = try MessageLogLine.decode(#"{"payload":"online","topic":"t","ts":173281844674407370955161580000}"#)
        #expect(line.ts > 1.7e29 && line.ts < 1.8e29)
        #expect(try MessageLogLine.decode(line.encoded()).ts == line.ts)
    }

    @Test(arguments: [
        (1732880000.123, #""ts":1732880000.123"#),
        (1732880000, #""ts":1732880000"#),
        (-0.5, #""ts":-0.5"#),
        (-1.25, #""ts":-1.25"#),
        (1e300, #""ts":1e+300"#),
        (Double.greatestFiniteMagnitude, #""ts":1.7976931348623157e+308"#),
    ])
    func timestampText(_ ts: Double, _ expected: String) throws {
        let text = MessageLogLine(ts: ts, topic: "t", payload: []).encoded()
        #expect(text.contains(expected + "}"), "\(text)")
        #expect(try MessageLogLine.decode(text).ts == ts)
    }

    func roundTrip<T: Codable & Equatable>(_ type: T.Type, _ bytes: [UInt8]) throws {
        guard let value = try? WireFormat.decode(type, from: bytes) else { return }
        #expect(try WireFormat.decode(type, from: WireFormat.encode(value)) == value)
    }
}
