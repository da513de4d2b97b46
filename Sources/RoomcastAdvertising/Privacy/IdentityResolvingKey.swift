import Shared
import RoomcastConfig

/// A named Identity Resolving Key: the 128-bit key a bonded phone or watch uses to derive its
/// rotating resolvable private addresses.
///
/// Byte order: the key is held most significant byte first, as the Core specification's
/// sample data writes it and as Home Assistant's Private BLE Device and ESPresense take it.
/// BlueZ's `/var/lib/bluetooth/<adapter>/<device>/info` and SMP captures hold it in on-air order,
/// least significant byte first (BlueZ keeps key buffers little-endian and swaps them before AES,
/// `bt_crypto_e`): give those with `lsbFirst` (docs/fingerprints.md).
public struct IdentityResolvingKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable {
    /// The name that becomes the tracked id `irk:<name>`.
    public let name: String
    /// 16 bytes, most significant first.
    public let key: [UInt8]

    /// Nil unless `key` is 16 bytes and `name` makes a valid `irk:` id.
    public init?(name: String, key: [UInt8], lsbFirst: Bool = false) {
        guard key.count == 16, BeaconID.irk(name) != nil else { return nil }
        self.name = name.lowercased()
        self.key = lsbFirst ? key.reversed() : key
    }

    /// From 32 hex digits (separators allowed).
    public init?(name: String, hex: String, lsbFirst: Bool = false) {
        guard let bytes = Hex.decode(hex) else { return nil }
        self.init(name: name, key: bytes, lsbFirst: lsbFirst)
    }

    /// The identity this key resolves to.
    public var beaconID: BeaconID { BeaconID.irk(name)! }

    /// The name only: the key is a secret (see `Secret`), so no rendering of this value shows it.
    public var description: String { "irk:\(name) key=\(Secret.redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["name": name], displayStyle: .struct) }
}
