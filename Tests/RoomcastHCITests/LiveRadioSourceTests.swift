import Foundation
import RoomcastHCI
import RoomcastLogging
import Shared
import TestSupport
import Testing

/// The supervised live source against the scripted controller: a silent scan
/// is restarted then the adapter reset; a vanished adapter is reopened and
/// reports resume; everything can be recorded for btmon.
@Suite struct LiveRadioSourceTests {
    static func options(stall: Double = 0.3, record: String? = nil) -> RadioOptions {
        RadioOptions(recovery: RecoveryPolicy(stallTimeout: stall, restartsBeforeReset: 2, initialBackoff: 0.05, maxBackoff: 0.2),
                     recordPath: record, commandTimeout: 1, checkInterval: 0.05)
    }

    /// Waits until the fake has received `count` commands with `opcode`.
    func awaitCommands(_ fake: ScriptedH4Controller, opcode: UInt16, count: Int) async throws {
        let updates = fake.commandUpdates
        try await withTimeout(.seconds(60), "\(count) × command \(String(opcode, radix: 16))") {
            if fake.commands.filter({ $0.opcode == opcode }).count >= count { return }
            for await _ in updates where fake.commands.filter({ $0.opcode == opcode }).count >= count { return }
        }
    }

    @Test func aSilentScanIsRestartedThenTheAdapterIsReset() async throws {
        let fake = try ScriptedH4Controller()
        defer { fake.stop() }
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: Self.options())
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        #expect(fake.commands.first?.opcode == 0x0C03, "H4 controllers are reset on open")
        // 1 enable at start + 2 restarts (each disable+enable), then a reset.
        try await awaitCommands(fake, opcode: 0x0C03, count: 2)
        // What the controller hears from now on (on the scan enabled after the reset, or on the
        // next restart should that one have passed already): the source must be scanning again.
        fake.configure { $0.scanBatches = [ControllerTests.script([-61])] }
        let counters = source.counters.snapshot
        #expect(counters.scanRestarts == 2)
        #expect(counters.resets == 1)
        let enables = fake.commands.filter { $0.opcode == 0x200C && $0.parameters.first == 1 }.count
        #expect(enables >= 3)
        let got = try await withTimeout(.seconds(60), "a report after the reset") { try await first(1, of: source.reports) }
        #expect(got.first?.rssi == -61)
        await source.shutdown()
    }

    /// A node in a room that hears nothing restarts its scan and resets its adapter over and over;
    /// each was a log line (1,440 a day at the default `restart_after_s`). They are said once a
    /// minute at most, ever further apart, and every one is counted.
    @Test func aSilentRoomsRecoveriesAreNotLoggedEachTime() async throws {
        let fake = try ScriptedH4Controller()
        defer { fake.stop() }
        let logs = InMemoryLogHandler()
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: Self.options(),
                                     logger: Logger(label: "radio", level: .info, handler: logs))
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        // Three resets: six restarts and three resets in all, within a few seconds.
        try await awaitCommands(fake, opcode: 0x0C03, count: 4)
        let counters = source.counters.snapshot
        #expect(counters.scanRestarts >= 6 && counters.resets >= 3, "\(counters)")
        let lines = logs.records.map(\.message)
        #expect(lines.filter { $0.hasPrefix("no advertising report") }.count == 1, "\(lines)")
        #expect(lines.filter { $0 == "resetting the adapter" }.count == 1, "\(lines)")
        #expect(lines.filter { $0 == "controller initialised" }.count == 1, "the same controller, initialised again: \(lines)")
        await source.shutdown()
    }

    /// An adapter that refuses to advertise, in a room that hears nothing: the refusal, asked
    /// again at every reset, was an error line each time (every 4 minutes, 360 a day). It is said
    /// once, then paced with the other recoveries.
    @Test func anAdvertisingRefusalIsNotLoggedAtEveryReset() async throws {
        let fake = try ScriptedH4Controller(configuration: .init(extended: true, failingOpcodes: [0x2006: 0x0C]))
        defer { fake.stop() }
        let logs = InMemoryLogHandler()
        var options = Self.options()
        options.advertise = AdvertisingSettings(data: ControllerTests.beacon, interval: 0.5)
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: options,
                                     logger: Logger(label: "radio", level: .info, handler: logs))
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        // Refused at the start and after each of three resets.
        try await awaitCommands(fake, opcode: 0x2006, count: 4)
        let refusals = logs.records.filter { $0.message.hasPrefix("the adapter refused legacy advertising") }
        #expect(refusals.count == 1, "\(refusals.count) lines for 4 refusals")
        #expect(source.counters.snapshot.resets >= 3)
        await source.shutdown()
    }

    @Test func reportsKeepTheScanFromBeingRestarted() async throws {
        let fake = try ScriptedH4Controller(configuration: .init(scanBatches: [ControllerTests.script([-50, -51])]))
        defer { fake.stop() }
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: Self.options(stall: 5))
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        let got = try await withTimeout(.seconds(60), "reports") { try await first(2, of: source.reports) }
        #expect(got.map(\.rssi) == [-50, -51])
        #expect(source.counters.snapshot.scanRestarts == 0)
        #expect(source.counters.snapshot.reports == 2)
        await source.shutdown()
    }

    @Test func aVanishedAdapterIsReopenedAndReportsResume() async throws {
        let fake = try ScriptedH4Controller(configuration: .init(scanBatches: [ControllerTests.script([-60])]))
        defer { fake.stop() }
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: Self.options(stall: 30))
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        let reports = source.reports
        let got = try await withTimeout(.seconds(60), "a report before and after the reopen") { () -> [AdvertisingReport] in
            var out = [AdvertisingReport]()
            for await report in reports {
                out.append(report)
                if out.count == 1 {
                    fake.configure { $0.scanBatches = [ControllerTests.script([-61])] }
                    fake.disconnectClient()
                }
                if out.count == 2 { break }
            }
            return out
        }
        #expect(got.map(\.rssi) == [-60, -61])
        #expect(fake.connections == 2)
        #expect(source.counters.snapshot.reopens >= 1)
        await source.shutdown()
    }

    @Test func aMissingAdapterFailsTheStartClearly() async throws {
        let source = RadioSourceFactory.make(.h4(path: "/nonexistent/roomcast.sock", baud: nil))
        await #expect(throws: RadioError.self) { try await source.start() }
    }

    /// Scans three reports from a scripted controller with `--record` on, into `path`.
    static func recordThreeReports(to path: String) async throws {
        let fake = try ScriptedH4Controller(configuration: .init(scanBatches: [ControllerTests.script([-42, -43, -44])]))
        defer { fake.stop() }
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: Self.options(stall: 30, record: path))
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        _ = try await withTimeout(.seconds(60), "reports") { try await first(3, of: source.reports) }
        await source.shutdown()
    }

    @Test func everythingIsRecorded() async throws {
        let path = temporaryPath(".btsnoop")
        defer { unlink(path) }
        try await Self.recordThreeReports(to: path)
        let replayed = try await collect(ReplayRadioSource(path: path, speed: .max))
        #expect(replayed.map(\.rssi) == [-42, -43, -44])
        // Which devices were near the node, and when: readable by its owner only.
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode == 0o600, "mode \(String(mode, radix: 8))")
    }

    /// `--record` onto a disk that fills up (/dev/full): the user is told once that recording
    /// stopped, and the node goes on scanning.
    @Test func aRecordingThatCannotBeWrittenIsLoggedAndScanningGoesOn() async throws {
        let fake = try ScriptedH4Controller()
        defer { fake.stop() }
        let logs = InMemoryLogHandler()
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: Self.options(stall: 30, record: "/dev/full"),
                                     logger: Logger(label: "radio", level: .info, handler: logs))
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        let stopped: @Sendable () -> [LogRecord] = { logs.records(atLeast: .error).filter { $0.message.hasPrefix("recording stopped") } }
        let heard = try await withTimeout(.seconds(120), "reports through a failed recording") {
            var reports = source.reports.makeAsyncIterator()
            // More than the writer's 64 KiB buffer, so it writes (and fails).
            for batch in 0..<400 {
                fake.emit((0..<5).map { .init(address: [0xC0, 0, 0, UInt8(batch >> 8), UInt8(batch & 0xFF), UInt8($0)], rssi: -50, data: ControllerTests.beacon) })
                _ = await reports.next()
            }
            while stopped().isEmpty { try await Task.sleep(for: .milliseconds(20)) }
            fake.emit([.init(address: [0xC0, 9, 9, 9, 9, 9], rssi: -41, data: ControllerTests.beacon)])
            while let r = await reports.next() { if r.rssi == -41 { return true } }
            return false
        }
        #expect(heard && stopped().count == 1, "logged once: \(stopped().map(\.message))")
        await source.shutdown()
    }

    @Test(.requiresBtmon) func theRecordingReadsInBtmon() async throws {
        let path = temporaryPath(".btsnoop")
        defer { unlink(path) }
        try await Self.recordThreeReports(to: path)
        let text = try btmonRead(path)
        #expect(text.contains("Reset"))
        #expect(text.contains("LE Set Scan Parameters"))
        #expect(text.components(separatedBy: "RSSI:").count - 1 == 3)
    }
}

extension LiveRadioSourceTests {
    @Test func advertisingWhileScanningUsesLegacyCommandsOnly() async throws {
        // A controller refuses legacy advertising commands after extended ones,
        // so with advertising on, auto mode scans with the legacy set.
        let fake = try ScriptedH4Controller(configuration: .init(extended: true))
        defer { fake.stop() }
        var options = Self.options(stall: 30)
        options.advertise = AdvertisingSettings(data: ControllerTests.beacon, interval: 0.5)
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: options)
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        let opcodes = fake.commands.map(\.opcode)
        #expect(opcodes.contains(0x2008) && opcodes.contains(0x200C))
        #expect(!opcodes.contains(0x2041) && !opcodes.contains(0x2042))
        #expect(opcodes.last == 0x200C)
        await source.shutdown()
        #expect(fake.commands.last?.opcode == 0x200A, "advertising stopped on shutdown")
        #expect(fake.commands.last?.parameters == [0])
    }

    /// A controller that refuses to advertise leaves the node scanning (extended, as nothing
    /// legacy is running) and hearing: Command Disallowed (BlueZ drives the adapter with the
    /// extended commands), or Invalid HCI Command Parameters (a controller before Bluetooth 5
    /// with an interval under 100 ms). Where advertising is the job (`edge-agent advertise`),
    /// the refusal fails the start.
    @Test(arguments: [UInt8(0x0C), 0x12])
    func advertisingRefusedLeavesTheNodeScanning(status: UInt8) async throws {
        let fake = try ScriptedH4Controller(configuration: .init(extended: true, scanBatches: [ControllerTests.script([-58])],
                                                                 failingOpcodes: [0x2006: status]))
        defer { fake.stop() }
        var options = Self.options(stall: 30)
        options.advertise = AdvertisingSettings(data: ControllerTests.beacon, interval: 0.5)
        options.resetOnOpen = false
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: options)
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        let got = try await withTimeout(.seconds(60), "a report") { try await first(1, of: source.reports) }
        #expect(got.map(\.rssi) == [-58])
        #expect(fake.commands.map(\.opcode).contains(0x2042), "scanning with the extended commands")
        await source.shutdown()

        options.advertisingRequired = true
        let required = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: options)
        await #expect(throws: RadioError.commandFailed(opcode: HCIOpcode(rawValue: 0x2006), status: status)) {
            try await withTimeout(.seconds(60), "start") { try await required.start() }
        }
        await required.shutdown()
    }

    /// Another program's scan command on the shared adapter (the kernel's passive scan turning
    /// ours off) starts our scan again at once, not after a silent stall.
    @Test func aScanAnotherProgramChangedIsStartedAgain() async throws {
        let fake = try ScriptedH4Controller()
        defer { fake.stop() }
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: Self.options(stall: 30))
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        try await awaitCommands(fake, opcode: 0x200C, count: 2)  // disable, enable
        let before = fake.commands.filter { $0.opcode == 0x200C }.count
        // Command Complete of LE Set Scan Enable that the agent did not send.
        fake.emitRaw([0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00])
        try await awaitCommands(fake, opcode: 0x200C, count: before + 2)
        #expect(fake.commands.last { $0.opcode == 0x200C }?.parameters.first == 1, "our scan is on again")
        #expect(source.counters.snapshot.scanRestarts == 0, "not a stall")
        await source.shutdown()
    }

    /// Home Assistant's bluetooth (or bluetoothd) taking the scan every few minutes, all day: each
    /// time the scan is started again, and the line says so once, then ever further apart up to
    /// hourly, with the count (a line every ten minutes would be 144 a day).
    @Test func aScanAnotherProgramKeepsChangingIsLoggedEverFurtherApart() async throws {
        let fake = try ScriptedH4Controller()
        defer { fake.stop() }
        let clock = ManualTimeSource(1_000)
        let logs = InMemoryLogHandler()
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: Self.options(stall: 1e6),
                                     logger: Logger(label: "radio", level: .info, handler: logs), clock: clock)
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        try await awaitCommands(fake, opcode: 0x200C, count: 2)  // disable, enable
        // Every 5 minutes for 4 hours.
        for _ in 0..<48 {
            let before = fake.commands.filter { $0.opcode == 0x200C }.count
            fake.emitRaw([0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00])
            try await awaitCommands(fake, opcode: 0x200C, count: before + 2)
            #expect(fake.commands.last { $0.opcode == 0x200C }?.parameters.first == 1, "our scan is on again")
            clock.advance(by: 300)
        }
        let said = logs.records.filter { $0.message.hasPrefix("another program changed the scan") }
        #expect((3...12).contains(said.count), "\(said.count) lines for 48 changes")
        #expect(said.first?.metadata["times"] == "1")
        #expect(said.last?.metadata["times"].flatMap { Int($0) } ?? 0 >= 40, "the count goes on: \(said.map(\.metadata))")
        await source.shutdown()
    }

    @Test func aHardwareErrorResetsTheAdapter() async throws {
        let fake = try ScriptedH4Controller()
        defer { fake.stop() }
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: Self.options(stall: 30))
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        // Heard on the scan enabled after the reset: the adapter scans again, not only was reset.
        fake.configure { $0.scanBatches = [ControllerTests.script([-62])] }
        fake.emitRaw([0x04, 0x10, 0x01, 0x03])
        try await awaitCommands(fake, opcode: 0x0C03, count: 2)
        #expect(source.counters.snapshot.hciErrors >= 1)
        #expect(source.counters.snapshot.resets == 1)
        let got = try await withTimeout(.seconds(60), "a report after the reset") { try await first(1, of: source.reports) }
        #expect(got.first?.rssi == -62)
        await source.shutdown()
    }

    /// An undervolted Pi or a flaky dongle reports hardware errors again and again: each is
    /// counted, and the journal gets a line at first, not one per error.
    @Test func repeatedHardwareErrorsAreCountedNotEachLogged() async throws {
        let fake = try ScriptedH4Controller()
        defer { fake.stop() }
        let records = InMemoryLogHandler()
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: Self.options(stall: 30),
                                     logger: Logger(label: "radio", level: .debug, handler: records))
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        for _ in 0..<40 { fake.emitRaw([0x04, 0x10, 0x01, 0x03]) }
        try await withTimeout(.seconds(60), "40 hardware errors counted") {
            while source.counters.snapshot.hciErrors < 40 { try await Task.sleep(for: .milliseconds(20)) }
        }
        let said = records.records.filter { $0.message == "controller hardware error" }
        #expect(said.count <= 2, "\(said.count) lines for 40 errors")
        await source.shutdown()
    }

    /// An adapter gone for good is tried again and again: each attempt counted, the journal told
    /// at first, not at every attempt.
    @Test func anAdapterGoneForGoodIsNotLoggedAtEveryAttempt() async throws {
        let fake = try ScriptedH4Controller()
        let records = InMemoryLogHandler()
        let source = LiveRadioSource(spec: .h4(path: fake.path, baud: nil), options: Self.options(stall: 30),
                                     logger: Logger(label: "radio", level: .debug, handler: records))
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        fake.stop()
        try await withTimeout(.seconds(60), "20 attempts to reopen") {
            while source.counters.snapshot.reopens < 20 { try await Task.sleep(for: .milliseconds(20)) }
        }
        let said = records.records.filter { $0.message == "radio reopen failed" }
        #expect(said.count >= 1 && said.count <= 2, "\(said.count) lines for \(source.counters.snapshot.reopens) attempts")
        await source.shutdown()
    }

    @Test func aReplayIsNotALiveSource() async throws {
        let source = RadioSourceFactory.make(.btsnoop(path: try fixturePath(BTSnoopTests.anchor1), speed: .max))
        #expect(source is ReplayRadioSource)
        let reports = try await collect(source)
        #expect(reports.count == 2157)
        #expect(source.counters.snapshot.reports == 2157)
        #expect(source.terminationError == nil)
    }
}

extension LiveRadioSourceTests {
    @Test func anAdapterThatAppearsLaterIsWaitedFor() async throws {
        // The controller's socket does not exist yet at start.
        let fake = try ScriptedH4Controller(configuration: .init(scanBatches: [ControllerTests.script([-66])]))
        defer { fake.stop() }
        let later = fake.path + ".later"
        var options = Self.options(stall: 30)
        options.waitForAdapter = true
        let source = LiveRadioSource(spec: .h4(path: later, baud: nil), options: options)
        try await withTimeout(.seconds(60), "start") { try await source.start() }
        #expect(rename(fake.path, later) == 0)
        defer { unlink(later) }
        let got = try await withTimeout(.seconds(60), "a report once the adapter appears") { try await first(1, of: source.reports) }
        #expect(got.first?.rssi == -66)
        #expect(source.counters.snapshot.reopens >= 1)
        await source.shutdown()
    }

    @Test func settingsOutOfRangeAreRejected() async {
        var options = Self.options()
        options.scan.window = 1
        options.scan.interval = 0.5
        let source = LiveRadioSource(spec: .h4(path: "/nonexistent", baud: nil), options: options)
        await #expect(throws: RadioError.invalidSettings("scan window 1.0 s is longer than the interval 0.5 s")) {
            try await source.start()
        }
    }
}

/// A refused command says why in words, not only its code.
@Suite struct RadioErrorTextTests {
    @Test func commandDisallowedNamesItsLikelyCause() {
        let parameters = HCIOpcode(rawValue: 0x2006)
        let text = RadioError.commandFailed(opcode: parameters, status: 0x0C).description
        #expect(text.contains("Command Disallowed") && text.contains("extended advertising"), "\(text)")
        #expect(RadioError.commandFailed(opcode: parameters, status: 0x12).description.hasSuffix("failed with status 0x12"))
        let scan = RadioError.commandFailed(opcode: HCIOpcode(rawValue: 0x200C), status: 0x0C).description
        #expect(scan.contains("Command Disallowed") && !scan.contains("advertising"), "\(scan)")
    }
}
