import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Shared
import Testing
@testable import RoomcastAgent

/// The whole agent over a btsnoop replay at max speed into a dry-run sink.
@Suite struct ReplayServiceTests {
    static func capture() throws -> String {
        var adverts: [CaptureBuilder.Advert] = []
        for i in 0..<200 {
            let t = 1_700_000_000 + Double(i) * 0.1
            adverts.append(.init(t: t, address: [0xC8, 0x1F, 0x66, 0x0A, 0x1B, 0x2C], rssi: -60 - (i % 7),
                                 data: CaptureBuilder.iBeacon(major: 1, minor: 2)))
            if i % 10 == 0 {
                adverts.append(.init(t: t + 0.05, address: [0xD0, 0, 0, 0, 0, UInt8(i / 10)], rssi: -80,
                                     data: CaptureBuilder.iBeacon(major: 9, minor: 9)))
            }
        }
        return try CaptureBuilder.write(adverts)
    }

    static func run(_ path: String) async throws -> [MessageLogLine] {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("dry-\(UUID().uuidString).jsonl")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        let handle = try FileHandle(forWritingTo: out)
        let service = EdgeAgentService(settings: AgentSettings(node: "hall-pi"), decoder: try AdvertisementDecoder(),
                                       source: RadioSourceFactory.make(try RadioSourceSpec.parse("btsnoop:\(path)@max")),
                                       sink: DryRunSink(handle: handle), mqtt: nil, logger: .silent)
        _ = try await service.run()
        try handle.close()
        let text = try String(contentsOf: out, encoding: .utf8)
        return try text.split(separator: "\n").map { try MessageLogLine.decode(String($0)) }
    }

    @Test func deterministicOnTheCapturesClockEndingOffline() async throws {
        let path = try Self.capture()
        let a = try await Self.run(path)
        let b = try await Self.run(path)
        #expect(a == b, "same file, same output")
        #expect(a.first?.topic == "roomcast/nodes/hall-pi/status" && a.first?.payload == Array("online".utf8))
        #expect(a.last?.topic == "roomcast/nodes/hall-pi/status" && a.last?.payload == Array("offline".utf8))
        #expect(a.allSatisfy { $0.ts >= 1_700_000_000 && $0.ts <= 1_700_000_021 }, "the capture's clock, not the wall clock")
        let readings = a.filter { $0.topic.contains("/beacons/") }
        let ids = Set(readings.map { $0.topic.split(separator: "/").last! })
        #expect(ids == ["ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-9-9"],
                "one beacon heard from rotating addresses stays one beacon")
        let fast = readings.filter { $0.topic.hasSuffix("-1-2") }
        #expect(fast.count >= 20 && fast.count <= 40, "about one a second over 20 s, plus significant changes: \(fast.count)")
        #expect(a.contains { $0.topic == "roomcast/nodes/hall-pi/telemetry" && $0.retain })
    }
}
