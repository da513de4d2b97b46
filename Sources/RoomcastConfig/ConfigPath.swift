import Shared

/// Renders coding paths the way the config file spells them: `nodes[2].room`.
public enum ConfigPath {
    /// The dotted form of `path`; empty for the document root.
    public static func render(_ path: [any CodingKey]) -> String {
        var out = ""
        for key in path {
            if let index = key.intValue, key.stringValue == "Index \(index)" || key is IndexKey {
                out += "[\(index)]"
            } else {
                if !out.isEmpty { out += "." }
                out += key.stringValue
            }
        }
        return out
    }

    /// Joins a parent path and a key.
    public static func child(_ parent: String, _ key: String) -> String {
        parent.isEmpty ? key : parent + "." + key
    }

    /// Joins a parent path and a list index.
    public static func child(_ parent: String, _ index: Int) -> String {
        parent + "[\(index)]"
    }

    /// The path one level up (`nodes[2].room` → `nodes[2]` → `nodes` → ``).
    static func parent(of path: String) -> String? {
        guard !path.isEmpty else { return nil }
        if path.hasSuffix("]"), let open = path.lastIndex(of: "[") {
            return String(path[..<open])
        }
        if let dot = path.lastIndex(of: ".") { return String(path[..<dot]) }
        return ""
    }

    /// Keys whose values are secrets, and everything under them (`irks[0]`, `mqtt.password`).
    static let secretKeys = ShownText.secretKeys

    /// True when the value at `path` is or holds a secret: messages do not show its text.
    package static func holdsSecret(_ path: String) -> Bool {
        guard let parts = components(path) else { return false }
        return parts.contains { if case .key(let name) = $0 { secretKeys.contains(name) } else { false } }
    }

    /// True when `text` reads as a secret's entry run together: `password:hunter2` inside
    /// `{…}`, with no space after the colon, is one string in YAML, a key or a value.
    /// A secret's key misspelt (`pasword`), or its `_env` form, counts: what follows may be
    /// the secret all the same.
    package static func readsAsSecretEntry(_ text: String) -> Bool { ShownText.namesSecretEntry(text) }

    /// A key as a problem's path shows it: not at all when it reads as a secret's entry run
    /// together, and cut when long, so a hostile file cannot flood the log.
    package static func shownKey(_ key: String) -> String {
        if readsAsSecretEntry(key) { return "<key not shown>" }
        return key.count <= 60 ? key : String(key.prefix(57)) + "..."
    }

    /// Splits a dotted path into its components (for overrides).
    static func components(_ path: String) -> [Component]? {
        var result: [Component] = []
        for part in path.split(separator: ".", omittingEmptySubsequences: false) {
            var rest = Substring(part)
            let nameEnd = rest.firstIndex(of: "[") ?? rest.endIndex
            let name = rest[..<nameEnd]
            guard !name.isEmpty else { return nil }
            result.append(.key(String(name)))
            rest = rest[nameEnd...]
            while !rest.isEmpty {
                guard rest.first == "[", let close = rest.firstIndex(of: "]"),
                      let index = Int(rest[rest.index(after: rest.startIndex)..<close]), index >= 0 else { return nil }
                result.append(.index(index))
                rest = rest[rest.index(after: close)...]
            }
        }
        return result
    }

    enum Component: Equatable {
        case key(String)
        case index(Int)
    }

    /// The coding key of a list element.
    struct IndexKey: CodingKey {
        let intValue: Int?
        var stringValue: String { "Index \(intValue ?? 0)" }
        init(_ index: Int) { intValue = index }
        init?(intValue: Int) { self.intValue = intValue }
        init?(stringValue: String) { return nil }
    }

    /// The coding key of a mapping entry read by name.
    struct NameKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { return nil }
    }
}
