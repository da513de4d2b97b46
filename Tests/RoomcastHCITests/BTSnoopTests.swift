import Foundation
import RoomcastHCI
import Shared
import Testing
import TestSupport

/// Runs `btmon -r path` and returns its output; throws, naming the package, when btmon is
/// missing (tests that call it carry `.requiresBtmon`).
func btmonRead(_ path: String) throws -> String {
    let btmon = try RequiredTool.btmon.require()
    var env = ProcessInfo.processInfo.environment
    env["COLUMNS"] = "200"
    return try ChildProcess.runBlocking(btmon, ["-r", path], environment: env).stdout
}

func fixturePath(_ name: String) throws -> String {
    try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures")).path
}

func temporaryPath(_ suffix: String) -> String {
    NSTemporaryDirectory() + "roomcast-hci-\(getpid())-\(UInt32.random(in: 0...UInt32.max))\(suffix)"
}

func collect(_ source: any RadioSource) async throws -> [AdvertisingReport] {
    try await source.start()
    var out = [AdvertisingReport]()
    for await r in source.reports { out.append(r) }
    return out
}

@Suite struct BTSnoopTests {
    static let anchor1 = "kolakowski-robot-anchor1.btsnoop"

    @Test func replayYieldsEveryAdvertisingReportOfTheCapture() async throws {
        let path = try fixturePath(Self.anchor1)
        let reports = try await collect(ReplayRadioSource(path: path, speed: .max))
        #expect(reports.count == 2157)
        let first = try #require(reports.first)
        #expect(first.addressString == "c9:50:46:a8:8c:c7")
        #expect(first.addressType == .random)
        #expect(first.eventType.description == "ADV_NONCONN_IND")
        #expect(first.rssi == -80)
        #expect(abs(first.timestamp - 1628008086.883) < 0.0005, "capture clock, not the wall clock")
        #expect(first.data.count == 30)
        #expect(reports.allSatisfy { ($0.rssi ?? 0) >= -93 && ($0.rssi ?? 0) <= -38 })
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.timestamp <= $1.timestamp })
    }

    @Test(.requiresBtmon) func btmonCountsTheSameReports() throws {
        let path = try fixturePath(Self.anchor1)
        let text = try btmonRead(path)
        let reports = text.components(separatedBy: "\n").filter { $0.contains("RSSI:") }.count
        #expect(reports == 2157)
    }

    /// btsnoop stamps count microseconds from 0 AD: 2024-01-01T00:00Z is 0x00E2EB8A1F50A000, in
    /// what we write, what we read and what btmon shows.
    @Test func timestampsCountFromTheYearZeroAsBlueZAndWiresharkDo() {
        #expect(BTSnoopFormat.timestamp(unix: 1_704_067_200) == 0x00E2_EB8A_1F50_A000)
        #expect(BTSnoopFormat.unixTime(0x00E2_EB8A_1F50_A000) == 1_704_067_200)
    }

    @Test(.requiresBtmon) func btmonShowsTheCapturesOwnDate() throws {
        let btmon = try RequiredTool.btmon.require()
        var env = ProcessInfo.processInfo.environment
        env["TZ"] = "UTC"  // btmon shows local time
        let text = try ChildProcess.runBlocking(btmon, ["-T", "-r", try fixturePath(Self.anchor1)], environment: env).stdout
        let first = try #require(text.split(separator: "\n").first { $0.contains("LE Meta Event") })
        #expect(first.hasSuffix("#1 2021-08-03 16:28:06.883000"), "\(first)")
    }

    @Test func replayIsDeterministicAtAnySpeed() async throws {
        let path = try fixturePath(Self.anchor1)
        let a = try await collect(ReplayRadioSource(path: path, speed: .max))
        let b = try await collect(ReplayRadioSource(path: path, speed: .max))
        #expect(a == b)
    }

    @Test func realtimeReplayIsPaced() async throws {
        // Two events 0.2 s apart at 4x take about 50 ms; the check is only that
        // pacing waits at all and keeps capture timestamps.
        let path = temporaryPath(".btsnoop")
        defer { unlink(path) }
        let writer = try BTSnoopWriter(path: path)
        let event = bytes("3e0d0201030100000000c0c001" + "00" + "c5")
        try writer.write(type: .event, bytes: event, timestamp: 1000.0, direction: .controllerToHost)
        try writer.write(type: .event, bytes: event, timestamp: 1000.2, direction: .controllerToHost)
        writer.shutdown()
        let clock = ContinuousClock()
        let start = clock.now
        let reports = try await collect(ReplayRadioSource(path: path, speed: .factor(4)))
        #expect(clock.now - start >= .milliseconds(45))
        #expect(reports.map(\.timestamp) == [1000.0, 1000.2])
    }

    /// A capture whose clock was set back an hour or a minute while recording (by hand, or NTP):
    /// the records after the step went over at once, however long they took to record. They are
    /// paced on from the step.
    @Test(arguments: [3600.0, 60])
    func aCaptureWhoseClockSteppedBackIsPacedOnFromTheStep(_ step: Double) async throws {
        let path = temporaryPath(".btsnoop")
        defer { unlink(path) }
        let writer = try BTSnoopWriter(path: path)
        let event = bytes("3e0d0201030100000000c0c001" + "00" + "c5")
        // 0.4 s of records, the clock stepped back, 0.4 s more: at ×2, 0.4 s of wall time.
        for i in 0...4 { try writer.write(type: .event, bytes: event, timestamp: 5000 + Double(i) * 0.1, direction: .controllerToHost) }
        for i in 0...4 { try writer.write(type: .event, bytes: event, timestamp: 5000 - step + Double(i) * 0.1, direction: .controllerToHost) }
        writer.shutdown()
        let clock = ContinuousClock()
        let start = clock.now
        let reports = try await collect(ReplayRadioSource(path: path, speed: .factor(2)))
        // Pacing never hands a record over early, so the lower bound holds on any machine.
        #expect(clock.now - start >= .milliseconds(380), "\(clock.now - start)")
        #expect(reports.count == 10 && reports.last?.timestamp == 5000 - step + 0.4)
    }

    /// A command, its Command Complete and an LE Advertising Report with two reports, as the
    /// agent's `--record` writes them.
    static func writeRecording(to path: String) throws -> BTSnoopWriter {
        let writer = try BTSnoopWriter(path: path)
        let command = HCICommand.leSetScanEnable(enable: true, filterDuplicates: false)
        try writer.write(type: .command, bytes: command.encoded, timestamp: 1700000000, direction: .hostToController)
        let complete = bytes("0e04010c2000")
        try writer.write(type: .event, bytes: complete, timestamp: 1700000000.001, direction: .controllerToHost)
        try writer.write(type: .event, bytes: recordedReport, timestamp: 1700000000.5, direction: .controllerToHost)
        writer.shutdown()
        return writer
    }

    static var recordedReport: [UInt8] { bytes(String(HCIEventTests.twoReports.dropFirst(2))) }

    @Test func recordingIsReadableByUs() async throws {
        let path = temporaryPath(".btsnoop")
        defer { unlink(path) }
        let writer = try Self.writeRecording(to: path)
        #expect(writer.recordCount == 3)

        let reader = try BTSnoopReader(path: path)
        var frames = [HCIFrame]()
        while let r = try reader.next() { frames.append(r.frame) }
        #expect(reader.datalink == .h4)
        #expect(frames.map(\.type) == [.command, .event, .event])
        #expect(frames.map(\.direction) == [.hostToController, .controllerToHost, .controllerToHost])
        #expect(frames[2].bytes == Self.recordedReport)
        #expect(frames[2].timestamp == 1700000000.5)
        #expect(!reader.endedInsideRecord)
    }

    @Test(.requiresBtmon) func recordingIsReadableByBtmon() throws {
        let path = temporaryPath(".btsnoop")
        defer { unlink(path) }
        _ = try Self.writeRecording(to: path)
        let text = try btmonRead(path)
        #expect(text.contains("LE Set Scan Enable"))
        #expect(text.contains("Command Complete"))
        #expect(text.components(separatedBy: "RSSI:").count - 1 == 2)
        #expect(text.contains("11:22:33:44:55:66"))
    }

    /// A time a record cannot hold (microseconds where seconds belong, NaN, before 0 AD) is an
    /// error naming it, not a crash; the capture goes on with the next record.
    @Test func aTimeTheFormatCannotHoldIsAnErrorNotACrash() throws {
        for t in [1.7e15, -7e10, .nan, .infinity] { #expect(BTSnoopFormat.timestamp(unix: t) == nil, "\(t)") }
        #expect(BTSnoopFormat.timestamp(unix: 0) == BTSnoopFormat.epochDelta)
        let path = temporaryPath(".btsnoop")
        defer { unlink(path) }
        let writer = try BTSnoopWriter(path: path)
        #expect(throws: BTSnoopError.unwritableTime(1.7e15)) {
            try writer.write(type: .event, bytes: [0x0E, 0x00], timestamp: 1.7e15, direction: .controllerToHost)
        }
        try writer.write(type: .event, bytes: [0x0E, 0x00], timestamp: 1_704_067_200, direction: .controllerToHost)
        writer.shutdown()
        #expect(writer.recordCount == 1)
    }

    /// A capture whose file cannot be written (a full disk: /dev/full) stops keeping anything
    /// at its first failed write, and every write after it says so: memory stays at one flush.
    @Test func aFullDiskStopsTheCaptureAndKeepsNothing() throws {
        let writer = try BTSnoopWriter(path: "/dev/full", flushEvery: 64)
        var failures = 0
        for n in 0..<10_000 {
            do throws(BTSnoopError) {
                try writer.write(type: .event, bytes: [0x3E, 0x0A] + Array(repeating: UInt8(n & 0xFF), count: 10),
                                 timestamp: 1_704_067_200 + Double(n), direction: .controllerToHost)
            } catch {
                guard case .io(path: "/dev/full", _) = error else { Issue.record("\(error)"); break }
                failures += 1
            }
            #expect(writer.bufferedByteCount <= 64 + 64, "record \(n): \(writer.bufferedByteCount) bytes kept")
        }
        #expect(failures >= 9_990, "every write after the first flush fails: \(failures)")
        guard case .io? = writer.failure else { Issue.record("no failure recorded"); return }
        writer.shutdown()
    }

    /// `--record` left running for days: past its limit the capture becomes `<file>.1` and a new
    /// one begins, so the disk holds at most about twice the limit; both files are whole
    /// captures, and together they hold the newest records without a gap.
    @Test func aLongCaptureKeepsOnlyItsNewestPartInTwoFiles() throws {
        let path = temporaryPath(".btsnoop")
        defer { unlink(path); unlink(path + ".1") }
        let limit: UInt64 = 16 * 1024, flushEvery = 1024
        let writer = try BTSnoopWriter(path: path, flushEvery: flushEvery, fileLimit: limit)
        let count = 10_000
        for n in 0..<count {
            try writer.write(type: .event, bytes: [0x3E, 0x0A] + Array(repeating: UInt8(n & 0xFF), count: 10),
                             timestamp: 1_704_067_200 + Double(n), direction: .controllerToHost)
        }
        writer.shutdown()
        #expect(writer.recordCount == UInt64(count))
        #expect(writer.rotationCount > 10, "\(count) records of 37 bytes past a 16 KB limit: \(writer.rotationCount) rotations")
        func times(_ file: String) throws -> [Double] {
            let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? UInt64)
            #expect(size < limit + UInt64(flushEvery) + 64, "\(file): \(size) bytes")
            let reader = try BTSnoopReader(path: file)
            var times = [Double]()
            while let r = try reader.next() { times.append(r.frame.timestamp) }
            #expect(!reader.endedInsideRecord)
            return times
        }
        let older = try times(path + ".1"), newer = try times(path)
        #expect(!older.isEmpty && !newer.isEmpty)
        #expect(newer.last == 1_704_067_200 + Double(count - 1), "the last record written is in the newest file")
        #expect(older.last.map { $0 + 1 } == newer.first, "the two files meet without a gap")
        let kept = older + newer
        #expect(kept == (0..<kept.count).map { 1_704_067_200 + Double(count - kept.count + $0) })
    }

    /// The last flush (at shutdown, or the one before the agent dies) crosses the limit: the new
    /// file is a capture without records, not an empty file `btmon -r` refuses.
    @Test func aCaptureRotatedAtItsLastFlushLeavesAReadableFile() throws {
        let path = temporaryPath(".btsnoop")
        defer { unlink(path); unlink(path + ".1") }
        let writer = try BTSnoopWriter(path: path, flushEvery: 1 << 20, fileLimit: 1000)
        for n in 0..<50 {
            try writer.write(type: .event, bytes: [0x3E, 0x0A] + Array(repeating: UInt8(n), count: 10),
                             timestamp: 1_704_067_200 + Double(n), direction: .controllerToHost)
        }
        writer.shutdown()
        #expect(writer.rotationCount == 1)
        var count = 0
        let older = try BTSnoopReader(path: path + ".1")
        while try older.next() != nil { count += 1 }
        #expect(count == 50)
        let newer = try BTSnoopReader(path: path)
        #expect(try newer.next() == nil)
    }

    @Test func monitorDatalinkIsRead() async throws {
        // Datalink 2001: flags = (index << 16) | opcode; 3 = event, 12 = system note.
        var file = Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x07, 0xD1]
        func record(_ data: [UInt8], opcode: UInt32, ts: Double) {
            let n = UInt32(data.count)
            for v in [n, n, opcode, 0] { file += [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
            let t = BTSnoopFormat.timestamp(unix: ts)!
            for i in (0..<8).reversed() { file.append(UInt8(t >> (8 * UInt64(i)) & 0xFF)) }
            file += data
        }
        record(Array("note".utf8), opcode: 12, ts: 5)
        record(bytes(String(HCIEventTests.twoReports.dropFirst(2))), opcode: 3, ts: 6)
        let path = temporaryPath(".btsnoop")
        defer { unlink(path) }
        _ = FileManager.default.createFile(atPath: path, contents: Data(file))
        let reports = try await collect(ReplayRadioSource(path: path, speed: .max))
        #expect(reports.count == 2)
        #expect(reports.allSatisfy { $0.timestamp == 6 })
    }

    /// A btmon capture of several adapters: one node is one adapter, so the replay follows the
    /// first adapter to report, skips the others' records, and says so. Merged, a beacon both heard
    /// was one node hearing it twice, at two levels.
    @Test func aMonitorCaptureOfTwoAdaptersReplaysTheFirst() async throws {
        var file = Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x07, 0xD1]
        func record(_ data: [UInt8], adapter: UInt32, ts: Double) {
            let n = UInt32(data.count), flags = adapter << 16 | 3
            for v in [n, n, flags, 0] { file += [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
            let t = BTSnoopFormat.timestamp(unix: ts)!
            for i in (0..<8).reversed() { file.append(UInt8(t >> (8 * UInt64(i)) & 0xFF)) }
            file += data
        }
        let event = bytes(String(HCIEventTests.twoReports.dropFirst(2)))
        // bluetoothd talks to every adapter at start, an idle one too: the one followed is the
        // first to report, not the first answering a command.
        record([0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00], adapter: 2, ts: 5)
        record(event, adapter: 1, ts: 6)
        record(event, adapter: 0, ts: 7)
        record(event, adapter: 1, ts: 8)
        let path = temporaryPath(".btsnoop")
        defer { unlink(path) }
        _ = FileManager.default.createFile(atPath: path, contents: Data(file))
        let source = ReplayRadioSource(path: path, speed: .max)
        let reports = try await collect(source)
        #expect(reports.map(\.timestamp) == [6, 6, 8, 8])
        #expect(source.notice?.hasPrefix("the capture holds more than one adapter's records: replayed hci1's") == true)
        #expect(source.notice?.contains("skipped 1 ") == true)
        // One adapter's capture has nothing to say.
        let single = ReplayRadioSource(path: try fixturePath(Self.anchor1), speed: .max)
        _ = try await collect(single)
        #expect(single.notice == nil)
    }

    @Test func aFileCutInsideARecordEndsCleanly() async throws {
        let full = try Data(contentsOf: URL(fileURLWithPath: try fixturePath(Self.anchor1)))
        let path = temporaryPath(".btsnoop")
        defer { unlink(path) }
        // Keep the header and 10 whole records (69 bytes each: 24 + 45), plus 30 bytes of the 11th.
        _ = FileManager.default.createFile(atPath: path, contents: full.prefix(16 + 69 * 10 + 30))
        let reader = try BTSnoopReader(path: path)
        var n = 0
        while try reader.next() != nil { n += 1 }
        #expect(n == 10)
        #expect(reader.endedInsideRecord)
        // And the replay says so: the capture holds less than its file's size suggests.
        let source = ReplayRadioSource(path: path, speed: .max)
        let reports = try await collect(source)
        #expect(reports.count == 10)
        #expect(source.notice?.hasPrefix("the capture ends inside a record") == true, "\(String(describing: source.notice))")
    }

    /// A record whose length no HCI packet has (a corrupt length field mid-file) is an error at
    /// its offset: read as it says, it would swallow the records after it and end in silence.
    @Test func aRecordLongerThanAnyHCIPacketIsCorrupt() throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try fixturePath(Self.anchor1))).prefix(16 + 69 * 3))
        bytes += [0, 0x10, 0, 0, 0, 0x10, 0, 0] + [UInt8](repeating: 0, count: 16) + [UInt8](repeating: 0x04, count: 100)  // 1 MiB said
        bytes += [UInt8](try Data(contentsOf: URL(fileURLWithPath: try fixturePath(Self.anchor1))).dropFirst(16).prefix(69 * 3))
        let path = temporaryPath(".btsnoop")
        defer { unlink(path) }
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let reader = try BTSnoopReader(path: path)
        for _ in 0..<3 { #expect(try reader.next() != nil) }
        #expect(throws: BTSnoopError.corruptRecord(offset: UInt64(16 + 69 * 3), why: "included length 1048576")) { try reader.next() }
    }

    @Test func notACaptureIsRejected() throws {
        let path = temporaryPath(".txt")
        defer { unlink(path) }
        _ = FileManager.default.createFile(atPath: path, contents: Data("hello, this is not btsnoop".utf8))
        #expect(throws: BTSnoopError.notBTSnoop(path: path)) { try BTSnoopReader(path: path) }
        #expect(throws: BTSnoopError.self) { try BTSnoopReader(path: path + ".missing") }
    }

    @Test func smallBuffersReadTheSameRecords() throws {
        let path = try fixturePath(Self.anchor1)
        let big = try BTSnoopReader(path: path), small = try BTSnoopReader(path: path, chunkSize: 100)
        var n = 0
        while let a = try big.next() {
            let b = try #require(try small.next())
            #expect(a.frame == b.frame)
            n += 1
        }
        #expect(try small.next() == nil)
        #expect(n == 2157)
    }
}

extension BTSnoopTests {
    @Test func replayTransportDeliversFramesAndRefusesCommands() async throws {
        let transport = try RadioSourceFactory.openTransport(.btsnoop(path: try fixturePath(Self.anchor1), speed: .max))
        #expect(throws: RadioError.readOnly(transport.name)) { try transport.send(.reset) }
        var count = 0
        var first: HCIFrame?
        for await frame in transport.frames {
            if first == nil { first = frame }
            count += 1
        }
        #expect(count == 2157)
        #expect(first?.type == .event)
        #expect(first?.direction == .controllerToHost)
        #expect(first.map { abs($0.timestamp - 1628008086.883) < 0.0005 } == true)
        #expect(try first?.decode().eventReports.first?.rssi == -80)
        #expect(transport.terminationError == nil)
    }
}
