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
