import Foundation
import Shared
import Testing

/// Inputs on which the `wire` fuzz harness (Sources/Fuzz/WireHarness.swift) trapped, replayed
/// through the same decoders and round trips. Each fixture is named for what it broke.
@Suite struct FuzzRegressionTests {
    static let directory = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/fuzz/wire")

    /// What each fixture is: the decoder it must get through. A fixture that stopped decoding
    /// would otherwise replay nothing and pass.
    enum Kind: String, Sendable { case reading, logLine }

    static let fixtures: [String: Kind] = [
        "logline-ts-beyond-int64-ms.json": .logLine,
        "reading-seq-above-int64.json": .reading,
    ]

    @Test func everyFixtureIsInTheTable() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory.path).sorted()
        #expect(files == Self.fixtures.keys.sorted())
    }

    @Test(arguments: fixtures.keys.sorted())
    func wireInputRoundTrips(_ name: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.directory.appendingPathComponent(name)))
        switch try #require(Self.fixtures[name]) {
        case .reading:
            let reading = try WireFormat.decode(BeaconReading.self, from: bytes)
            #expect(try WireFormat.decode(BeaconReading.self, from: WireFormat.encode(reading)) == reading)
            #expect(try WireFormat.decode(BeaconReading.self, from: reading.fastJSON()) == reading)
            #expect(try BeaconReading.decodeWire(bytes) == reading)
        case .logLine:
            let line = try MessageLogLine.decode(String(decoding: bytes, as: UTF8.self))
            let again = try MessageLogLine.decode(line.encoded())
            #expect(again.topic == line.topic)
            #expect(again.retain == line.retain)
            #expect((again.ts - line.ts).magnitude <= 0.0005 + line.ts.magnitude * 1e-12)
        }
    }

    /// The first crash: `ts` of 1.7e29 s made `encoded()` convert 1.7e32 ms to Int64 and trap.
    @Test func hugeTimestampEncodes() throws {
        let line = try MessageLogLine.decode(#"{"payload":"online","topic":"t","ts":173281844674407370955161580000}"#)
        #expect(line.ts > 1.7e29 && line.ts < 1.8e29)
        #expect(try MessageLogLine.decode(line.encoded()).ts == line.ts)
    }

    /// The second: `fastJSON()` wrote a `seq` above Int64.max as a negative number, which no
    /// longer decodes as UInt64, so the aggregator would drop every reading of that node.
    @Test(arguments: [UInt64.max, UInt64(Int64.max) + 1, UInt64(Int64.max), 0])
    func fastJSONKeepsLargeSequenceNumbers(_ seq: UInt64) throws {
        let r = BeaconReading(id: BeaconID("mac:001122334455")!, node: "n", ts: 1, seq: seq, rssi: -60, rssiFiltered: -60,
                              power: -59, distance: 1, proximity: .near, kind: .iBeacon, mac: "00:11:22:33:44:55")
        #expect(try WireFormat.decode(BeaconReading.self, from: r.fastJSON()).seq == seq)
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
}
