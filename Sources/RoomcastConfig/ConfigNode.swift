import Shared

/// Where a config value came from: a position in the file, or a command-line override.
public enum ConfigLocation: Sendable, Equatable, CustomStringConvertible {
    /// 1-based line and column in the config file.
    case position(line: Int, column: Int)
    /// Set by a command-line flag such as `--broker`.
    case override(String)

    public var description: String {
        switch self {
        case .position(let line, let column): "line \(line), column \(column)"
        case .override(let flag): "from \(flag)"
        }
    }

    /// The line in the file, when the value came from the file.
    public var line: Int? {
        if case .position(let line, _) = self { return line }
        return nil
    }
}

/// One node of a parsed config document: the small tree the YAML reader
/// builds and the config decoder walks. It keeps key order and each node's
/// location so errors can point at the line.
public struct ConfigNode: Sendable, Equatable {
    /// How a scalar was written; quoted scalars never become numbers, booleans or null.
    public enum ScalarStyle: Sendable, Equatable {
        case plain
        case quoted
    }

    /// One `key: value` pair of a mapping.
    public struct Entry: Sendable, Equatable {
        public var key: String
        public var keyLocation: ConfigLocation
        public var value: ConfigNode

        public init(key: String, keyLocation: ConfigLocation, value: ConfigNode) {
            self.key = key
            self.keyLocation = keyLocation
            self.value = value
        }
    }

    public enum Kind: Sendable, Equatable {
        /// Entries in document order.
        case mapping([Entry])
        case sequence([ConfigNode])
        case scalar(String, ScalarStyle)
        case null
    }

    public var kind: Kind
    public var location: ConfigLocation

    public init(_ kind: Kind, at location: ConfigLocation) {
        self.kind = kind
        self.location = location
    }

    /// The value stored under `key`, when this is a mapping that has it.
    public subscript(key: String) -> ConfigNode? {
        guard case .mapping(let entries) = kind else { return nil }
        return entries.first(where: { $0.key == key })?.value
    }

    /// A short name of the node's kind for error messages ("a mapping", "the string 'x'"). A
    /// scalar that names a secret is not shown: an env file given as the config file
    /// (`ROOMCAST_MQTT_PASSWORD=...`), or `password:hunter2` folded into the value before it.
    package var kindDescription: String {
        switch kind {
        case .scalar(let text, _) where ShownText.mentionsSecret(text):
            ShownText.namesSecretEntry(text)
                ? "a value (not shown: it reads as a secret's entry; a mapping's entries need a space after the colon)"
                : "a value (not shown: it names a password, token or key)"
        case .mapping: "a mapping"
        case .sequence: "a list"
        case .null: "null"
        case .scalar(let text, .quoted): "the string '\(ConfigNode.excerpt(text))'"
        case .scalar(let text, .plain): "'\(ConfigNode.excerpt(text))'"
        }
    }

    /// `kindDescription`, without the text of a scalar that is or holds a secret
    /// (`ConfigPath.holdsSecret`): a key put where a mapping belongs must not reach the log.
    package func kindDescription(at path: String) -> String {
        if case .scalar = kind, ConfigPath.holdsSecret(path) { return "a value (not shown: \(path) holds a secret)" }
        return kindDescription
    }

    /// Text found where something else belongs, as a message shows it: quoted, or not at all
    /// when it names a secret (`kindDescription`).
    package static func shown(_ text: String) -> String {
        ConfigNode(.scalar(text, .plain), at: .position(line: 0, column: 0)).kindDescription
    }

    /// Long values are cut in messages so a hostile file cannot flood the log, and the password
    /// of anything written as `[scheme://]user:password@host` is not shown (`mqtt: <url>` where
    /// a mapping belongs, an override into it).
    package static func excerpt(_ text: String) -> String { ShownText.excerpt(text) }
}
