import Foundation
import RoomcastFusion
import Shared

/// Replay throughput and memory of the fusion engine: many beacons heard by many
/// nodes, readings generated ahead of time-critical code, virtual time ticked once
/// a second as the aggregator does. Prints readings/s and the process RSS.
enum FusionBenchmark {
    static let usage = """
        USAGE: roomcast-bench fusion [options]

        OPTIONS:
          --beacons <n>    Beacons tracked (default: 10000).
          --nodes <n>      Receiver nodes (default: 50).
          --heard-by <n>   Nodes hearing each beacon (default: 8).
          --seconds <s>    Virtual seconds to replay (default: 30).
          --geometry       Give nodes positions and rooms polygons (grid estimate).

        """

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(arguments: [String]) throws {
        var beacons = 10_000, nodeCount = 50, heardBy = 8, seconds = 30, geometry = false
        var i = 0
        func int() throws -> Int {
            i += 1
            guard i < arguments.count, let v = Int(arguments[i]), v > 0 else {
                throw Failure(description: "\(arguments[i - 1]) needs a positive number\n\(usage)")
            }
            return v
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--beacons": beacons = try int()
            case "--nodes": nodeCount = try int()
            case "--heard-by": heardBy = try int()
            case "--seconds": seconds = try int()
            case "--geometry": geometry = true
            case "--help", "-h": print(usage); return
            default: throw Failure(description: "unknown option \(arguments[i])\n\(usage)")
            }
            i += 1
        }
        heardBy = min(heardBy, nodeCount)

        // A row of rooms, two nodes per room, 5 m × 5 m each.
        let roomCount = max(1, nodeCount / 2)
        var site = SiteModel()
        for r in 0..<roomCount {
            let x0 = Double(r) * 5
            site.rooms.append(.init(name: "room-\(r)",
                                    polygon: geometry ? [[x0, 0], [x0 + 5, 0], [x0 + 5, 5], [x0, 5]] : nil))
        }
        for n in 0..<nodeCount {
            let r = min(n / 2, roomCount - 1)
            let position: [Double]? = geometry ? [Double(r) * 5 + 1 + Double(n % 2) * 3, 2.5, 2] : nil
            site.nodes.append(.init(name: "node-\(n)", room: "room-\(r)", position: position))
        }
        let nodeNames = site.nodes.map(\.name)
        let ids = (0..<beacons).map { b in
            BeaconID.iBeacon(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!,
                             major: UInt16(b / 65536 + 1), minor: UInt16(b % 65536))
        }
        // Where each beacon sits: a home node; it is heard by its neighbours.
        var rng = SeededRandom(seed: 42)
        let home = (0..<beacons).map { _ in Int(rng.next() % UInt64(nodeCount)) }
        var template = BeaconReading(id: ids[0], node: nodeNames[0], ts: 0, seq: 0, rssi: -70, rssiFiltered: -70,
                                     power: -59, distance: 3, proximity: .near, kind: .iBeacon,
                                     mac: "aa:bb:cc:dd:ee:ff")
        template.interval = 1

        let rssBefore = residentMegabytes()
        let t0 = 1_800_000_000.0
        var settings = FusionSettings()
        if let json = ProcessInfo.processInfo.environment["BENCH_FUSION"] {
            settings = try JSONDecoder().decode(FusionSettings.self, from: Data(json.utf8))
            print("settings from BENCH_FUSION: \(json)")
        }
        var engine = FusionEngine(site: site, settings: settings)
        var seq = [UInt64](repeating: 0, count: nodeCount)
        var readings = 0
        var changes = 0
        var ingestTime = 0.0, tickTime = 0.0
        // Each virtual second every beacon is read once by each node that hears it.
        for s in 0..<seconds {
            let start = DispatchTime.now().uptimeNanoseconds
            for b in 0..<beacons {
                let base = t0 + Double(s) + Double(b) / Double(beacons)
                for k in 0..<heardBy {
                    let n = (home[b] + k - heardBy / 2 + nodeCount) % nodeCount
                    seq[n] &+= 1
                    template.id = ids[b]
                    template.node = nodeNames[n]
                    template.seq = seq[n]
                    template.ts = base
                    let noise = Double(rng.next() % 9) - 4
                    let rssi = -60 - 3 * Double(abs(k - heardBy / 2)) + noise
                    template.rssi = Int(rssi)
                    template.rssiFiltered = rssi
                    engine.ingest(template, now: base + 0.05)
                    readings += 1
                }
            }
            let mid = DispatchTime.now().uptimeNanoseconds
            changes += engine.tick(now: t0 + Double(s + 1)).count
            let end = DispatchTime.now().uptimeNanoseconds
            ingestTime += Double(mid - start) / 1e9
            tickTime += Double(end - mid) / 1e9
        }
        let total = ingestTime + tickTime
        print("fusion: \(beacons) beacons × \(nodeCount) nodes (each heard by \(heardBy)), \(seconds) s virtual, geometry \(engine.usesGeometry ? "on" : "off")")
        print(String(format: "  readings: %d in %.3f s = %.0f readings/s (ingest only %.0f/s; ticks %.1f ms each)",
                     readings, total, Double(readings) / total, Double(readings) / ingestTime,
                     tickTime / Double(seconds) * 1000))
        print("  decisions changed: \(changes); tracked \(engine.trackedBeacons); geometry evaluations \(engine.counters.geometryEvaluations)")
        print(String(format: "  RSS: %.0f MB (%.0f MB before the engine)", residentMegabytes(), rssBefore))
    }

    /// Resident set size from /proc/self/status (0 where unavailable).
    static func residentMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kb = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
            return kb / 1024
        }
        return 0
    }

}
