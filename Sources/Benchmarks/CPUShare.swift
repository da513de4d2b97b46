import Foundation
import Shared

/// Where the machine's CPU went between two moments, from /proc: the whole machine's busy time
/// (all cores, steal included: time the hypervisor gave to someone else is not ours either) and
/// given processes' user + system time. Tells a throughput step what limited it: the broker, this
/// process (load generator and aggregator), or a machine already full with other work.
struct CPUShare {
    struct Sample {
        var machineBusy: Double
        var machineTotal: Double
        var processes: [Double]
        var at: Double
    }

    /// Busy share between two samples.
    struct Interval {
        /// Per cent of all cores (100 = every core busy).
        var machineBusy: Double
        /// Each process, per cent of one core.
        var processes: [Double]
        /// Everything else (other processes, the kernel's own work), per cent of one core.
        var others: Double
        var cores: Int
    }

    static var cores: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }
    private static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    static func sample(_ pids: [pid_t]) -> Sample {
        var busy = 0.0, total = 0.0
        if let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
           let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ") {
            // user nice system idle iowait irq softirq steal (guest time is already in user)
            let v = line.split(separator: " ").dropFirst().prefix(8).compactMap { Double($0) }
            if v.count == 8 {
                total = v.reduce(0, +)
                busy = total - v[3] - v[4]
            }
        }
        let processes = pids.map { pid -> Double in
            // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return 0 }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let u = Double(fields[11]), let s = Double(fields[12]) else { return 0 }
            return (u + s) / ticksPerSecond
        }
        return Sample(machineBusy: busy, machineTotal: total, processes: processes, at: Syscall.monotonicSeconds())
    }

    static func between(_ a: Sample, _ b: Sample) -> Interval {
        let wall = max(1e-9, b.at - a.at)
        let machine = b.machineTotal > a.machineTotal ? 100 * (b.machineBusy - a.machineBusy) / (b.machineTotal - a.machineTotal) : 0
        let processes = zip(a.processes, b.processes).map { 100 * ($1 - $0) / wall }
        let others = max(0, machine * Double(cores) - processes.reduce(0, +))
        return Interval(machineBusy: machine, processes: processes, others: others, cores: cores)
    }
}
