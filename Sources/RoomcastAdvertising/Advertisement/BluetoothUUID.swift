import Shared

/// A Bluetooth UUID (16-, 32- or 128-bit), stored in its 128-bit form.
///
/// 16- and 32-bit UUIDs are aliases inside the Bluetooth Base UUID
/// `0000xxxx-0000-1000-8000-00805f9b34fb` (Core 5.4 Vol 3 Part B §2.5.1), so
/// `0xFEAA` and `0000feaa-0000-1000-8000-00805f9b34fb` compare equal.
public struct BluetoothUUID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The upper 64 bits (big-endian reading of the canonical string).
    public let high: UInt64
    /// The lower 64 bits.
    public let low: UInt64

    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    static let baseHighLow32: UInt64 = 0x0000_1000

    /// A 16-bit SIG-assigned UUID.
    public init(uuid16: UInt16) { self.init(uuid32: UInt32(uuid16)) }

    /// A 32-bit SIG-assigned UUID.
    public init(uuid32: UInt32) {
        high = UInt64(uuid32) << 32 | Self.baseHighLow32
        low = Self.baseLow
    }

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// From 16 bytes in canonical (big-endian) order.
    public init<C: Collection>(bigEndian bytes: C) where C.Element == UInt8 {
        precondition(bytes.count == 16)
        var h: UInt64 = 0, l: UInt64 = 0
        var i = 0
        for b in bytes {
            if i < 8 { h = h << 8 | UInt64(b) } else { l = l << 8 | UInt64(b) }
            i += 1
        }
        high = h
        low = l
    }

    /// From 16 bytes in air (little-endian) order, as in AD structures.
    public init<C: Collection>(littleEndian bytes: C) where C.Element == UInt8 {
        precondition(bytes.count == 16)
        var h: UInt64 = 0, l: UInt64 = 0
        var i = 0
        for b in bytes {
            if i < 8 { l |= UInt64(b) << (8 * i) } else { h |= UInt64(b) << (8 * (i - 8)) }
            i += 1
        }
        high = h
        low = l
    }

    /// Parses `feaa`, `0xFEAA`, `0000feaa` or the 36-character form.
    public init?(_ text: String) {
        var t = text.lowercased()
        if t.hasPrefix("0x") { t.removeFirst(2) }
        if t.count == 4 || t.count == 8, t.allSatisfy(\.isHexDigit), let v = UInt32(t, radix: 16) {
            self.init(uuid32: v)
            return
        }
        let parts = t.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 5, parts.map(\.count) == [8, 4, 4, 4, 12],
              let bytes = Hex.decode(t), bytes.count == 16 else { return nil }
        self.init(bigEndian: bytes)
    }

    /// The 16-bit alias, when this is a Base-UUID UUID below 0x10000.
    public var uuid16: UInt16? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHighLow32, high >> 48 == 0 else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// The 32-bit alias, when this is a Base-UUID UUID.
    public var uuid32: UInt32? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHighLow32 else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// The 16 bytes in canonical (big-endian) order.
    public var bigEndianBytes: [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
    }

    /// Lowercase canonical 36-character form.
    public var description: String { BeaconID.uuidString(bigEndianBytes) }

    public static func < (a: BluetoothUUID, b: BluetoothUUID) -> Bool {
        (a.high, a.low) < (b.high, b.low)
    }
}

extension BluetoothUUID: Codable {
    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        let s = try c.decode(String.self)
        guard let u = BluetoothUUID(s) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "not a Bluetooth UUID: '\(s.prefix(40))'")
        }
        self = u
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
