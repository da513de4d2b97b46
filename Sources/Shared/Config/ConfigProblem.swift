/// One thing wrong with a config: where (path and location) and what.
public struct ConfigProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// Dotted path such as `nodes[2].room`; empty for the whole document.
    public var path: String
    public var message: String
    /// Where the offending value is; nil when it has no place in the file.
    public var location: ConfigLocation?

    public init(path: String, message: String, location: ConfigLocation? = nil) {
        self.path = path
        self.message = message
        self.location = location
    }

    /// `nodes[2].room: unknown room 'kitchn' (line 14, column 11)`.
    public var description: String {
        var s = path.isEmpty ? message : "\(path): \(message)"
        if let location { s += " (\(location))" }
        return s
    }
}

/// Every problem found while loading a config. Printed one problem per line.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file that was loaded, or nil for an in-memory document.
    public var file: String?
    public var problems: [ConfigProblem]

    public init(file: String? = nil, problems: [ConfigProblem]) {
        self.file = file
        self.problems = problems
    }

    public var description: String {
        let source = file.map { "config file '\($0)'" } ?? "config"
        let count = problems.count == 1 ? "1 problem" : "\(problems.count) problems"
        return (["\(source): \(count):"] + problems.map { "  \($0)" }).joined(separator: "\n")
    }

    /// The problem messages with their paths, without locations (handy in tests).
    public var messages: [String] {
        problems.map { $0.path.isEmpty ? $0.message : "\($0.path): \($0.message)" }
    }
}
