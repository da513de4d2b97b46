import Foundation
import RoomcastConfig

/// Loading a config file (YAML, or JSON which is YAML too): read, parse, decode, validate.
extension ConfigLoader {
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

    static func parse<T: Decodable>(_ type: T.Type, yaml: String, overrides: Overrides,
                                    limits: YAMLReader.Limits, json: Bool) throws(ConfigError) -> T {
        guard yaml.utf8.count <= maxFileBytes else {
            throw ConfigError(problems: [ConfigProblem(path: "", message: tooLarge(yaml.utf8.count))])
        }
        // JSON forbids raw tabs inside strings, so every tab in valid JSON is
        // whitespace; libyaml rejects tabs used as indentation, so blank them.
        let text = json ? yaml.replacingOccurrences(of: "\t", with: " ") : yaml
        let document: YAMLReader.Document
        do {
            document = try YAMLReader(limits: limits).read(text)
        } catch {
            throw ConfigError(problems: [error])
        }
        if let root = document.root, !Self.isMappingOrNull(root) {
            throw ConfigError(problems: [ConfigProblem(path: "", message: "the top level must be a mapping of keys to values, found \(root.kindDescription)", location: root.location)])
        }
        // A repeated key is reported beside whatever else is wrong, so one run names every problem.
        do {
            let value = try decode(T.self, tree: overrides.apply(to: document.root))
            if document.problems.isEmpty { return value }
        } catch {
            throw ConfigError(problems: document.problems + error.problems.filter { !document.replaced.contains($0.path) })
        }
        throw ConfigError(problems: document.problems)
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

    static func isMappingOrNull(_ node: ConfigNode) -> Bool {
        switch node.kind {
        case .mapping, .null: true
        default: false
        }
    }
}
