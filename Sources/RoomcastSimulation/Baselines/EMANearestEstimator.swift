import RoomcastFusion
import Shared

/// Baseline: an exponential moving average of each node's reported RSSI; each
/// second, the room of the node with the highest average.
public struct EMANearestEstimator: PresenceEstimator, Sendable {
    /// Weight of a new reading.
    public var alpha: Double
    public var staleAfter = 10.0
    public var awayAfter = 30.0
    private var book: DecisionBook
    private var ema: [BeaconID: [String: (value: Double, ts: Double)]] = [:]
    private var offline: Set<String> = []

    public init(site: SiteModel, alpha: Double = 0.3) {
        book = DecisionBook(site: site)
        self.alpha = alpha
    }

    public mutating func ingest(_ reading: BeaconReading, now: Double) {
        let x = Double(reading.rssi)
        var perNode = ema[reading.id] ?? [:]
        if let old = perNode[reading.node], reading.ts - old.ts <= staleAfter {
            perNode[reading.node] = (old.value + alpha * (x - old.value), reading.ts)
        } else {
            perNode[reading.node] = (x, reading.ts)
        }
        ema[reading.id] = perNode
    }

    public mutating func nodeStatus(_ node: String, online: Bool, now: Double) {
        if online { offline.remove(node) } else { offline.insert(node) }
    }

    public mutating func tick(now: Double) -> [PresenceDecision] {
        for id in ema.keys.sorted() {
            let perNode = ema[id]!
            let lastSeen = perNode.values.map(\.ts).max()
            let fresh = perNode.filter { now - $0.value.ts <= staleAfter && !offline.contains($0.key) }
            if let best = fresh.max(by: { ($0.value.value, $1.key) < ($1.value.value, $0.key) }) {
                book.place(id, node: best.key, distance: nil, lastSeen: lastSeen, at: now, reason: "ema strongest")
            } else if let seen = lastSeen, now - seen > awayAfter {
                book.place(id, node: nil, distance: nil, lastSeen: seen, at: now, reason: "silent")
            }
        }
        return book.drain()
    }

    public func decision(for id: BeaconID) -> PresenceDecision? { book.decisions[id] }
}
