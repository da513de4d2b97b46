import Shared

/// The `fingerprints:` section: built-ins to enable and custom rules. Empty means off.
public struct FingerprintConfig: Codable, Sendable, Equatable {
    /// Names of built-in fingerprints, or `all`.
    public var builtins: [String]
    public var rules: [FingerprintRuleConfig]

    public init(builtins: [String] = [], rules: [FingerprintRuleConfig] = []) {
        self.builtins = builtins
        self.rules = rules
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        builtins = try c.decodeIfPresent([String].self, forKey: .builtins) ?? []
        rules = try c.decodeIfPresent([FingerprintRuleConfig].self, forKey: .rules) ?? []
    }

    /// The built-in fingerprints RoomcastAdvertising implements (its `BuiltInFingerprint` cases).
    public static let builtinNames = ["ruuvi", "xiaomi", "atc", "estimote"]

    /// A 16-bit (4 hex digits), 32-bit (8) or 128-bit (hyphenated) service UUID, optionally `0x`-prefixed.
    public static func isServiceUUID(_ text: String) -> Bool {
        var t = text.lowercased()
        if t.hasPrefix("0x") { t.removeFirst(2) }
        // ASCII digits only: `isHexDigit` takes fullwidth ones too, which the parser does not, and the
        // rule would lose its only condition and match every device.
        if (t.count == 4 || t.count == 8) && t.allSatisfy({ $0.isASCII && $0.isHexDigit }) { return true }
        let parts = t.split(separator: "-", omittingEmptySubsequences: false)
        return parts.map(\.count) == [8, 4, 4, 4, 12] && Hex.decode(t)?.count == 16
    }
}
