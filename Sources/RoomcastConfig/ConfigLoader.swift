import Foundation

/// Turns a config tree into a Codable type, reporting every problem at once: types, unknown
/// keys, meaning. Loading a file or YAML text is `ConfigLoader.load` / `parse` in RoomcastYAML.
public enum ConfigLoader {
    /// Files larger than this are refused before parsing.
    public static let maxFileBytes = 1 << 20

    /// Builds a config from overrides alone, for running without a file.
    public static func fromOverrides<T: Decodable>(_ type: T.Type, _ overrides: Overrides) throws(ConfigError) -> T {
        try decode(T.self, tree: overrides.apply(to: nil))
    }

    /// Decodes an already-parsed tree, validates it, and throws every problem.
    public static func decode<T: Decodable>(_ type: T.Type, tree: ConfigNode) throws(ConfigError) -> T {
        let result = ConfigDecoder().decode(T.self, from: tree)
        var problems = result.problems.sorted(by: byLine) + KeyCatalogue.placing(result.unknownKeys, in: T.self)
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

    static func column(_ location: ConfigLocation) -> Int? {
        if case .position(_, let column) = location { return column }
        return nil
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
