import RoomcastAdvertising
import Shared

/// What one simulated transmitter puts on the air: its address, its PDU type and its
/// advertising data. The btsnoop writer turns each received packet into an LE Advertising
/// Report carrying exactly this.
public struct SimulatedAdvertiser: Sendable, Equatable {
    /// How the transmitter addresses itself.
    public enum Address: Sendable, Equatable {
        /// One address for the whole scenario, display order (most significant byte first);
        /// `random` selects the HCI address type (random static vs public).
        case fixed([UInt8], random: Bool)
        /// Resolvable private addresses derived from this key, rotating; each packet's `mac`
        /// holds the address in use at the time.
        case resolvable(IdentityResolvingKey)
    }

    /// The tracked id (or `mac:` id for untracked devices) the packets of `raw.jsonl` carry.
    public var id: BeaconID
    public var address: Address
    /// Legacy advertising report Event_Type (Core 5.4 Vol 4 Part E §7.7.65.2):
    /// 0x00 ADV_IND, 0x02 ADV_SCAN_IND, 0x03 ADV_NONCONN_IND.
    public var eventType: UInt8
    /// The AD structures, at most 31 bytes (legacy advertising).
    public var data: [UInt8]
    /// Bytes of `data` that change with every address, as phones change their payload when
    /// they rotate (so only the IRK links two addresses); nil = constant payload.
    public var rotatingBytes: Range<Int>?

    public init(id: BeaconID, address: Address, eventType: UInt8, data: [UInt8], rotatingBytes: Range<Int>? = nil) {
        self.id = id
        self.address = address
        self.eventType = eventType
        self.data = data
        self.rotatingBytes = rotatingBytes
    }

    /// The advertising data sent from `address`: `data`, with `rotatingBytes` drawn from a
    /// stream seeded by the address (the same address always sends the same bytes).
    public func data(from address: [UInt8]) -> [UInt8] {
        guard let range = rotatingBytes?.clamped(to: data.indices), !range.isEmpty else { return data }
        var seed: UInt64 = 0
        for b in address { seed = seed << 8 | UInt64(b) }
        var rng = SeededRandom(seed: seed, stream: "payload")
        var out = data
        for i in range { out[i] = UInt8(truncatingIfNeeded: rng.next()) }
        return out
    }

    /// HCI Address_Type: 0x00 public, 0x01 random.
    public var addressType: UInt8 {
        switch address {
        case let .fixed(_, random): random ? 0x01 : 0x00
        case .resolvable: 0x01
        }
    }

    /// The address to put in a report for a packet whose `mac` is `mac`; nil when a rotating
    /// advertiser's packet has no usable `mac`.
    public func address(for mac: String?) -> [UInt8]? {
        switch address {
        case let .fixed(bytes, _): return bytes.count == 6 ? bytes : nil
        case .resolvable: return mac.flatMap(Hex.decode).flatMap { $0.count == 6 ? $0 : nil }
        }
    }
}
