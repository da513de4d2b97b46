import Foundation
import RoomcastHCI
import Shared

/// CPU time and peak RSS of the edge agent replaying a busy capture
/// (`--devices` iBeacons each advertising `--rate` times a second) in real time
/// and at max speed, as a separate `edge-agent` process writing `--dry-run`
/// output to /dev/null. Targets on a 2-core machine: < 2 % of one core and
/// < 20 MB RSS at real time. It measures the `edge-agent` built next to it (a
/// release build links it the way a Pi runs it, see Package.swift) or `--agent PATH`;
/// `--runs N` repeats each mode. Results and method: docs/performance.md.
enum AgentBenchmark {
    static let devices = Option<Count>("devices", value: "n", help: "iBeacons in the capture.", default: 200)
    static let rate = Option<Positive>("rate", value: "hz", help: "Advertisements a second per device.", default: 10)
    static let seconds = Option<Positive>("seconds", value: "s", help: "Length of the capture.", default: 30)
    static let runs = Option<Count>("runs", value: "n", help: "Runs of each mode.", default: 1)

    static let spec = CommandSpec("agent", abstract: "edge-agent CPU and RSS replaying a busy capture (real time and max)",
                                  options: [devices, rate, seconds, runs, BenchOptions.agent], run: benchmark(run))

    static func run(_ command: ParsedCommand) throws {
        let devices = try command[Self.devices].value
        let rate = try command[Self.rate].value
        let seconds = try command[Self.seconds].value
        let runs = try command[Self.runs].value
        let agent = BenchOptions.agentPath(command)
        guard FileManager.default.isExecutableFile(atPath: agent) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: agent])
        }
        let capture = NSTemporaryDirectory() + "roomcast-agent-bench-\(getpid()).btsnoop"
        defer { unlink(capture) }
        let count = try writeCapture(path: capture, devices: devices, rate: rate, seconds: seconds)
        print("capture: \(count) advertisements from \(devices) devices over \(Int(seconds)) s (\(Int(Double(count) / seconds)) adv/s)")
        print("agent: \(agent)")
        print("mode       wall s   cpu s   % of one core   peak RSS MB   adv/s   load avg")
        for speed in ["realtime", "max"] {
            for _ in 0..<runs {
                let (wall, cpu, rss) = try measure(agent, ["run", "--node", "bench-pi", "--source", "btsnoop:\(capture)",
                                                           "--speed", speed, "--dry-run", "--log-level", "error"])
                print(speed.padding(toLength: 9, withPad: " ", startingAt: 0)
                      + String(format: " %7.2f %7.2f %15.2f %13.1f %7.0f   ", wall, cpu, 100 * cpu / wall, rss,
                               Double(count) / wall) + loadAverage())
            }
        }
    }

    /// Writes a btsnoop capture of `devices` iBeacons, each advertising `rate` times a second.
    static func writeCapture(path: String, devices: Int, rate: Double, seconds: Double) throws -> Int {
        let writer = try BTSnoopWriter(path: path)
        let t0 = 1_767_225_600.0
        var events: [[UInt8]] = []
        for d in 0..<devices {
            let data = IBeaconAdvertisement.encode(uuidString: "e2c56db5-dffb-48d2-b060-d0f5a71096e0", major: UInt16(d / 100),
                                                   minor: UInt16(d % 100), power: -59)!
            let address: [UInt8] = [UInt8(d & 0xFF), UInt8(d >> 8), 0x33, 0x44, 0x55, 0xC6]  // little-endian on the wire
            var p: [UInt8] = [0x02, 0x01, 0x03, 0x01] + address + [UInt8(data.count)] + data + [0]
            p[p.count - 1] = UInt8(bitPattern: Int8(-50 - d % 40))
            events.append([0x3E, UInt8(p.count)] + p)
        }
        let total = Int(seconds * rate) * devices
        let step = 1 / (rate * Double(devices))
        for i in 0..<total {
            var e = events[i % devices]
            e[e.count - 1] = UInt8(bitPattern: Int8(-50 - (i * 7) % 30))
            try writer.write(type: .event, bytes: e, timestamp: t0 + Double(i) * step, direction: .controllerToHost)
        }
        try writer.flush()
        writer.shutdown()
        return total
    }

    /// The 1-minute load average, to judge how busy the machine was.
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").first.map(String.init) ?? "?"
    }

    /// Runs a child to completion (stdout to `stdout`, stderr to /dev/null); wall seconds,
    /// CPU seconds (user + system) from wait4's rusage, and peak RSS in MB from the
    /// child's VmHWM, polled every 10 ms until it exits. Not rusage's ru_maxrss:
    /// posix_spawn starts the child in this process's memory (vfork), and Linux
    /// carries that memory's high-water mark into the child's ru_maxrss at exec,
    /// so it would report this benchmark's own size whenever that is the larger.
    /// Spawned with posix_spawn, not Foundation's Process, which reaps children itself.
    static func measure(_ path: String, _ args: [String], stdout: String = "/dev/null") throws -> (Double, Double, Double) {
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([path] + args).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let start = Date()
        let rc = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard rc == 0 else { throw POSIXError(POSIXErrorCode(rawValue: rc) ?? .EIO) }
        var usage = rusage()
        var status: Int32 = 0
        var peakKB = 0
        while true {
            if let hwm = highWaterMarkKB(pid) { peakKB = max(peakKB, hwm) }
            let done = wait4(pid, &status, WNOHANG, &usage)
            if done == pid || (done < 0 && errno != EINTR) { break }
            usleep(10_000)
        }
        let wall = Date().timeIntervalSince(start)
        let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return (wall, cpu, Double(peakKB) / 1024)
    }

    /// `VmHWM` of a running process in kB (nil once it has exited).
    static func highWaterMarkKB(_ pid: pid_t) -> Int? {
        let fd = open("/proc/\(pid)/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
        guard n > 0 else { return nil }
        let text = String(decoding: buffer[0..<n], as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
    }
}
