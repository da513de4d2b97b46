/// A config value that must never be shown: a password, an Identity Resolving Key, a token.
///
/// Redaction is by type so that a new secret field is safe by default: everything that turns a
/// value into text (`description`, string interpolation, `debugDescription`, `dump`/`Mirror`,
/// `Encodable`, as the effective-config log line and `--dry-run` use it) gives `***`. Only
/// `revealed` gives the value, for the few places that must hand it on (libmosquitto's login,
/// the AES key schedule); grep for it to audit them. Decoding reads a plain string, so config
/// files are unchanged.
public struct Secret: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable, ExpressibleByStringLiteral {
    /// What every rendering shows instead of the value.
    public static let redacted = "***"

    /// The value itself; pass it only to what needs it, never to a logger or a message.
    public let revealed: String

    public init(_ value: String) { revealed = value }

    public init(stringLiteral value: String) { revealed = value }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        revealed = try c.decode(String.self)
    }

    /// Encodes as `***`: configs are encoded only to be shown.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(Self.redacted)
    }

    public var description: String { Self.redacted }
    public var debugDescription: String { "Secret(\(Self.redacted))" }
    /// No children: `dump` and reflection show nothing of the value.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    public var isEmpty: Bool { revealed.isEmpty }
}

extension Secret {
    /// How an error names the variable a `*_env` key names: as written when it reads like a
    /// variable name (`MQTT_PASSWORD`), otherwise not at all, since a secret written there in its
    /// place must not reach the log.
    public static func shownVariableName(_ name: String, key: String) -> String {
        readsLikeVariableName(name) ? "'\(name)'"
            : "named by \(key) (not shown: it does not read like a variable name, and may be the secret itself)"
    }

    /// A `*_env` key's value as the effective config shows it: as written when it reads like a
    /// variable name, otherwise `***` (it may be the secret itself).
    public static func shownInConfig(variableName name: String) -> String {
        readsLikeVariableName(name) ? name : "***"
    }

    private static func readsLikeVariableName(_ name: String) -> Bool {
        name.first.map { $0 == "_" || ("A"..."Z").contains($0) } == true && name.count <= 64
            && name.allSatisfy { $0 == "_" || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }
}
