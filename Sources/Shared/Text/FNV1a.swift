/// FNV-1a, 64 bits: a stable hash of text, the same on every platform and run (Swift's
/// `Hasher` is seeded per process). For names and digests that must agree between processes
/// and releases, not for anything a stranger must not forge.
public enum FNV1a {
    public static func hash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// `hash(text)` as 16 hex digits.
    public static func hex(_ text: String) -> String {
        let hex = String(hash(text), radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
