import Shared

/// A 48-bit Bluetooth device address, held in display order
/// (`aa:bb:cc:dd:ee:ff`, most significant byte first).
///
/// HCI carries addresses least significant byte first; use
/// `init(littleEndian:)` for bytes straight out of an HCI event.
public struct BLEAddress: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The address as a 48-bit number; bits 47-46 are the random-address sub-type.
    public let value: UInt64

    public init(value: UInt64) { self.value = value & 0xFFFF_FFFF_FFFF }

    /// From 6 bytes in display order (most significant first).
    @inlinable
    public init?<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        guard bytes.count == 6 else { return nil }
        var v: UInt64 = 0
        for b in bytes { v = v << 8 | UInt64(b) }
        value = v
    }

    /// From 6 bytes in HCI (least significant first) order.
    public init?<C: Collection>(littleEndian bytes: C) where C.Element == UInt8 {
        guard bytes.count == 6 else { return nil }
        var v: UInt64 = 0
        for b in bytes.reversed() { v = v << 8 | UInt64(b) }
        value = v
    }

    /// Parses `aa:bb:cc:dd:ee:ff`, `AA-BB-...` or 12 bare hex digits.
    public init?(_ text: String) {
        guard let bytes = Hex.decode(text), bytes.count == 6 else { return nil }
        self.init(bytes)
    }

    /// The 6 bytes in display order.
    public var bytes: [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: value >> (40 - 8 * $0)) } }

    /// Lowercase, colon-separated, as the wire contract's `mac`.
    public var description: String { Hex.address(value) }

    /// The two most significant bits, which say what kind of random address this is
    /// (Core 5.4 Vol 6 Part B §1.3.2).
    var randomSubtype: UInt8 { UInt8(truncatingIfNeeded: value >> 46) }

    /// What a random address of this value is; meaningless for public addresses.
    public var randomKind: RandomAddressKind {
        switch randomSubtype {
        case 0b11: return .staticAddress
        case 0b01: return .resolvablePrivate
        case 0b00: return .nonResolvablePrivate
        default: return .reserved
        }
    }

    /// The 24-bit `prand` half of a resolvable private address (the upper 3 bytes).
    var prand: UInt32 { UInt32(truncatingIfNeeded: value >> 24) }
    /// The 24-bit `hash` half of a resolvable private address (the lower 3 bytes).
    var hash: UInt32 { UInt32(truncatingIfNeeded: value & 0xFF_FFFF) }

    public static func < (a: BLEAddress, b: BLEAddress) -> Bool { a.value < b.value }
}
