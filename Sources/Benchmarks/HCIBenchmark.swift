#if canImport(Glibc)
import Glibc
#endif
import Foundation
import RoomcastHCI
import Shared
import RoomcastCLI

/// Decode throughput of HCI advertising reports: replays a large btsnoop file
/// (a real capture's packets repeated to millions of reports) at max speed,
/// and times `btmon -r FILE > /dev/null` on the same file side by side.
///
/// `roomcast-bench hci [--reports N] [--capture FILE.btsnoop] [--keep] [--no-btmon]`
enum HCIBenchmark {
    static let reports = Option<Count>("reports", value: "n", help: "Advertising reports in the replayed file.", default: 3_000_000)
    static let capture = Option<String?>("capture", value: "file", help: "A btsnoop capture whose packets are repeated (default: an embedded one).")
    static let keep = Flag("keep", help: "Keep the generated file.")
    static let noBtmon = Flag("no-btmon", help: "Do not time btmon -r on the same file.")

    static let spec = CommandSpec("hci", abstract: "HCI advertising-report decode and replay vs btmon",
                                  options: [reports, capture, keep, noBtmon], run: benchmark(run))

    /// The first 12 records of the Kolakowski robot capture, anchor 1 (CC BY 4.0,
    /// M. Kolakowski, doi:10.3390/s21186270, Zenodo 10.5281/zenodo.5457591):
    /// microseconds after the first record, and the H4 event.
    static let embeddedCapture: [(UInt64, String)] = {
        let head = "043e2a02010301c78ca84650c91e0201061aff4c0002155d9d269015125a3d9c81095046a88cc700010001cd"
        return [(0, "b0"), (0, "c2"), (2000, "b0"), (337_000, "c3"), (670_000, "b1"), (670_000, "c4"), (671_000, "b6"),
                (1_006_000, "c5"), (1_337_000, "b8"), (1_337_000, "c0"), (1_339_000, "b7"), (1_672_000, "c0")]
            .map { ($0.0, head + $0.1) }
    }()

    struct Usage {
        var wall: Double
        var cpu: Double
        var maxRSSKB: Int
    }

    static func run(_ command: ParsedCommand) throws {
        let target = try command[reports].value
        let capture = command[Self.capture]
        let keep = command[Self.keep]
        let runBtmon = !command[noBtmon]

        let seed = try capture.map(loadEvents) ?? embeddedCapture.map { ($0.0, Hex.decode($0.1)!) }
        let path = NSTemporaryDirectory() + "roomcast-hci-bench-\(getpid()).btsnoop"
        defer { if !keep { unlink(path) } }
        let (built, packets) = try build(path: path, seed: seed, reports: target)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        print("HCI decode benchmark: \(built) advertising reports in \(packets) events, \(size / 1_000_000) MB btsnoop at \(path)")
        print("seed: \(capture ?? "embedded Kolakowski anchor1 records (CC BY 4.0)"), \(seed.count) events")

        // 1. The decode path alone: file buffer -> HCI event -> AdvertisingReport.
        var checksum = 0
        var decoded = 0
        let decode = try measure {
            let reader = try BTSnoopReader(path: path)
            while let record = try reader.next() {
                guard record.type == .event else { continue }
                var r = record.reader
                guard case let .leMeta(meta) = try HCIEvent.decode(from: &r, timestamp: record.timestamp) else { continue }
                if case let .advertisingReports(reports) = meta {
                    decoded += reports.count
                    for report in reports { checksum &+= (report.rssi ?? 0) &+ report.data.count }
                }
            }
        }
        // 2. The whole replay source: decode thread -> bounded stream -> async consumer.
        let (stream, streamed) = try measureAsync {
            let source = ReplayRadioSource(path: path, speed: .max)
            try await source.start()
            var n = 0
            for await _ in source.reports { n += 1 }
            return n
        }
        // 3. btmon on the same file.
        var btmon: Usage?
        if runBtmon, FileManager.default.isExecutableFile(atPath: "/usr/bin/btmon") {
            btmon = try measureChild("/usr/bin/btmon", ["-r", path])
        }

        func rate(_ u: Usage, _ n: Int) -> String { String(format: "%.2f M/s", Double(n) / u.wall / 1e6) }
        func row(_ name: String, _ u: Usage, _ n: Int) -> String {
            let millions = Double(n) / 1e6
            return pad(name, 26) + pad(String(format: "%.3f s", u.wall), 11) + pad(rate(u, n), 12)
                + pad(String(format: "%.2f M/s", Double(n) / max(u.cpu, 1e-9) / 1e6), 13)
                + pad(String(format: "%.3f s", u.cpu / millions), 14) + pad(String(format: "%.1f MB", Double(u.maxRSSKB) / 1024), 12)
                + String(format: "%.2f MB", Double(u.maxRSSKB) / 1024 / millions)
        }
        print("")
        print(pad("path", 26) + pad("wall", 11) + pad("reports/s", 12) + pad("per CPU-s", 13) + pad("CPU per M", 14)
            + pad("peak RSS", 12) + "RSS per M")
        print(row("decode (reader+HCIEvent)", decode, decoded))
        print(row("ReplayRadioSource stream", stream, streamed))
        if let btmon { print(row("btmon -r > /dev/null", btmon, built)) }
        if let btmon {
            print(String(format: "\nours vs btmon, wall: %.1fx faster (decode), %.1fx (stream); CPU: %.1fx (decode), %.1fx (stream)",
                         btmon.wall / decode.wall, btmon.wall / stream.wall, btmon.cpu / decode.cpu, btmon.cpu / stream.cpu))
        }
        print("(peak RSS is the process high-water mark: the reader's buffer is fixed, so it does not grow with the file;")
        print(" 'per CPU-s' is the rate one core sustains, steadier than wall time on a shared machine; checksum \(checksum & 0xFFFF))")
        guard decoded == built, streamed == built else {
            throw BenchmarkError.mismatch("decoded \(decoded), streamed \(streamed), built \(built)")
        }
    }

    enum BenchmarkError: Error, CustomStringConvertible {
        case usage(String)
        case mismatch(String)
        var description: String {
            switch self {
            case let .usage(s): "usage: \(s)"
            case let .mismatch(s): "report count mismatch: \(s)"
            }
        }
    }

    /// The event records of a capture: offset from its earliest record (µs) and the H4 packet,
    /// in the capture's order (a clock stepped back during the capture puts an earlier time after
    /// a later one).
    static func loadEvents(_ path: String) throws -> [(UInt64, [UInt8])] {
        let reader = try BTSnoopReader(path: path)
        var records = [(Double, [UInt8])]()
        while let r = try reader.next() {
            guard r.type == .event, r.direction == .controllerToHost else { continue }
            records.append((r.timestamp, r.frame.h4Bytes))
        }
        let t0 = records.map(\.0).min() ?? 0
        return records.map { (UInt64((($0.0 - t0) * 1e6).rounded()), $0.1) }
    }

    /// Writes the seed events over and over (time running on) until `reports` reports.
    static func build(path: String, seed: [(UInt64, [UInt8])], reports: Int) throws -> (reports: Int, events: Int) {
        let perEvent = seed.map { (try? HCIPacket.decode(h4: $0.1).eventReports.count) ?? 0 }
        guard perEvent.reduce(0, +) > 0 else { throw BenchmarkError.usage("the capture holds no advertising reports") }
        let writer = try BTSnoopWriter(path: path, flushEvery: 1 << 20)
        let span = (seed.map(\.0).max() ?? 0) + 100_000
        var total = 0, events = 0, round: UInt64 = 0
        let start = 1_628_008_086.883
        while total < reports {
            for (k, (offset, packet)) in seed.enumerated() where perEvent[k] > 0 && total < reports {
                let t = start + Double(round * span + offset) / 1e6
                try writer.write(type: .event, bytes: Array(packet.dropFirst()), timestamp: t, direction: .controllerToHost)
                total += perEvent[k]
                events += 1
            }
            round += 1
        }
        writer.shutdown()
        return (total, events)
    }

    static func rusageSelf() -> (cpu: Double, maxRSSKB: Int) {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        let cpu = Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6 + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
        return (cpu, u.ru_maxrss)
    }

    static func measure(_ body: () throws -> Void) throws -> Usage {
        let before = rusageSelf()
        let t0 = Date()
        try body()
        let wall = Date().timeIntervalSince(t0)
        let after = rusageSelf()
        return Usage(wall: wall, cpu: after.cpu - before.cpu, maxRSSKB: after.maxRSSKB)
    }

    static func measureAsync<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> (Usage, T) {
        let before = rusageSelf()
        let t0 = Date()
        let value = try awaitResult(body)
        let wall = Date().timeIntervalSince(t0)
        let after = rusageSelf()
        return (Usage(wall: wall, cpu: after.cpu - before.cpu, maxRSSKB: after.maxRSSKB), value)
    }

    static func measureChild(_ executable: String, _ arguments: [String]) throws -> Usage {
        var before = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &before)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        let t0 = Date()
        try process.run()
        process.waitUntilExit()
        let wall = Date().timeIntervalSince(t0)
        var after = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &after)
        func seconds(_ u: rusage) -> Double {
            Double(u.ru_utime.tv_sec) + Double(u.ru_utime.tv_usec) / 1e6 + Double(u.ru_stime.tv_sec) + Double(u.ru_stime.tv_usec) / 1e6
        }
        return Usage(wall: wall, cpu: seconds(after) - seconds(before), maxRSSKB: after.ru_maxrss)
    }

    static func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + " " : s + String(repeating: " ", count: width - s.count)
    }
}

private extension HCIPacket {
    var eventReports: [AdvertisingReport] {
        if case let .event(e) = self { return e.advertisingReports }
        return []
    }
}
