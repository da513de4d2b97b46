import Shared
import Synchronization

/// Remembers the `BeaconID` string built for each beacon identity, so the per-advertisement
/// path does not format a UUID into a string every time the same beacon is heard.
/// Bounded: cleared when full (beacons in range are few; a flood of fake ids must not grow it).
final class BeaconIDCache: Sendable {
    /// The identifying bytes of an iBeacon, AltBeacon or Eddystone-UID: 16 id bytes plus two
    /// 16-bit numbers (0 for Eddystone), tagged with the format.
    struct Key: Hashable {
        var tag: UInt8
        var high: UInt64
        var low: UInt64
        var a: UInt16
        var b: UInt16

        /// Three words instead of five fields: looked up for every beacon advertisement.
        func hash(into h: inout Hasher) {
            h.combine(high)
            h.combine(low)
            h.combine(UInt64(tag) << 32 | UInt64(a) << 16 | UInt64(b))
        }

        /// Its place among the cache's recent ids: the words folded, not hashed (a key that
        /// collides is only looked up in the dictionary).
        var position: Int {
            var x = high ^ low ^ (UInt64(tag) << 32 | UInt64(a) << 16 | UInt64(b))
            x ^= x >> 29
            x = x &* 0xBF58_476D_1CE4_E5B9
            x ^= x >> 32
            return Int(truncatingIfNeeded: x) & (BeaconIDCache.recentCount - 1)
        }
    }

    private struct State {
        var table: [Key: BeaconID] = [:]
        /// The latest id found for each of a few key positions, checked against the whole key: a
        /// lookup in the dictionary hashes the key, which was most of what an advertisement's id
        /// cost. A key whose position another key took (by chance or by design) goes to the dictionary.
        var recent = [(key: Key, id: BeaconID)?](repeating: nil, count: BeaconIDCache.recentCount)

        /// In `position` or its neighbour (`position ^ 1`): the empty one, else the neighbour.
        mutating func remember(_ key: Key, _ id: BeaconID, at position: Int) {
            let p = recent[position] == nil ? position : position ^ 1
            recent[p] = (key, id)
        }
    }

    static let recentCount = 1024
    private let state = Mutex(State())
    let limit: Int

    init(limit: Int = 4096) { self.limit = limit }

    /// The beacon's id, from the cache or built once.
    func id(for beacon: Beacon) -> BeaconID? {
        guard let key = Self.key(beacon) else { return nil }
        let position = key.position
        let hit = state.withLock { s -> BeaconID? in
            if let r = s.recent[position], r.key == key { return r.id }
            if let r = s.recent[position ^ 1], r.key == key { return r.id }
            guard let id = s.table[key] else { return nil }
            s.remember(key, id, at: position)
            return id
        }
        if let hit { return hit }
        guard let id = beacon.beaconID else { return nil }
        let limit = self.limit
        state.withLock { s in
            if s.table.count >= limit {
                s.table.removeAll(keepingCapacity: true)
                for i in s.recent.indices { s.recent[i] = nil }
            }
            s.table[key] = id
            s.remember(key, id, at: position)
        }
        return id
    }

    /// Ids held (for tests).
    var count: Int { state.withLock { $0.table.count } }

    static func key(_ b: Beacon) -> Key? {
        switch b {
        case .iBeacon(let i):
            let (high, low) = withUnsafeBytes(of: i.uuid.uuid) { split($0) }
            return Key(tag: 1, high: high, low: low, a: i.major, b: i.minor)
        case .altBeacon(let a):
            let (high, low) = a.id1.withUnsafeBytes { split($0) }
            return Key(tag: 2, high: high, low: low, a: a.id2, b: a.id3)
        case .eddystone(.uid(_, let ns, let inst)):
            let (high, low) = (ns + inst).withUnsafeBytes { split($0) }
            return Key(tag: 3, high: high, low: low, a: 0, b: 0)
        default:
            return nil
        }
    }

    private static func split(_ p: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        if p.count >= 16 {
            return (UInt64(bigEndian: p.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                    UInt64(bigEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
        var h: UInt64 = 0, l: UInt64 = 0
        for i in 0..<min(16, p.count) {
            if i < 8 { h = h << 8 | UInt64(p[i]) } else { l = l << 8 | UInt64(p[i]) }
        }
        return (h, l)
    }
}
