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
    }

    private let table = Mutex<[Key: BeaconID]>([:])
    let limit: Int

    init(limit: Int = 4096) { self.limit = limit }

    /// The beacon's id, from the cache or built once.
    func id(for beacon: Beacon) -> BeaconID? {
        guard let key = Self.key(beacon) else { return nil }
        if let hit = table.withLock({ $0[key] }) { return hit }
        guard let id = beacon.beaconID else { return nil }
        let limit = self.limit
        table.withLock { t in
            if t.count >= limit { t.removeAll(keepingCapacity: true) }
            t[key] = id
        }
        return id
    }

    /// Ids held (for tests).
    var count: Int { table.withLock { $0.count } }

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
        var h: UInt64 = 0, l: UInt64 = 0
        for i in 0..<min(16, p.count) {
            if i < 8 { h = h << 8 | UInt64(p[i]) } else { l = l << 8 | UInt64(p[i]) }
        }
        return (h, l)
    }
}
