/// One user setting of a config section: its key, what it means, its default and its
/// bounds. A section's table of these is the one place a setting is declared: decoding,
/// validation and the reference in docs/configuration.md all walk it, so a key cannot be
/// decoded without being documented or documented without being decoded.
public struct SettingKey<Root>: Sendable {
    public enum Kind: String, Sendable {
        case number, integer, flag
    }

    /// The key in the file (snake_case).
    public let name: String
    /// The stage of the pipeline it belongs to (a heading in the reference).
    public let stage: String
    public let kind: Kind
    /// What it does, in a sentence or two (the reference's text).
    public let summary: String
    /// The unit after a number (`s`, `dB`), empty for none.
    public let unit: String
    /// The default and the allowed range, as shown in the reference.
    public let defaultText: String
    public let rangeText: String
    let decodeInto: @Sendable (inout Root, KeyedDecodingContainer<SettingCodingKey>, SettingCodingKey) throws -> Void
    let check: @Sendable (Root, inout [SettingProblem], String) -> Void
    let encodeFrom: @Sendable (Root, inout KeyedEncodingContainer<SettingCodingKey>, SettingCodingKey) throws -> Void

    /// A real number within `range`.
    public static func number(_ name: String, _ path: WritableKeyPath<Root, Double> & Sendable, stage: String,
                              unit: String = "", range: ClosedRange<Double>, _ summary: String,
                              defaultValue: Double) -> SettingKey {
        SettingKey(name: name, stage: stage, kind: .number, summary: summary, unit: unit,
                   defaultText: Self.format(defaultValue), rangeText: "\(Self.format(range.lowerBound))…\(Self.format(range.upperBound))",
                   decodeInto: { root, c, key in
                       if let v = try c.decodeIfPresent(Double.self, forKey: key) { root[keyPath: path] = v }
                   },
                   check: { root, checks, section in
                       let v = root[keyPath: path]
                       if !v.isFinite || !range.contains(v) {
                           checks.append(SettingProblem(path: "\(section).\(name)", message: "must be between \(Self.format(range.lowerBound)) and \(Self.format(range.upperBound))\(unit.isEmpty ? "" : " \(unit)"), found \(v)"))
                       }
                   },
                   encodeFrom: { root, c, key in try c.encode(root[keyPath: path], forKey: key) })
    }

    /// A whole number within `range`.
    public static func integer(_ name: String, _ path: WritableKeyPath<Root, Int> & Sendable, stage: String,
                               range: ClosedRange<Int>, _ summary: String, defaultValue: Int) -> SettingKey {
        SettingKey(name: name, stage: stage, kind: .integer, summary: summary, unit: "",
                   defaultText: "\(defaultValue)", rangeText: "\(range.lowerBound)…\(range.upperBound)",
                   decodeInto: { root, c, key in
                       if let v = try c.decodeIfPresent(Int.self, forKey: key) { root[keyPath: path] = v }
                   },
                   check: { root, checks, section in
                       let v = root[keyPath: path]
                       if !range.contains(v) {
                           checks.append(SettingProblem(path: "\(section).\(name)", message: "must be between \(range.lowerBound) and \(range.upperBound), found \(v)"))
                       }
                   },
                   encodeFrom: { root, c, key in try c.encode(root[keyPath: path], forKey: key) })
    }

    /// On or off.
    public static func flag(_ name: String, _ path: WritableKeyPath<Root, Bool> & Sendable, stage: String,
                            _ summary: String, defaultValue: Bool) -> SettingKey {
        SettingKey(name: name, stage: stage, kind: .flag, summary: summary, unit: "",
                   defaultText: defaultValue ? "true" : "false", rangeText: "true, false",
                   decodeInto: { root, c, key in
                       if let v = try c.decodeIfPresent(Bool.self, forKey: key) { root[keyPath: path] = v }
                   },
                   check: { _, _, _ in },
                   encodeFrom: { root, c, key in try c.encode(root[keyPath: path], forKey: key) })
    }

    static func format(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }
}

/// A setting outside its key's bounds: the key's path (`fusion.max_nodes`) and what is wrong.
public struct SettingProblem: Sendable, Equatable {
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
}

/// The key of one table entry in a keyed container.
public struct SettingCodingKey: CodingKey, Sendable {
    public let stringValue: String
    public var intValue: Int? { nil }
    public init(stringValue: String) { self.stringValue = stringValue }
    public init?(intValue: Int) { nil }
}

/// A config section declared by a `SettingKey` table.
public protocol SettingTable: Sendable {
    /// The section's name in the file (`fusion`).
    static var section: String { get }
    static var keys: [SettingKey<Self>] { get }
    /// Every setting at its default.
    init()
}

extension SettingTable {
    /// Decodes every key of the table that the mapping has; the rest keep their defaults.
    /// Keys the table does not have are reported by the config decoder as unknown, with the
    /// closest known key.
    public init(fromTable decoder: any Decoder) throws {
        self.init()
        let c = try decoder.container(keyedBy: SettingCodingKey.self)
        for key in Self.keys { try key.decodeInto(&self, c, SettingCodingKey(stringValue: key.name)) }
    }

    /// Encodes every key of the table at its value (the file's form).
    public func encodeTable(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: SettingCodingKey.self)
        for key in Self.keys { try key.encodeFrom(self, &c, SettingCodingKey(stringValue: key.name)) }
    }

    /// Every value outside its key's bounds, with its path.
    public func tableProblems() -> [SettingProblem] {
        var problems: [SettingProblem] = []
        for key in Self.keys { key.check(self, &problems, Self.section) }
        return problems
    }

    /// The reference of this section for docs/configuration.md: one table per stage.
    public static func referenceMarkdown() -> String {
        var out = ""
        var stages: [String] = []
        for key in keys where !stages.contains(key.stage) { stages.append(key.stage) }
        for stage in stages {
            out += "#### \(stage)\n\n| key | default | range | meaning |\n|---|---|---|---|\n"
            for key in keys where key.stage == stage {
                let unit = key.unit.isEmpty ? "" : " \(key.unit)"
                out += "| `\(section).\(key.name)` | \(key.defaultText)\(unit) | \(key.rangeText) | \(key.summary) |\n"
            }
            out += "\n"
        }
        return out
    }
}
