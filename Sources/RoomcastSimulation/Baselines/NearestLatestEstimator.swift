import RoomcastFusion
import Shared

/// Baseline: each second, the room of the node whose latest reading had the
/// strongest raw RSSI. No smoothing, no hysteresis.
public struct NearestLatestEstimator: PresenceEstimator, Sendable {
    /// Readings older than this are ignored.
    public var staleAfter = 10.0
    /// No fresh reading for this long → away.
    public var awayAfter = 30.0
    private var book: DecisionBook
    private var latest: [BeaconID: [String: BeaconReading]] = [:]
    private var offline: Set<String> = []

    public init(site: SiteModel) { book = DecisionBook(site: site) }

    public mutating func ingest(_ reading: BeaconReading, now: Double) {
        latest[reading.id, default: [:]][reading.node] = reading
    }

    public mutating func nodeStatus(_ node: String, online: Bool, now: Double) {
        if online { offline.remove(node) } else { offline.insert(node) }
    }

    public mutating func tick(now: Double) -> [PresenceDecision] {
        for id in latest.keys.sorted() {
            let fresh = latest[id]!.values.filter { now - $0.ts <= staleAfter && !offline.contains($0.node) }
            let lastSeen = latest[id]!.values.map(\.ts).max()
            if let best = fresh.max(by: { ($0.rssi, $1.node) < ($1.rssi, $0.node) }) {
                book.place(id, node: best.node, distance: best.distance, lastSeen: lastSeen, at: now, reason: "strongest latest")
            } else if let seen = lastSeen, now - seen > awayAfter {
                book.place(id, node: nil, distance: nil, lastSeen: seen, at: now, reason: "silent")
            }
        }
        return book.drain()
    }

    public func decision(for id: BeaconID) -> PresenceDecision? { book.decisions[id] }
}
