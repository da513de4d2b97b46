import Shared

/// Transmitters whose beacon id does not stay put. Some trackers and phone apps advertise a new
/// iBeacon major and minor every few seconds: tracked because everything heard is, each id would
/// be a beacon of its own for as long as it is heard (a reading a second to the broker, a place in
/// the table), and on a site that places every beacon heard, a Home Assistant device each,
/// thousands a day. An address that has advertised more than `maximumIDs` different ids is taken for such a
/// transmitter, and no further id of its is tracked, as Home Assistant's iBeacon integration does.
/// Only ids tracked without a config entry of their own are judged (everything heard, or a
/// fingerprint rule's match): a `beacons:` entry, a region's member and an IRK phone are tracked on
/// the config's word. An advertiser without an address (an anonymous extended advertisement) is
/// not judged: all of them share address 0.
///
/// Bounded like the Eddystone address map: at twice the beacon table's capacity, the addresses
/// found unstable are kept (when they are fewer than the capacity) and the rest start afresh.
struct UnstableIDWatch: Sendable {
    /// Ids one address may advertise: a beacon with several slots sends a few; a transmitter past
    /// this many changes its id.
    static let maximumIDs = 10
    /// Per address, the ids it advertised (their hashes), up to `maximumIDs + 1`: one more marks it unstable.
    private var idsAt: [UInt64: [Int]] = [:]
    private let limit: Int
    /// Addresses found unstable since the agent started.
    private(set) var found: UInt64 = 0

    init(tableCapacity: Int) {
        limit = max(64, 2 * tableCapacity)
    }

    /// Whether `id`, not tracked now, may be tracked when `address` advertises it: false once that
    /// address has advertised more than `maximumIDs` different ids.
    mutating func admits(_ id: BeaconID, from address: UInt64) -> Bool {
        guard address != 0 else { return true }
        let hash = id.hashValue
        if let seen = idsAt[address] {
            if seen.count > Self.maximumIDs { return false }
            if seen.contains(hash) { return true }
            idsAt[address]!.append(hash)
            if seen.count + 1 > Self.maximumIDs {
                found += 1
                return false
            }
            return true
        }
        if idsAt.count >= limit {
            let unstable = idsAt.filter { $0.value.count > Self.maximumIDs }
            idsAt = unstable.count < limit / 2 ? unstable : [:]
        }
        idsAt[address] = [hash]
        return true
    }
}
