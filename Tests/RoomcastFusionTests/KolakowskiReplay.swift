import Foundation
import Testing
import RoomcastFusion
import Shared

/// The Kolakowski flat recordings (Fixtures/README.md), replayed packet by packet
/// through the shared ranging step into any `PresenceEstimator`, and scored with
/// the rules of the data set's README.
struct KolakowskiReplay {
    struct Packet { var t: Double; var node: Int; var rssi: Int }
    struct Span { var t0: Double; var t1: Double; var room: String? }

    let name: String
    let site: SiteModel
    let packets: [Packet]
    let truth: [Span]
    static let beacon = BeaconID("ibeacon:5d9d2690-1512-5a3d-9c81-095046a88cc7-1-1")!

    static func load(_ name: String) throws -> KolakowskiReplay {
        func resource(_ file: String) throws -> String {
            let url = try #require(Bundle.module.url(forResource: "Fixtures/\(file)", withExtension: nil))
            return try String(contentsOf: url, encoding: .utf8)
        }
        let site = try JSONDecoder().decode(SiteModel.self, from: Data(try resource("kolakowski-site.json").utf8))
        var packets: [Packet] = []
        for line in try resource("kolakowski-\(name)-packets.csv").split(separator: "\n") where !line.hasPrefix("#") {
            let f = line.split(separator: ",")
            guard f.count == 3, let ms = Int(f[0]), let n = Int(f[1]), let r = Int(f[2]) else { continue }
            packets.append(Packet(t: Double(ms) / 1000, node: n, rssi: r))
        }
        packets.sort { $0.t < $1.t }
        var truth: [Span] = []
        for line in try resource("kolakowski-\(name)-truth.csv").split(separator: "\n", omittingEmptySubsequences: false)
        where !line.hasPrefix("#") && !line.isEmpty {
            let f = line.split(separator: ",", omittingEmptySubsequences: false)
            guard f.count == 3, let a = Double(f[0]), let b = Double(f[1]) else { continue }
            truth.append(Span(t0: a, t1: b, room: f[2].isEmpty ? nil : String(f[2])))
        }
        return KolakowskiReplay(name: name, site: site, packets: packets, truth: truth)
    }

    /// Replays every packet (times relative to the recording's t0) and returns the
    /// decision changes as (time, room).
    func run<E: PresenceEstimator>(_ estimator: inout E, tickEvery: Double = 0.1) -> [(t: Double, room: String?)] {
        var tables = [RangingTable](repeating: RangingTable(), count: site.nodes.count)
        var seq = [UInt64](repeating: 0, count: site.nodes.count)
        var changes: [(t: Double, room: String?)] = []
        var nextTick = (packets.first?.t ?? 0)
        func tick(_ t: Double) {
            for d in estimator.tick(now: t) where d.id == Self.beacon { changes.append((t, d.room)) }
        }
        for p in packets {
            while nextTick <= p.t { tick(nextTick); nextTick += tickEvery }
            let e = tables[p.node].ingest(Self.beacon, rssi: p.rssi, power: -51, at: p.t)
            seq[p.node] += 1
            var r = BeaconReading(id: Self.beacon, node: site.nodes[p.node].name, ts: p.t, seq: seq[p.node],
                                  rssi: e.rssi, rssiFiltered: e.rssiFiltered, power: e.power,
                                  distance: e.distance, proximity: e.proximity, kind: .iBeacon, mac: "00:00:00:00:00:00")
            r.interval = e.interval
            estimator.ingest(r, now: p.t)
        }
        let end = (truth.last?.t1 ?? nextTick) + 1
        while nextTick <= end { tick(nextTick); nextTick += tickEvery }
        return changes
    }

    struct Score: CustomStringConvertible {
        var accuracy: Double
        var flapsPerHour: Double
        var medianLatency: Double
        var samples: Int
        var description: String {
            String(format: "accuracy %.3f, flaps/h %.0f, median switch %.1f s (%d samples)",
                   accuracy, flapsPerHour, medianLatency, samples)
        }
    }

    /// Settled accuracy, flaps per hour and median switch latency, as the data README defines them.
    func score(_ changes: [(t: Double, room: String?)]) -> Score {
        func decided(at t: Double) -> String?? {
            var result: String?? = .none
            for c in changes { if c.t <= t { result = .some(c.room) } else { break } }
            return result
        }
        let start = packets.first?.t ?? 0
        var correct = 0, total = 0
        for span in truth {
            var t = (span.t0 + 10).rounded(.up)
            while t < span.t1 {
                if t >= start + 30 {
                    total += 1
                    if case .some(let room) = decided(at: t), room == span.room { correct += 1 }
                }
                t += 1
            }
        }
        // True changes: boundaries between adjacent spans of different rooms.
        var trueChanges: [Double] = []
        for i in 1..<max(truth.count, 1) where truth[i].t0 - truth[i - 1].t1 < 1 && truth[i].room != truth[i - 1].room {
            trueChanges.append(truth[i].t0)
        }
        var flaps = 0
        var hours = 0.0
        for span in truth { hours += (span.t1 - span.t0) / 3600 }
        for c in changes where truth.contains(where: { c.t >= $0.t0 && c.t < $0.t1 }) {
            if !trueChanges.contains(where: { $0 <= c.t && c.t - $0 <= 30 }) { flaps += 1 }
        }
        var latencies: [Double] = []
        for i in 1..<max(truth.count, 1) where truth[i].t1 - truth[i].t0 >= 30
            && truth[i].t0 - truth[i - 1].t1 < 1 && truth[i].room != truth[i - 1].room {
            let span = truth[i]
            if case .some(let room) = decided(at: span.t0), room == span.room { latencies.append(0); continue }
            if let hit = changes.first(where: { $0.t >= span.t0 && $0.t < span.t1 && $0.room == span.room }) {
                latencies.append(hit.t - span.t0)
            } else {
                latencies.append(span.t1 - span.t0)
            }
        }
        latencies.sort()
        let median = latencies.isEmpty ? 0 : latencies[latencies.count / 2]
        return Score(accuracy: total > 0 ? Double(correct) / Double(total) : 0,
                     flapsPerHour: hours > 0 ? Double(flaps) / hours : 0,
                     medianLatency: median, samples: total)
    }
}

/// Nearest node on an EMA of RSSI, decided every second: the README's simple
/// rule, used to check this scorer against the reference numbers.
struct NearestEMABaseline: PresenceEstimator {
    var site: SiteModel
    var ema: [String: Double] = [:]
    var last: [String: Double] = [:]
    var room: String?
    var lastDecision = -Double.infinity

    mutating func ingest(_ reading: BeaconReading, now: Double) {
        let x = Double(reading.rssi)
        ema[reading.node] = ema[reading.node].map { $0 + 0.2 * (x - $0) } ?? x
        last[reading.node] = reading.ts
    }
    mutating func nodeStatus(_ node: String, online: Bool, now: Double) {}
    mutating func tick(now: Double) -> [PresenceDecision] {
        guard now - lastDecision >= 1 else { return [] }
        lastDecision = now
        let best = ema.filter { (last[$0.key] ?? 0) > now - 5 }.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }
        let r = best.flatMap { b in site.nodes.first { $0.name == b.key }?.room }
        guard r != room else { return [] }
        room = r
        return [PresenceDecision(id: KolakowskiReplay.beacon, name: nil, room: r, floor: nil, distance: nil,
                                 confidence: 1, node: best?.key, since: now, lastSeen: now, evidence: [], ts: now)]
    }
    func decision(for id: BeaconID) -> PresenceDecision? { nil }
}
