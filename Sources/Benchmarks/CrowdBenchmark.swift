import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Shared
import RoomcastCLI

/// Peak RSS and beacon-table evictions of the edge agent replaying a flood of distinct
/// advertisers (`--advertisers`, default 300 k, each a new iBeacon from a new random address,
/// `--rate` a second, default 20,000: all of them within the default 30 s `forget_after_s`,
/// so an unbounded agent holds them all at once) beside one beacon heard at 20 Hz throughout,
/// then 10 s of that beacon and a newcomer; and, for comparison, the same capture without the
/// flood ("quiet"). The `edge-agent` next to it (or `--agent PATH`) runs as a separate process
/// with `--dry-run`, the flood at max speed, the quiet capture paced to last about 3 s (a run
/// of a few milliseconds is over before its peak RSS can be read);
/// its output is read back for the last telemetry (beacons in view, cap, evictions) and the
/// two beacons' readings (does the resident keep publishing through the flood, is the newcomer
/// tracked). `--max-tracked N` sets `max_tracked_beacons` (left out: the agent's default, and
/// a config an agent without the key still loads). Results: docs/performance.md.
enum CrowdBenchmark {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static let resident = "ibeacon:\(uuid)-1-1"
    static let newcomer = "ibeacon:\(uuid)-2-2"

    static let advertisers = Option<Count>("advertisers", value: "n", help: "Distinct advertisers in the flood.", default: 300_000)
    static let rate = Option<Positive>("rate", value: "hz", help: "Advertisements a second in the flood.", default: 20_000)
    static let runs = Option<Count>("runs", value: "n", help: "Runs of each capture.", default: 1)
    static let maxTracked = Option<Int?>("max-tracked", value: "n", help: "The agent's max_tracked_beacons.",
                                         shownDefault: "the agent's")

    static let spec = CommandSpec("crowd", abstract: "edge-agent peak RSS and beacon-table evictions with 300 k distinct advertisers",
                                  options: [advertisers, rate, runs, maxTracked, BenchOptions.agent], run: benchmark(run))

    static func run(_ command: ParsedCommand) throws {
        let advertisers = try command[Self.advertisers].value
        let rate = try command[Self.rate].value
        let runs = try command[Self.runs].value
        let maxTracked = try command[Self.maxTracked]
        let agent = BenchOptions.agentPath(command)
        guard FileManager.default.isExecutableFile(atPath: agent) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: agent])
        }
        let dir = NSTemporaryDirectory() + "roomcast-crowd-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = dir + "/agent.yaml"
        try ("node: bench-pi\npublish:\n  telemetry_interval_s: 5\n" + (maxTracked.map { "max_tracked_beacons: \($0)\n" } ?? ""))
            .write(toFile: config, atomically: true, encoding: .utf8)

        print("capture: \(advertisers) distinct advertisers at \(Int(rate)) adv/s (\(String(format: "%.0f", Double(advertisers) / rate)) s)"
              + " beside one beacon at 20 Hz, then 10 s of it and a newcomer; quiet: the same without the flood")
        print("agent: \(agent)   max_tracked_beacons: \(maxTracked.map(String.init) ?? "default")")
        print("capture  speed   peak RSS MB   cpu s   wall s   in view   max    evicted   resident readings (longest gap s)   newcomer readings")
        let quietSpeed = String(format: "%.0f", max(1, (Double(advertisers) / rate + 10) / 3))
        for (label, flood, speed) in [("quiet", 0, quietSpeed), ("flood", advertisers, "max")] {
            let capture = dir + "/\(label).btsnoop"
            try writeCapture(path: capture, advertisers: flood, rate: rate, seconds: Double(advertisers) / rate)
            for _ in 0..<runs {
                let output = dir + "/\(label).jsonl"
                let (wall, cpu, rss) = try AgentBenchmark.measure(agent, ["run", "--config", config, "--source", "btsnoop:\(capture)",
                                                                          "--speed", speed, "--dry-run", "--log-level", "error"],
                                                                  stdout: output)
                let o = try read(output)
                unlink(output)
                print(label.padding(toLength: 8, withPad: " ", startingAt: 0) + pad(speed, 6)
                      + String(format: " %13.1f %7.2f %8.2f ", rss, cpu, wall)
                      + pad(o.inView, 9) + pad(o.max, 6) + pad(o.evicted, 10)
                      + pad("\(o.resident) (\(String(format: "%.2f", o.residentGap)))", 36) + pad("\(o.newcomer)", 19))
            }
            unlink(capture)
        }
    }

    static func pad(_ s: String, _ n: Int) -> String {
        s.count >= n ? " " + s : String(repeating: " ", count: n - s.count) + s
    }

    /// Writes the flood (advertiser `n`: address c0:11:<n>, iBeacon major 1000 + n / 65536,
    /// minor n % 65536) with the resident every 1/20 s, then 10 s of the resident and the newcomer.
    /// Without advertisers, the resident alone for as long as the flood would have lasted.
    static func writeCapture(path: String, advertisers: Int, rate: Double, seconds: Double) throws {
        let writer = try BTSnoopWriter(path: path)
        let t0 = 1_767_225_600.0
        func event(address: [UInt8], major: UInt16, minor: UInt16, rssi: Int) -> [UInt8] {
            let data = IBeaconAdvertisement.encode(uuidString: uuid, major: major, minor: minor, power: -59)!
            let p: [UInt8] = [0x02, 0x01, 0x03, 0x01] + address.reversed() + [UInt8(data.count)] + data
                + [UInt8(bitPattern: Int8(rssi))]
            return [0x3E, UInt8(p.count)] + p
        }
        let residentEvent = event(address: [0xC8, 0x1F, 0x66, 0x0A, 0x1B, 0x2C], major: 1, minor: 1, rssi: -65)
        let newcomerEvent = event(address: [0xC8, 0x1F, 0x66, 0x0A, 0x1B, 0x2D], major: 2, minor: 2, rssi: -60)
        let floodSeconds = seconds
        var nextResident = t0
        for n in 0..<advertisers {
            let t = t0 + Double(n) / rate
            while nextResident <= t {
                try writer.write(type: .event, bytes: residentEvent, timestamp: nextResident, direction: .controllerToHost)
                nextResident += 0.05
            }
            let address: [UInt8] = [0xC0, 0x11, UInt8(truncatingIfNeeded: n >> 24), UInt8(truncatingIfNeeded: n >> 16),
                                    UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
            try writer.write(type: .event, bytes: event(address: address, major: UInt16(1000 + n / 65536),
                                                        minor: UInt16(n % 65536), rssi: -70 - n % 20),
                             timestamp: t, direction: .controllerToHost)
        }
        let end = t0 + floodSeconds
        while nextResident < end + 10 {
            try writer.write(type: .event, bytes: residentEvent, timestamp: nextResident, direction: .controllerToHost)
            if nextResident >= end {
                try writer.write(type: .event, bytes: newcomerEvent, timestamp: nextResident + 0.01, direction: .controllerToHost)
            }
            nextResident += 0.05
        }
        try writer.flush()
        writer.shutdown()
    }

    struct Outcome {
        var inView = "-", max = "-", evicted = "-"
        var resident = 0, newcomer = 0
        var residentGap = 0.0
    }

    /// The last telemetry and the two beacons' readings of a `--dry-run` output.
    static func read(_ path: String) throws -> Outcome {
        guard let file = fopen(path, "r") else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path]) }
        defer { fclose(file) }
        var outcome = Outcome()
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        var lastResident: Double?
        while getline(&line, &capacity, file) > 0, let line {
            let text = String(cString: line)
            // Only the few lines of interest are decoded; the flood's readings are skipped by topic.
            let isTelemetry = text.contains("/telemetry\"")
            let isResident = text.contains("/beacons/\(resident)\"")
            let isNewcomer = text.contains("/beacons/\(newcomer)\"")
            guard isTelemetry || isResident || isNewcomer else { continue }
            let message = try MessageLogLine.decode(text.trimmingCharacters(in: .newlines))
            if isTelemetry {
                guard let t = try? WireFormat.decode(NodeTelemetry.self, from: message.payload) else { continue }
                outcome.inView = "\(t.beaconsInView)"
                outcome.max = t.beaconsMax.map(String.init) ?? "-"
                outcome.evicted = t.beaconsEvicted.map(String.init) ?? "-"
            } else if isResident {
                outcome.resident += 1
                if let last = lastResident { outcome.residentGap = Swift.max(outcome.residentGap, message.ts - last) }
                lastResident = message.ts
            } else {
                outcome.newcomer += 1
            }
        }
        return outcome
    }
}
