/// Hex encoding and decoding for byte arrays (lowercase, no separators).
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`.
    public static func encode<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Lowercase hex of `bytes`, a colon between bytes: a Bluetooth address as shown (`aa:bb:cc:dd:ee:ff`).
    public static func colonSeparated<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 3)
        for b in bytes {
            if !out.isEmpty { out.append(UInt8(ascii: ":")) }
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A 48-bit Bluetooth address (display order's first byte most significant) as `aa:bb:cc:dd:ee:ff`,
    /// what `colonSeparated` makes of its six bytes, written straight into the string: the agent
    /// formats one for every reading it publishes, and the generic path built an array first.
    public static func address(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 17) { out in
            for i in 0..<6 {
                let b = UInt8(truncatingIfNeeded: value >> (40 - 8 * i))
                if i > 0 { out[3 * i - 1] = UInt8(ascii: ":") }
                out[3 * i] = digits[Int(b >> 4)]
                out[3 * i + 1] = digits[Int(b & 0x0F)]
            }
            return 17
        }
    }

    /// 16 bytes as a lowercase hyphenated UUID (`8-4-4-4-12` digits), as `UUID.uuidString.lowercased()`
    /// writes it but without Foundation's `snprintf` and a second string for the lowercasing: the
    /// agent formats one for every reading it publishes.
    public static func uuidString(_ bytes: UnsafeRawBufferPointer) -> String {
        precondition(bytes.count == 16, "a UUID is 16 bytes")
        return String(unsafeUninitializedCapacity: 36) { out in
            var j = 0
            for i in 0..<16 {
                if i == 4 || i == 6 || i == 8 || i == 10 { out[j] = UInt8(ascii: "-"); j += 1 }
                let b = bytes[i]
                out[j] = digits[Int(b >> 4)]
                out[j + 1] = digits[Int(b & 0x0F)]
                j += 2
            }
            return j
        }
    }

    /// Bytes from hex; whitespace, ':' and '-' separators are ignored.
    /// Returns nil on an odd digit count or a non-hex character.
    public static func decode(_ text: String) -> [UInt8]? {
        var out = [UInt8]()
        var high: UInt8?
        for c in text.utf8 {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            case UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: "\n"), UInt8(ascii: "\t"):
                continue
            default: return nil
            }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        return high == nil ? out : nil
    }
}
