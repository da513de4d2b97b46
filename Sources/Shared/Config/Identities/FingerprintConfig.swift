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
}
