import RoomcastCLI

/// Values from the command line that replace values of the config file
/// (`--broker` → `mqtt.broker`, `--node` → `node`). They are applied to the
/// parsed tree before decoding, so they are type-checked and validated exactly
/// like file values, and a problem with one names the flag it came from.
public struct Overrides: Sendable, Equatable {
    /// One replacement: a dotted config path, its new value and the flag it came from.
    public struct Entry: Sendable, Equatable {
        public var path: String
        public var value: ConfigNode.Kind
        public var source: String
    }

    public private(set) var entries: [Entry] = []

    public init() {}

    /// Sets `path` (e.g. `mqtt.broker`, `nodes[0].room`) to the scalar `value`.
    public mutating func set(_ path: String, to value: String, from source: String) {
        entries.append(Entry(path: path, value: .scalar(value, .plain), source: source))
    }

    /// Sets `path` to a list of scalars (a repeated option).
    public mutating func set(_ path: String, toList values: [String], from source: String) {
        let location = ConfigLocation.override(source)
        entries.append(Entry(path: path, value: .sequence(values.map { ConfigNode(.scalar($0, .plain), at: location) }),
                             source: source))
    }

    /// Sets `path` to `true` (a flag such as `--dry-run`).
    public mutating func set(_ path: String, flag: Bool, from source: String) {
        entries.append(Entry(path: path, value: .scalar(flag ? "true" : "false", .plain), source: source))
    }

    public var isEmpty: Bool { entries.isEmpty }

    /// The options of a parsed command line that were given and declare a config path
    /// (`Option(...).overriding("mqtt.broker")`). Flags set `true`, repeatable options set
    /// lists, others set their last value.
    public init(_ command: ParsedCommand) {
        var paths: [String: String] = [:]
        for spec in command.chain.reversed() {
            for option in spec.options { if let path = option.configPath, paths[option.name] == nil { paths[option.name] = path } }
        }
        self.init(command, paths: paths)
    }

    /// The given options named in `paths` (option name → config path).
    init(_ command: ParsedCommand, paths: [String: String]) {
        for (option, path) in paths.sorted(by: { $0.key < $1.key }) {
            guard let spec = command.spec(forOption: option) else { continue }
            let flag = "--\(option)"
            switch spec.kind {
            case .flag:
                if command.flag(option) { set(path, flag: true, from: flag) }
            case .option(_, let repeating):
                let values = command.options(option)
                if values.isEmpty { continue }
                if repeating { set(path, toList: values, from: flag) } else { set(path, to: values[values.count - 1], from: flag) }
            }
        }
    }

    /// `root` with every override applied (an empty document when there is no file).
    public func apply(to root: ConfigNode?) throws(ConfigError) -> ConfigNode {
        var node = root ?? ConfigNode(.mapping([]), at: .position(line: 1, column: 1))
        if case .null = node.kind { node.kind = .mapping([]) }
        var problems: [ConfigProblem] = []
        for entry in entries {
            guard let components = ConfigPath.components(entry.path) else {
                problems.append(ConfigProblem(path: entry.path, message: "not a config path", location: .override(entry.source)))
                continue
            }
            let value = ConfigNode(entry.value, at: .override(entry.source))
            if let message = Self.set(value, at: components[...], in: &node) {
                problems.append(ConfigProblem(path: entry.path, message: message, location: .override(entry.source)))
            }
        }
        if !problems.isEmpty { throw ConfigError(problems: problems) }
        return node
    }

    /// Returns why the value could not be placed, or nil.
    private static func set(_ value: ConfigNode, at path: ArraySlice<ConfigPath.Component>, in node: inout ConfigNode) -> String? {
        guard let first = path.first else {
            node = value
            return nil
        }
        switch (first, node.kind) {
        case (.key(let key), .mapping(var entries)):
            if let i = entries.firstIndex(where: { $0.key == key }) {
                let message = set(value, at: path.dropFirst(), in: &entries[i].value)
                node.kind = .mapping(entries)
                return message
            }
            var child = ConfigNode(path.count > 1 ? Self.emptyContainer(for: path[path.startIndex + 1]) : .null, at: value.location)
            if let message = set(value, at: path.dropFirst(), in: &child) { return message }
            entries.append(ConfigNode.Entry(key: key, keyLocation: value.location, value: child))
            node.kind = .mapping(entries)
            return nil
        case (.key, .null):
            node.kind = .mapping([])
            return set(value, at: path, in: &node)
        case (.index(let i), .sequence(var items)):
            guard i < items.count else { return "the list has only \(items.count) elements" }
            let message = set(value, at: path.dropFirst(), in: &items[i])
            node.kind = .sequence(items)
            return message
        case (.key, _):
            return "cannot set a key inside \(node.kindDescription)"
        case (.index, _):
            return "cannot index into \(node.kindDescription)"
        }
    }

    private static func emptyContainer(for component: ConfigPath.Component) -> ConfigNode.Kind {
        if case .key = component { return .mapping([]) }
        return .sequence([])
    }
}
