import RoomcastFusion
import Shared
import RoomcastAgent

/// Baseline after Bermuda's area switching: each second the incumbent node is
/// challenged by every node reporting a shorter distance; a challenger wins when it
/// is `decisive` (30 %) closer, or `marginal` (15 %) closer and its worst distance of
/// the last `history` one-second intervals beats the incumbent's best.
public struct BermudaEstimator: PresenceEstimator, Sendable {
    public var decisive = 0.30
    public var marginal = 0.15
    public var history = 5
    /// A node's distance older than this cannot win, and an incumbent this stale loses to anyone.
    public var staleAfter = 10.0
    public var awayAfter = 30.0
    /// How each node's distance is formed from its readings.
    public var distanceSource: DistanceSource = .filtered
    /// Path-loss exponent for the raw-RSSI sources.
    public var exponent = 2.0

    /// Where the compared distances come from.
    public enum DistanceSource: Sendable {
        /// The reading's own (ranging-filtered) distance.
        case filtered
        /// The distance of the reading's raw RSSI.
        case raw
        /// Bermuda's own smoothing of raw distances: the mean of the last `n`, except
        /// that a closer raw value is taken at once.
        case movingAverage(Int)
    }
    private var book: DecisionBook
    /// Per beacon and node: the latest distance and its per-second history, newest first.
    private var nodes: [BeaconID: [String: Track]] = [:]
    private var incumbent: [BeaconID: String] = [:]
    private var offline: Set<String> = []

    struct Track {
        var distance: Double
        var ts: Double
        var perSecond: [Double] = []
        var recentRaw: [Double] = []
    }

    public init(site: SiteModel) { book = DecisionBook(site: site) }

    public mutating func ingest(_ reading: BeaconReading, now: Double) {
        var t = nodes[reading.id]?[reading.node] ?? Track(distance: reading.distance, ts: reading.ts)
        let raw = DistanceModel.logDistance(exponent: exponent)
            .distance(rssi: Double(reading.rssi), power: Double(reading.power)) ?? reading.distance
        switch distanceSource {
        case .filtered:
            t.distance = reading.distance
        case .raw:
            t.distance = raw
        case .movingAverage(let n):
            if reading.ts - t.ts > staleAfter { t.recentRaw.removeAll() }
            t.recentRaw.append(raw)
            if t.recentRaw.count > max(1, n) { t.recentRaw.removeFirst() }
            let mean = t.recentRaw.reduce(0, +) / Double(t.recentRaw.count)
            t.distance = min(raw, mean)
        }
        t.ts = reading.ts
        nodes[reading.id, default: [:]][reading.node] = t
    }

    public mutating func nodeStatus(_ node: String, online: Bool, now: Double) {
        if online { offline.remove(node) } else { offline.insert(node) }
    }

    public mutating func tick(now: Double) -> [PresenceDecision] {
        for id in nodes.keys.sorted() {
            var tracks = nodes[id]!
            // One history entry per tick: the distance in force during that interval.
            for name in tracks.keys {
                tracks[name]!.perSecond.insert(tracks[name]!.distance, at: 0)
                if tracks[name]!.perSecond.count > history { tracks[name]!.perSecond.removeLast() }
            }
            nodes[id] = tracks
            let fresh = tracks.filter { now - $0.value.ts <= staleAfter && !offline.contains($0.key) }
            var best = incumbent[id].flatMap { fresh[$0] != nil ? $0 : nil }
            for name in fresh.keys.sorted() where name != best {
                let challenger = fresh[name]!
                guard let current = best, let inc = fresh[current] else {
                    best = name
                    continue
                }
                guard challenger.distance < inc.distance, inc.distance > 0 else { continue }
                let closer = (inc.distance - challenger.distance) / inc.distance
                if closer >= decisive {
                    best = name
                } else if closer >= marginal, challenger.perSecond.count >= history, inc.perSecond.count >= history,
                          challenger.perSecond.max()! < inc.perSecond.min()! {
                    best = name
                }
            }
            let lastSeen = tracks.values.map(\.ts).max()
            if let best {
                incumbent[id] = best
                book.place(id, node: best, distance: fresh[best]?.distance, lastSeen: lastSeen, at: now,
                           reason: "bermuda")
            } else if let seen = lastSeen, now - seen > awayAfter {
                incumbent[id] = nil
                book.place(id, node: nil, distance: nil, lastSeen: seen, at: now, reason: "silent")
            }
        }
        return book.drain()
    }

    public func decision(for id: BeaconID) -> PresenceDecision? { book.decisions[id] }
}
