import Shared

/// Beacons whose one id is advertised by two transmitters at once: two tags that left the
/// factory with the same iBeacon UUID, major and minor, or two phones running one beacon app's
/// settings. Fusion sees one beacon heard in two places; its room follows whichever copy is heard
/// better, and it never leaves while either is heard. Nothing in the readings is wrong, so
/// nothing else would tell the user why.
///
/// A reading names the transmitter's address (`mac`). An id heard from two addresses each heard
/// in the last `recent` seconds, and both heard together for `together` seconds, is shared. A
/// transmitter that changes its address (a phone's privacy address, every 15 minutes or so) is
/// heard from the old address until about when the new one starts: never together for long.
/// Ids that are an address (`mac:`) or resolved from rotating addresses (`irk:`, `fp:`) are
/// not watched.
struct SharedIDWatch: Sendable {
    /// An address's reading this recent counts as heard now.
    static let recent = 10.0
    /// Two addresses heard together this long are two transmitters.
    static let together = 30.0
    /// An address not heard for this long is forgotten.
    static let forgetAfter = 60.0
    /// Addresses kept per beacon: a third transmitter of the id replaces the one heard least lately.
    static let addressesPerBeacon = 4
    /// A shared id is said again at most this often.
    static let repeatAfter = 3600.0

    struct Address: Sendable, Equatable {
        /// Lower case: one transmitter whichever node spelt its address.
        var mac: String
        /// As the newest reading wrote it.
        var shown: String
        var node: String
        var first: Double
        var last: Double
    }

    /// What to tell the user about one beacon.
    struct Clash: Sendable {
        var id: BeaconID
        /// The addresses heard together, each with the node that heard it last.
        var addresses: [(mac: String, node: String)]

        var message: String {
            let heard = addresses.map { "\($0.mac) at \($0.node)" }.joined(separator: ", ")
            return "beacon '\(id.rawValue)' is advertised by \(addresses.count) transmitters at once (\(heard)): "
                + "its room follows whichever is heard better, and it never leaves while one is heard; "
                + "give each device its own id (an iBeacon's major and minor)"
        }
    }

    /// Beacons watched at most (the engine's table size): ids come from the network.
    let limit: Int
    private var addresses: [BeaconID: [Address]] = [:]
    private var said: [BeaconID: Double] = [:]
    private var lastSweep = -Double.infinity

    /// Beacons heard from two transmitters now.
    private(set) var shared: Set<BeaconID> = []

    init(limit: Int) {
        self.limit = limit
    }

    static func watches(_ id: BeaconID) -> Bool {
        let raw = id.rawValue.utf8
        return raw.starts(with: "ibeacon:".utf8) || raw.starts(with: "altbeacon:".utf8) || raw.starts(with: "eddystone:".utf8)
    }

    /// Takes in one reading; returns the clash to tell the user about, once per `repeatAfter`
    /// (the caller confirms with `told` when it did).
    mutating func observe(_ r: BeaconReading, now: Double) -> Clash? {
        sweep(now: now)
        guard Self.watches(r.id), !r.mac.isEmpty else { return nil }
        // Most readings: the one address heard of this beacon, as written before (in place: no
        // copy of the list, no new string).
        if let i = addresses.index(forKey: r.id), addresses.values[i].count == 1, addresses.values[i][0].shown == r.mac {
            addresses.values[i][0].last = now
            if addresses.values[i][0].node != r.node { addresses.values[i][0].node = r.node }
            return nil
        }
        guard addresses[r.id] != nil || addresses.count < limit else { return nil }
        let mac = r.mac.lowercased()
        var list = addresses.removeValue(forKey: r.id) ?? []
        if let i = list.firstIndex(where: { $0.mac == mac }) {
            list[i].last = now
            list[i].node = r.node
            list[i].shown = r.mac
        } else {
            if list.count >= Self.addressesPerBeacon, let stalest = list.indices.min(by: { list[$0].last < list[$1].last }) {
                list.remove(at: stalest)
            }
            list.append(Address(mac: mac, shown: r.mac, node: r.node, first: now, last: now))
        }
        addresses[r.id] = list
        guard list.count > 1 else { return nil }
        let current = list.filter { now - $0.last <= Self.recent }
        let together = current.filter { a in
            current.contains { b in b.mac != a.mac && min(a.last, b.last) - max(a.first, b.first) >= Self.together }
        }
        guard together.count > 1 else { return nil }
        shared.insert(r.id)
        if let at = said[r.id], now - at < Self.repeatAfter { return nil }
        return Clash(id: r.id, addresses: together.sorted { $0.mac < $1.mac }.map { ($0.shown, $0.node) })
    }

    /// The clash of `id` was told the user at `now`.
    mutating func told(_ id: BeaconID, now: Double) {
        said[id] = now
    }

    /// The wall clock stepped back by `seconds`: every time kept moves with it (else an address
    /// heard before the step would count as heard now for as long, and two addresses of one
    /// phone as two transmitters).
    mutating func clockSteppedBack(by seconds: Double) {
        for id in Array(addresses.keys) {
            for i in addresses[id]!.indices {
                addresses[id]![i].first -= seconds
                addresses[id]![i].last -= seconds
            }
        }
        for id in Array(said.keys) { said[id]! -= seconds }
        lastSweep -= seconds
    }

    /// Forgets addresses not heard for `forgetAfter`, at most every few seconds: the table holds
    /// the beacons heard in the last minute, and no more.
    private mutating func sweep(now: Double) {
        guard now - lastSweep >= Self.recent else { return }
        lastSweep = now
        var changed: [(BeaconID, [Address])] = []
        for (id, list) in addresses where list.contains(where: { now - $0.last > Self.forgetAfter }) {
            changed.append((id, list.filter { now - $0.last <= Self.forgetAfter }))
        }
        for (id, kept) in changed {
            addresses[id] = kept.isEmpty ? nil : kept
            if kept.count < 2 { shared.remove(id) }
        }
        for (id, at) in said where now - at >= Self.repeatAfter { said[id] = nil }
    }
}
