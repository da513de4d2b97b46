import Shared

/// Builds the advertising data of an iBeacon: the flags structure
/// `02 01 06`, then Apple's manufacturer data `1A FF 4C 00 02 15`, the 16-byte
/// proximity UUID, major and minor (big-endian) and the measured power at 1 m: the frame
/// `IBeacon.decode` reads; `IBeaconRoundTripTests` holds the two together.
public enum IBeaconAdvertisement {
    /// The 30 AD bytes for an iBeacon (fits the 31-byte legacy payload).
    /// `uuid` must be 16 bytes (it is zero-padded or cut otherwise).
    public static func encode(uuid: [UInt8], major: UInt16, minor: UInt16, power: Int8) -> [UInt8] {
        var out: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15]
        out.append(contentsOf: uuid.prefix(16))
        out.append(contentsOf: repeatElement(0, count: 16 - min(16, uuid.count)))
        out.append(contentsOf: [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF)])
        out.append(UInt8(bitPattern: power))
        return out
    }

    /// Same, from a UUID string such as `e2c56db5-dffb-48d2-b060-d0f5a71096e0`; nil when it is not 16 hex bytes
    /// (hyphens anywhere, no other separators).
    public static func encode(uuidString: String, major: UInt16, minor: UInt16, power: Int8) -> [UInt8]? {
        // Hex.decode also skips spaces and colons; a UUID string has only hyphens.
        guard uuidString.allSatisfy({ $0 == "-" || ($0.isASCII && $0.isHexDigit) }),
              let bytes = Hex.decode(uuidString), bytes.count == 16 else { return nil }
        return encode(uuid: bytes, major: major, minor: minor, power: power)
    }
}
