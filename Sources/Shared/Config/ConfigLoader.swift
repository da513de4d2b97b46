import Foundation

/// Loads a config file (YAML, or JSON which is YAML too) into a Codable type,
/// reporting every problem at once: syntax, types, unknown keys, meaning.
public enum ConfigLoader {
    /// Files larger than this are refused before parsing.
    public static let maxFileBytes = 1 << 20

    /// Reads, parses, decodes and validates the file at `path`, then applies
    /// `overrides`. Throws a `ConfigError` listing every problem found.
    public static func load<T: Decodable>(_ type: T.Type, from path: String,
                                          overrides: Overrides = Overrides(),
                                          limits: YAMLReader.Limits = YAMLReader.Limits()) throws(ConfigError) -> T {
        let text: String
        do {
            text = try readText(path)
        } catch {
            throw ConfigError(file: path, problems: [error])
        }
        do {
            return try parse(T.self, yaml: text, overrides: overrides, limits: limits, json: path.lowercased().hasSuffix(".json"))
        } catch {
            throw ConfigError(file: path, problems: error.problems)
        }
    }

    /// Decodes and validates `yaml` (a whole document), then applies `overrides`.
    public static func parse<T: Decodable>(_ type: T.Type, yaml: String,
                                           overrides: Overrides = Overrides(),
                                           limits: YAMLReader.Limits = YAMLReader.Limits()) throws(ConfigError) -> T {
        try parse(T.self, yaml: yaml, overrides: overrides, limits: limits, json: false)
    }

    /// Builds a config from overrides alone, for running without a file.
    public static func fromOverrides<T: Decodable>(_ type: T.Type, _ overrides: Overrides) throws(ConfigError) -> T {
        try decode(T.self, tree: overrides.apply(to: nil))
    }

    static func parse<T: Decodable>(_ type: T.Type, yaml: String, overrides: Overrides,
                                    limits: YAMLReader.Limits, json: Bool) throws(ConfigError) -> T {
        guard yaml.utf8.count <= maxFileBytes else {
            throw ConfigError(problems: [ConfigProblem(path: "", message: tooLarge(yaml.utf8.count))])
        }
        // JSON forbids raw tabs inside strings, so every tab in valid JSON is
        // whitespace; libyaml rejects tabs used as indentation, so blank them.
        let text = json ? yaml.replacingOccurrences(of: "\t", with: " ") : yaml
        let root: ConfigNode?
        do {
            root = try YAMLReader(limits: limits).parse(text)
        } catch {
            throw ConfigError(problems: [error])
        }
        if let root, !Self.isMappingOrNull(root) {
            throw ConfigError(problems: [ConfigProblem(path: "", message: "the top level must be a mapping of keys to values, found \(root.kindDescription)", location: root.location)])
        }
        return try decode(T.self, tree: overrides.apply(to: root))
    }

    /// Decodes an already-parsed tree, validates it, and throws every problem.
    public static func decode<T: Decodable>(_ type: T.Type, tree: ConfigNode) throws(ConfigError) -> T {
        let result = ConfigDecoder().decode(T.self, from: tree)
        var problems = result.problems.sorted(by: byLine) + result.unknownKeys
        if let value = result.value, let validating = value as? any ConfigValidating {
            var index: [String: ConfigLocation] = [:]
            DecodingState.indexLocations(tree, path: "", into: &index)
            let decodingPaths = result.covered
            var semantic: [ConfigProblem] = []
            for var problem in validating.validate() {
                // A value that failed to decode was replaced by a placeholder;
                // its validation problems would only repeat the first report.
                if decodingPaths.contains(where: { overlaps($0, problem.path) }) { continue }
                problem.location = problem.location ?? locate(problem.path, in: index)
                semantic.append(problem)
            }
            problems += semantic.sorted(by: byLine)
        }
        guard let value = result.value, problems.isEmpty else {
            throw ConfigError(problems: problems.isEmpty ? [ConfigProblem(path: "", message: "the config could not be decoded")] : problems)
        }
        return value
    }

    /// Checks an in-memory config (e.g. after the program changed it) the way loading would.
    public static func validate(_ config: some ConfigValidating) throws(ConfigError) {
        let problems = config.validate()
        if !problems.isEmpty { throw ConfigError(problems: problems) }
    }

    /// The effective config as one line of sorted-key JSON, for logging once at
    /// start-up. Secrets are already redacted by the config types' encoders.
    public static func describe(_ config: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(config) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: Helpers

    static func readText(_ path: String) throws(ConfigProblem) -> String {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ConfigProblem(path: "", message: "no such file; create it or pass another path with --config")
        }
        if isDirectory.boolValue { throw ConfigProblem(path: "", message: "is a directory, not a file") }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ConfigProblem(path: "", message: "cannot be read (check its permissions)")
        }
        defer { try? handle.close() }
        // Read at most one byte past the limit, so a huge or endless file
        // (a FIFO, /dev/zero) is refused without being read whole.
        let data: Data
        do {
            data = try handle.read(upToCount: maxFileBytes + 1) ?? Data()
        } catch {
            throw ConfigProblem(path: "", message: "cannot be read: \(error.localizedDescription)")
        }
        if data.count > maxFileBytes {
            throw ConfigProblem(path: "", message: tooLarge(nil))
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigProblem(path: "", message: "is not UTF-8 text")
        }
        return text
    }

    static func tooLarge(_ size: Int?) -> String {
        let found = size.map { " (\($0) bytes)" } ?? ""
        return "is larger than 1 MB\(found); a config file should be a few kilobytes"
    }

    static func column(_ location: ConfigLocation) -> Int? {
        if case .position(_, let column) = location { return column }
        return nil
    }

    static func isMappingOrNull(_ node: ConfigNode) -> Bool {
        switch node.kind {
        case .mapping, .null: true
        default: false
        }
    }

    static func byLine(_ a: ConfigProblem, _ b: ConfigProblem) -> Bool {
        (a.location?.line ?? Int.max, a.location.flatMap(column) ?? 0) < (b.location?.line ?? Int.max, b.location.flatMap(column) ?? 0)
    }

    /// True when one path is the other or contains it.
    static func overlaps(_ a: String, _ b: String) -> Bool {
        func within(_ inner: String, _ outer: String) -> Bool {
            inner == outer || inner.hasPrefix(outer + ".") || inner.hasPrefix(outer + "[")
        }
        return within(a, b) || within(b, a)
    }

    static func locate(_ path: String, in index: [String: ConfigLocation]) -> ConfigLocation? {
        var p: String? = path
        while let current = p {
            if let loc = index[current] { return loc }
            p = ConfigPath.parent(of: current)
        }
        return nil
    }
}
