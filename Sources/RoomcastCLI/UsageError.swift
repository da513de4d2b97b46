/// A command line that does not fit the command's spec; ends the program with exit code 64.
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, e.g. `unknown option '--brokr'; did you mean '--broker'?`.
    public var message: String
    /// The usage line of the command being parsed.
    public var usage: String
    /// The command words, e.g. `edge-agent run`, for the `--help` hint.
    public var commandPath: String

    public init(_ message: String, usage: String, commandPath: String) {
        self.message = message
        self.usage = usage
        self.commandPath = commandPath
    }

    /// Three lines for stderr: the error, the usage line, where to get help.
    public var description: String {
        "Error: \(message)\nUsage: \(usage)\n  See '\(commandPath) --help' for more information."
    }
}
