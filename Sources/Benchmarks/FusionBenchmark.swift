import Foundation
import RoomcastFusion
import Shared
import RoomcastCLI

/// Replay throughput and memory of the fusion engine: many beacons heard by many
/// nodes, readings generated ahead of time-critical code, virtual time ticked once
/// a second as the aggregator does. Prints readings/s, the process RSS and its peak.
enum FusionBenchmark {
    static let beacons = Option<Count>("beacons", value: "n", help: "Beacons tracked.", default: 10_000)
    static let nodes = Option<Count>("nodes", value: "n", help: "Receiver nodes.", default: 50)
    static let heardBy = Option<Count>("heard-by", value: "n", help: "Nodes hearing each beacon.", default: 8)
    static let seconds = Option<Count>("seconds", value: "s", help: "Virtual seconds to replay.", default: 30)
    static let geometry = Flag("geometry", help: "Give nodes positions and rooms polygons (grid estimate).")
    static let nodeBeacons = Flag("node-beacons", help: "Every node also transmits a beacon its neighbours hear; without "
                                  + "--geometry the rooms then match fingerprints, and a reference run with fingerprints off is printed beside it.")

    static let spec = CommandSpec("fusion", abstract: "fusion engine throughput and memory (beacons x nodes)",
                                  options: [beacons, nodes, heardBy, seconds, geometry, nodeBeacons, BenchOptions.fusionConfig],
                                  run: benchmark(run))

    static func run(_ command: ParsedCommand) throws {
        let beacons = try command[Self.beacons].value, nodeCount = try command[nodes].value, seconds = try command[Self.seconds].value
        let heardBy = min(try command[Self.heardBy].value, nodeCount)
        let geometry = command[Self.geometry], nodeBeacons = command[Self.nodeBeacons]
        var settings = FusionSettings()
        if let file = try BenchOptions.fusionSettings(command) {
            settings = file
            print("settings from --fusion-config \(command[BenchOptions.fusionConfig] ?? "")")
        }
        let load = Load(beacons: beacons, nodeCount: nodeCount, heardBy: heardBy, seconds: seconds,
                        geometry: geometry, nodeBeacons: nodeBeacons)
        let rssBefore = residentMegabytes()
        let fingerprinting = nodeBeacons && !geometry && settings.fingerprints
        let run = load.replay(settings: settings)
        var reference: Run?
        if fingerprinting {
            // The same load with fingerprints off, in this process, for the ratio (after the
            // measured run, so that run's RSS is its own).
            var off = settings
            off.fingerprints = false
            reference = load.replay(settings: off)
        }
        print("fusion: \(beacons) beacons × \(nodeCount) nodes (each heard by \(heardBy)), \(seconds) s virtual, "
            + "geometry \(run.usedGeometry ? "on" : "off")\(nodeBeacons ? ", node beacons" : "")"
            + "\(fingerprinting ? ", fingerprints" : "")")
        print(String(format: "  readings: %d in %.3f s = %.0f readings/s (ingest only %.0f/s; ticks %.1f ms each)",
                     run.readings, run.total, Double(run.readings) / run.total, Double(run.readings) / run.ingestTime,
                     run.tickTime / Double(seconds) * 1000))
        if let reference {
            print(String(format: "  fingerprints off (reference): %.0f readings/s; ticks %.1f ms each; on/off throughput %.2f",
                         Double(reference.readings) / reference.total, reference.tickTime / Double(seconds) * 1000,
                         (Double(run.readings) / run.total) / (Double(reference.readings) / reference.total)))
        }
        print("  decisions changed: \(run.changes); tracked \(run.tracked); geometry evaluations \(run.geometryEvaluations)")
        print(String(format: "  RSS: %.0f MB with the engine (%.0f MB before it); peak (VmHWM) %.0f MB, the pre-generated readings included",
                     run.residentMegabytes, rssBefore, run.peakMegabytes))
    }

    /// What one replay measured.
    struct Run {
        var readings = 0, changes = 0, tracked = 0
        var geometryEvaluations: UInt64 = 0
        var ingestTime = 0.0, tickTime = 0.0
        var usedGeometry = false
        /// Process RSS with the engine still alive, and the process's peak so far (MB).
        var residentMegabytes = 0.0, peakMegabytes = 0.0
        var total: Double { ingestTime + tickTime }
    }

    /// A synthetic site and its readings: a row of 5 m rooms, two nodes each; each beacon
    /// at a home node, heard by its neighbours once a virtual second.
    struct Load {
        var beacons: Int, nodeCount: Int, heardBy: Int, seconds: Int, geometry: Bool, nodeBeacons: Bool

        func site() -> SiteModel {
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
                site.nodes.append(.init(name: "node-\(n)", room: "room-\(r)", position: position,
                                        beacon: nodeBeacons ? Self.nodeBeacon(n) : nil))
            }
            return site
        }

        static func nodeBeacon(_ n: Int) -> BeaconID {
            .iBeacon(uuid: UUID(uuidString: "F7826DA6-4FA2-4E98-8024-BC5B71E0893E")!, major: 900, minor: UInt16(n + 1))
        }

        func replay(settings: FusionSettings) -> Run {
            let site = site()
            let nodeNames = site.nodes.map(\.name)
            let nodeBeaconIDs = (0..<nodeCount).map(Self.nodeBeacon)
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
            let t0 = 1_800_000_000.0
            var engine = FusionEngine(site: site, settings: settings)
            var seq = [UInt64](repeating: 0, count: nodeCount)
            var run = Run()
            func read(_ id: BeaconID, by n: Int, offset k: Int, at ts: Double) {
                seq[n] &+= 1
                template.id = id
                template.node = nodeNames[n]
                template.seq = seq[n]
                template.ts = ts
                let noise = Double(rng.next() % 9) - 4
                let rssi = -60 - 3 * Double(abs(k - heardBy / 2)) + noise
                template.rssi = Int(rssi)
                template.rssiFiltered = rssi
                engine.ingest(template, now: ts + 0.05)
                run.readings += 1
            }
            // Each virtual second every beacon is read once by each node that hears it.
            for s in 0..<seconds {
                let start = DispatchTime.now().uptimeNanoseconds
                if nodeBeacons {
                    for tx in 0..<nodeCount {
                        for k in 0..<heardBy {
                            let n = (tx + k - heardBy / 2 + nodeCount) % nodeCount
                            if n != tx { read(nodeBeaconIDs[tx], by: n, offset: k, at: t0 + Double(s)) }
                        }
                    }
                }
                for b in 0..<beacons {
                    for k in 0..<heardBy {
                        read(ids[b], by: (home[b] + k - heardBy / 2 + nodeCount) % nodeCount, offset: k,
                             at: t0 + Double(s) + Double(b) / Double(beacons))
                    }
                }
                let mid = DispatchTime.now().uptimeNanoseconds
                run.changes += engine.tick(now: t0 + Double(s + 1)).count
                let end = DispatchTime.now().uptimeNanoseconds
                run.ingestTime += Double(mid - start) / 1e9
                run.tickTime += Double(end - mid) / 1e9
            }
            run.tracked = engine.trackedBeacons
            run.geometryEvaluations = engine.counters.geometryEvaluations
            run.usedGeometry = engine.usesGeometry
            run.residentMegabytes = FusionBenchmark.residentMegabytes()
            run.peakMegabytes = FusionBenchmark.residentMegabytes(field: "VmHWM:")
            return run
        }
    }

    /// Resident set size (`VmRSS:`), or its peak (`VmHWM:`), from /proc/self/status (0 where unavailable).
    static func residentMegabytes(field: String = "VmRSS:") -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            let kb = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
            return kb / 1024
        }
        return 0
    }

}
