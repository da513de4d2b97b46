import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Shared
import Synchronization
import Testing
@testable import RoomcastAgent

/// A radio that stops on an error it cannot recover from ends the agent with that error, after
/// what was heard before went out: a live adapter that gives up must not look like a clean stop
/// (systemd restarts only a failure), and a capture corrupt part-way is bad input (exit 65).
@Suite struct RadioStopTests {
    /// A live source whose adapter gives up (here on a permission error, as when a USB
    /// controller comes back before udev has given it its group) after one report.
    final class GivingUpSource: RadioSource {
        let spec = RadioSourceSpec.h4(path: "/dev/ttyUSB-roomcast-test", baud: nil)
        let reports: BoundedStream<AdvertisingReport>
        let producer: BoundedStream<AdvertisingReport>.Producer
        let counters = RadioCounters()
        let report: AdvertisingReport
        var terminationError: RadioError? { .permissionDenied(device: spec.description, call: "open") }

        init(report: AdvertisingReport) {
            (reports, producer) = BoundedStream<AdvertisingReport>.make(capacity: 8, mode: .lossless)
            self.report = report
        }

        func start() async throws(RadioError) {
            _ = producer.yield(report)
            producer.finish()
        }

        func shutdown() async { producer.finish() }
    }

    @Test func aLiveAdapterThatGivesUpFailsTheRunAfterPublishing() async throws {
        let report = AdvertisingReport(address: [0xC8, 0x1F, 0x66, 0x0A, 0x1B, 0x2C], addressType: .public,
                                       eventType: AdvertisingEventType(legacy: 0x03), rssi: -60,
                                       data: CaptureBuilder.iBeacon(major: 1, minor: 2), timestamp: Date().timeIntervalSince1970)
        let sink = CollectingSink()
        let service = EdgeAgentService(settings: AgentSettings(node: "hall-pi"), decoder: try AdvertisementDecoder(),
                                       source: GivingUpSource(report: report), sink: sink, mqtt: nil, logger: .silent)
        await #expect(throws: RadioError.permissionDenied(device: "h4:/dev/ttyUSB-roomcast-test", call: "open")) {
            _ = try await service.run()
        }
        #expect(sink.topics.contains { $0.hasSuffix("/beacons/ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2") },
                "the report heard before the adapter gave up was published")
        #expect(sink.topics.last == "roomcast/nodes/hall-pi/status", "the node says it is offline")
    }

    /// A radio that cannot start for the config's sake exits 78, which the unit does not restart;
    /// one whose adapter may come right (absent, busy, not yet in the service's group) exits 1,
    /// and is started again.
    @Test func aRadioThatCannotStartForTheConfigsSakeIsNotRestarted() {
        let device = "hci0"
        #expect(AgentStartError(error: .invalidSettings("scan.window_ms: above the interval"), isReplay: false).exitCode == .config)
        #expect(AgentStartError(error: .invalidSource("hci:x"), isReplay: false).exitCode == .config)
        #expect(AgentStartError(error: .capture(.notBTSnoop(path: "/var/x.btsnoop")), isReplay: false).exitCode == .config)
        #expect(AgentStartError(error: .adapterNotFound(device: device, detail: "no such device"), isReplay: false).exitCode == .failure)
        #expect(AgentStartError(error: .permissionDenied(device: device, call: "open"), isReplay: false).exitCode == .failure)
        #expect(AgentStartError(error: .capture(.notBTSnoop(path: "/tmp/x.btsnoop")), isReplay: true).exitCode == .dataError)
    }

    /// `edge-agent advertise` whose adapter gave up ended as a clean stop (exit 0), and
    /// `Restart=on-failure` left the beacon silent.
    @Test func anAdvertisingAdapterThatGivesUpFailsTheRun() async throws {
        let report = AdvertisingReport(address: [0xC8, 0x1F, 0x66, 0x0A, 0x1B, 0x2C], addressType: .public,
                                       eventType: AdvertisingEventType(legacy: 0x03), rssi: -60,
                                       data: CaptureBuilder.iBeacon(major: 1, minor: 2), timestamp: Date().timeIntervalSince1970)
        await #expect(throws: RadioError.permissionDenied(device: "h4:/dev/ttyUSB-roomcast-test", call: "open")) {
            try await EdgeAgentCLI.advertise(on: GivingUpSource(report: report)) {}
        }
    }

    /// A capture whose fourth record declares an absurd length: the three before it are
    /// replayed and published, and `run --dry-run` fails with bad input data (65).
    @Test func aCaptureCorruptPartWayIsBadInputAfterWhatCameBefore() async throws {
        let adverts = (0..<3).map { i in
            CaptureBuilder.Advert(t: 1_700_000_000 + Double(i), address: [0xC8, 0x1F, 0x66, 0x0A, 0x1B, 0x2C], rssi: -60,
                                  data: CaptureBuilder.iBeacon(major: 1, minor: 2))
        }
        let path = try CaptureBuilder.write(adverts)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        // Original and included length 0x7fffffff, flags 3 (event, controller to host), no drops, a timestamp.
        try handle.write(contentsOf: Data([0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, 3, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8)))
        try handle.close()
        let lines = CollectingSink()
        let failure = await #expect(throws: EdgeAgentCLI.RunFailure.self) {
            _ = try await EdgeAgentCLI.dryRun(arguments: ["run", "--node", "hall-pi", "--source", "btsnoop:\(path)", "--speed", "max",
                                                          "--dry-run"],
                                              write: { lines.append(String(decoding: $0, as: UTF8.self)) })
        }
        #expect(failure?.code == .dataError)
        #expect(failure?.message.contains("corrupt") == true, "\(failure?.message ?? "")")
        #expect(lines.lines.contains { $0.contains("/beacons/ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2") },
                "the records before the corrupt one were published")
    }
}

/// `--speed` is checked as a usage error that names the option: a bad pace, or a pace for a
/// source that is not a replay (it was ignored).
@Suite struct SpeedOptionTests {
    @Test(arguments: [(["--source", "btsnoop:/tmp/x.btsnoop", "--speed", "0"], "--speed '0': use realtime, max or a factor above 0"),
                      (["--source", "hci:hci0", "--speed", "max"], "--speed sets a btsnoop replay's pace; the source is hci:hci0")])
    func aBadSpeedIsAUsageError(_ arguments: [String], _ message: String) async {
        let failure = await #expect(throws: EdgeAgentCLI.RunFailure.self) {
            _ = try await EdgeAgentCLI.dryRun(arguments: ["run", "--node", "hall-pi", "--dry-run"] + arguments, write: { _ in })
        }
        #expect(failure?.code == .usage)
        #expect(failure?.message.contains(message) == true, "\(failure?.message ?? "")")
    }
}

/// Keeps every topic sent, and the dry run's lines.
final class CollectingSink: AgentSink {
    private let state = Mutex<(topics: [String], lines: [String])>(([], []))

    func send(_ messages: [OutboundMessage], at ts: Double) {
        state.withLock { $0.topics += messages.map(\.topic) }
    }

    func append(_ line: String) { state.withLock { $0.lines.append(line) } }
    var topics: [String] { state.withLock { $0.topics } }
    var lines: [String] { state.withLock { $0.lines } }
    var dropped: UInt64 { 0 }
    var reconnects: UInt64 { 0 }
    func shutdown(final: OutboundMessage?, at ts: Double) async {
        if let final { send([final], at: ts) }
    }
}
