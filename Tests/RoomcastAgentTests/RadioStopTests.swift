import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Shared
import Synchronization
import Testing
import TestSupport
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
    /// one whose adapter may come right (absent, busy) and was not waited for exits 1, and is
    /// started again.
    @Test func aRadioThatCannotStartForTheConfigsSakeIsNotRestarted() {
        let device = "hci0"
        #expect(AgentStartError(error: .invalidSettings("scan.window_ms: above the interval"), isReplay: false).exitCode == .config)
        #expect(AgentStartError(error: .invalidSource("hci:x"), isReplay: false).exitCode == .config)
        #expect(AgentStartError(error: .capture(.notBTSnoop(path: "/var/x.btsnoop")), isReplay: false).exitCode == .config)
        #expect(AgentStartError(error: .adapterNotFound(device: device, detail: "no such device"), isReplay: false).exitCode == .failure)
        #expect(AgentStartError(error: .capture(.notBTSnoop(path: "/tmp/x.btsnoop")), isReplay: true).exitCode == .dataError)
    }

    /// A UART controller the agent may not open yet (udev gives a USB controller back from a reset
    /// its group a moment after it appears) ended the run with exit 1, and systemd started it
    /// again every 5 s, its config logged each time, for as long as it lasted. The agent waits
    /// for it, as for an adapter absent at boot, saying why once; a stop is then clean. A missing
    /// capability, which no wait mends, exits 77, which the unit does not restart.
    @Test func aDeviceTheAgentMayNotOpenYetIsWaitedFor() async throws {
        #expect(AgentStartError(error: .permissionDenied(device: "hci0", call: "socket"), isReplay: false).exitCode == .noPermission)
        let agent = try #require(BuiltExecutable.path("edge-agent"))
        let dir = NSTemporaryDirectory() + "roomcast-unopenable-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let device = dir + "/ttyUSB0"
        #expect(FileManager.default.createFile(atPath: device, contents: nil, attributes: [.posixPermissions: 0o000]))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: dir)
        // Root opens any file whatever its mode: the agent runs as nobody then.
        let (program, prefix) = geteuid() == 0
            ? ("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", agent]) : (agent, [])
        let port = try freePort()
        try "http:\n  listen: \"127.0.0.1:\(port)\"\n".write(toFile: dir + "/agent.yaml", atomically: true, encoding: .utf8)
        let child = try ChildProcess(program, prefix + ["run", "-c", dir + "/agent.yaml", "--node", "hall-pi",
                                                        "--source", "h4:\(device)", "--dry-run"],
                                     stdoutPath: dir + "/out", stderrPath: dir + "/err")
        defer { if child.isRunning { child.send(SIGKILL) } }
        try await eventually("the agent to wait for the device, or exit", timeout: .seconds(30), detail: { child.stderr }) {
            child.stderr.contains("radio not available yet") || !child.isRunning
        }
        #expect(child.isRunning, "the agent gave up: \(child.stderr)")
        #expect(child.stderr.contains("permission denied on \(device) (open)"), "it says why: \(child.stderr)")
        // Its first retry, made at once, failed alike: not said again. A retry is said only once
        // the pacing lets it (a minute on, on a slow machine), with the count held back.
        try await eventually("a second retry begun", timeout: .seconds(30), poll: .milliseconds(100), detail: { child.stderr }) {
            let metrics = try? await LocalHTTP.get(port, "/metrics")
            return metrics.flatMap { LocalHTTP.value($0.body, "roomcast_agent_adapter_reopens_total") }.map { $0 >= 2 } ?? false
        }
        let retries = child.stderr.split(separator: "\n").filter { $0.contains("radio reopen failed") }
        #expect(retries.allSatisfy { !$0.contains("suppressed=0") }, "a retry said although it failed alike: \(retries)")
        child.send(SIGTERM)
        let status = try await withTimeout(.seconds(30), "the agent to stop") { await child.waitForExit() }
        #expect(status == 0, "\(child.stderr)")
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
