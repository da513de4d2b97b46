import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Shared
import RoomcastCLI

/// CPU time and peak RSS of the edge agent replaying a busy capture
/// (`--devices` iBeacons each advertising `--rate` times a second) in real time
/// and at max speed, as a separate `edge-agent` process writing `--dry-run`
/// output to a temporary file (its lines counted). Targets on a 2-core machine: < 2 % of one core and
/// < 20 MB RSS at real time. It measures the `edge-agent` built next to it (a
/// release build links it the way a Pi runs it, see Package.swift) or `--agent PATH`;
/// `--runs N` repeats each mode. Then the same agent scans a live radio played by this process
/// (`ControllerEmulator`) over each link in `--live stream,seqpacket,pty`, once per
/// `scan.burst_window_ms` in `--windows default,0`, stopped with SIGTERM after `--seconds` of
/// scanning. Results and method: docs/performance.md.
enum AgentBenchmark {
    static let devices = Option<Count>("devices", value: "n", help: "iBeacons in the capture.", default: 200)
    static let rate = Option<Positive>("rate", value: "hz", help: "Advertisements a second per device.", default: 10)
    static let seconds = Option<Positive>("seconds", value: "s", help: "Length of the capture.", default: 30)
    static let runs = Option<Count>("runs", value: "n", help: "Runs of each mode.", default: 1)
    static let live = Option<String>("live", value: "links", help: "Live links to play the controller over: stream, seqpacket, pty.",
                                     default: "stream,seqpacket,pty")
    static let windows = Option<String>("windows", value: "ms", help: "scan.burst_window_ms values to run each live link with (default: unset, as the agent ships).",
                                        default: "default,0")

    static let spec = CommandSpec("agent", abstract: "edge-agent CPU and RSS replaying a busy capture (real time and max)",
                                  options: [devices, rate, seconds, runs, live, windows, BenchOptions.agent], run: benchmark(run))

    static func run(_ command: ParsedCommand) throws {
        let devices = try command[Self.devices].value
        let rate = try command[Self.rate].value
        let seconds = try command[Self.seconds].value
        let runs = try command[Self.runs].value
        // One address per device (two bytes of it vary), and a capture with something in it that fits on disk.
        guard (1...65_535).contains(devices) else { throw command.usageError("--devices must be 1 … 65535, not \(devices)") }
        let perDevice = (seconds * rate).rounded(.down)
        guard perDevice >= 1, perDevice * Double(devices) <= 100_000_000 else {
            throw command.usageError("--seconds × --rate × --devices must come to 1 … 100,000,000 advertisements, with at least one per device")
        }
        let agent = BenchOptions.agentPath(command)
        guard FileManager.default.isExecutableFile(atPath: agent) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: agent])
        }
        let live: [ControllerEmulator.Link] = try command[Self.live].split(separator: ",").map {
            guard let link = ControllerEmulator.Link(rawValue: String($0)) else {
                throw command.usageError("--live takes stream, seqpacket or pty, not '\($0)'")
            }
            return link
        }
        // scan.burst_window_ms values to run each live link with (nil: unset, the link's default; 0 hands every packet over).
        let windows: [Int?] = try command[Self.windows].split(separator: ",").map {
            if $0 == "default" { return nil }
            guard let ms = Int($0) else { throw command.usageError("--windows takes 'default' or milliseconds, not '\($0)'") }
            return ms
        }
        let capture = NSTemporaryDirectory() + "roomcast-agent-bench-\(getpid()).btsnoop"
        let output = NSTemporaryDirectory() + "roomcast-agent-bench-\(getpid()).jsonl"
        let unbatched = NSTemporaryDirectory() + "roomcast-agent-bench-\(getpid())-window0.yaml"
        defer { unlink(capture); unlink(output); unlink(unbatched) }
        let count = try writeCapture(path: capture, devices: devices, rate: rate, seconds: seconds)
        print("capture: \(count) advertisements from \(devices) devices over \(Int(seconds)) s (\(Int(Double(count) / seconds)) adv/s)")
        print("agent: \(agent)")
        print("live: a controller played by this process over each link, \(Int(rate * Double(devices))) adv/s for \(Int(seconds)) s of scanning;")
        print("      hci: (the raw HCI socket) \(hciAvailability()); the seqpacket link reads the same way (one packet and its kernel timestamp per read)")
        print("mode                    wall s   cpu s  user s   sys s   % of one core   peak RSS MB   adv/s   wakeups/s   messages   load avg")
        var replayPercent: Double?
        func row(_ name: String, _ u: Usage, _ advertisements: Int) {
            let percent = 100 * u.cpu / u.wall
            if name == "replay realtime" { replayPercent = replayPercent ?? percent }
            let lines = (try? String(contentsOfFile: output, encoding: .utf8))?.split(separator: "\n").count ?? 0
            let ratio = name.hasPrefix("live"), reference = replayPercent.map { String(format: " (%.2fx replay)", percent / $0) } ?? ""
            print(name.padding(toLength: 22, withPad: " ", startingAt: 0)
                  + String(format: " %7.2f %7.2f %7.2f %7.2f %15.2f %13.1f %7.0f %11.0f %10d   ", u.wall, u.cpu, u.user, u.system, percent, u.rssMB,
                           Double(advertisements) / u.wall, Double(u.voluntarySwitches) / u.wall, lines)
                  + loadAverage() + (ratio ? reference : ""))
        }
        for speed in ["realtime", "max"] {
            for _ in 0..<runs {
                let usage = try run(agent, ["run", "--node", "bench-pi", "--source", "btsnoop:\(capture)",
                                            "--speed", speed, "--dry-run", "--log-level", "error"], stdout: output)
                row("replay \(speed)", usage, count)
            }
        }
        for link in live {
            for window in windows {
                for _ in 0..<runs {
                    let emulator = try ControllerEmulator(link: link, events: events(devices: devices), rate: rate * Double(devices))
                    defer { emulator.stop() }
                    var args = ["run", "--node", "bench-pi", "--source", emulator.source, "--dry-run", "--log-level", "error"]
                    if let window {
                        try "scan:\n  burst_window_ms: \(window)\n".write(toFile: unbatched, atomically: true, encoding: .utf8)
                        args += ["--config", unbatched]
                    }
                    let usage = try run(agent, args, stdout: output, stopAfterScanning: seconds, emulator: emulator)
                    row("live \(link.rawValue)" + (window.map { " w=\($0)" } ?? ""), usage, emulator.progress.sent)
                }
            }
        }
        print("(live rows: % of one core is CPU over the whole run, start and shutdown included, as for replay; w=N is")
        print(" scan.burst_window_ms N instead of the link's default (100 ms kernel-stamped, 50 ms read-stamped), 0 handing")
        print(" every packet over as it comes; messages are the --dry-run lines written; wakeups/s are the agent's voluntary")
        print(" context switches a second: its threads going to sleep and being woken, which on a VM cost more than the work they bring)")
    }

    /// Whether this kernel lets a process open the raw HCI socket at all.
    static func hciAvailability() -> String {
        let fd = socket(31 /* AF_BLUETOOTH */, Int32(SOCK_RAW.rawValue), 1 /* BTPROTO_HCI */)
        if fd >= 0 {
            close(fd)
            return "exists on this kernel, but needs a real adapter (or /dev/vhci) to carry reports; not measured"
        }
        return "is not available on this kernel (\(String(cString: strerror(errno))))"
    }

    /// The LE Advertising Report events of `devices` iBeacons, one report each (RSSI last).
    static func events(devices: Int) -> [[UInt8]] {
        (0..<devices).map { d in
            let data = IBeaconAdvertisement.encode(uuidString: "e2c56db5-dffb-48d2-b060-d0f5a71096e0", major: UInt16(d / 100),
                                                   minor: UInt16(d % 100), power: -59)!
            let address: [UInt8] = [UInt8(d & 0xFF), UInt8(d >> 8), 0x33, 0x44, 0x55, 0xC6]  // little-endian on the wire
            var p: [UInt8] = [0x02, 0x01, 0x03, 0x01] + address + [UInt8(data.count)] + data + [0]
            p[p.count - 1] = UInt8(bitPattern: Int8(-50 - d % 40))
            return [0x3E, UInt8(p.count)] + p
        }
    }

    /// Writes a btsnoop capture of `devices` iBeacons, each advertising `rate` times a second.
    static func writeCapture(path: String, devices: Int, rate: Double, seconds: Double) throws -> Int {
        let writer = try BTSnoopWriter(path: path)
        let t0 = 1_767_225_600.0
        let events = events(devices: devices)
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

    /// What a child cost: wall, user and system seconds, peak RSS (MB) and context switches.
    struct Usage {
        var wall: Double
        var user: Double
        var system: Double
        var rssMB: Double
        /// Times a thread of the child went to sleep (and was woken again).
        var voluntarySwitches: Int
        var cpu: Double { user + system }
    }

    /// Wall seconds, CPU seconds and peak RSS in MB of a child run by `run`.
    static func measure(_ path: String, _ args: [String], stdout: String = "/dev/null",
                        stopAfterScanning: Double = 0, emulator: ControllerEmulator? = nil) throws -> (Double, Double, Double) {
        let u = try run(path, args, stdout: stdout, stopAfterScanning: stopAfterScanning, emulator: emulator)
        return (u.wall, u.cpu, u.rssMB)
    }

    /// Runs a child to completion (stdout to `stdout`, stderr to /dev/null); wall seconds,
    /// CPU seconds (user + system) and context switches from wait4's rusage, and peak RSS in MB from the
    /// child's VmHWM, polled every 10 ms until it exits. Not rusage's ru_maxrss:
    /// posix_spawn starts the child in this process's memory (vfork), and Linux
    /// carries that memory's high-water mark into the child's ru_maxrss at exec,
    /// so it would report this benchmark's own size whenever that is the larger.
    /// Spawned with posix_spawn, not Foundation's Process, which reaps children itself.
    /// With `emulator`, the child is sent SIGTERM once the emulated controller has been scanning
    /// for `stopAfterScanning` seconds (and SIGKILL if scanning never starts within 30 s).
    static func run(_ path: String, _ args: [String], stdout: String = "/dev/null",
                    stopAfterScanning: Double = 0, emulator: ControllerEmulator? = nil) throws -> Usage {
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
        var signalled = false
        let spawned = Syscall.monotonicSeconds()
        while true {
            if let hwm = highWaterMarkKB(pid) { peakKB = max(peakKB, hwm) }
            let done = wait4(pid, &status, WNOHANG, &usage)
            if done == pid || (done < 0 && errno != EINTR) { break }
            if let emulator, !signalled {
                let now = Syscall.monotonicSeconds()
                if let since = emulator.progress.scanningSince, now - since >= stopAfterScanning {
                    kill(pid, SIGTERM)
                    signalled = true
                } else if emulator.progress.scanningSince == nil && now - spawned > 30 {
                    kill(pid, SIGKILL)
                    signalled = true
                }
            }
            usleep(10_000)
        }
        let wall = Date().timeIntervalSince(start)
        return Usage(wall: wall, user: Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6,
                     system: Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6,
                     rssMB: Double(peakKB) / 1024, voluntarySwitches: usage.ru_nvcsw)
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
