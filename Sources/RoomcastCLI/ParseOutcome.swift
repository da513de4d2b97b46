/// What a command line asks for.
public enum ParseOutcome: Sendable, Equatable {
    /// Run this command.
    case run(ParsedCommand)
    /// Print this help text to stdout and exit 0.
    case help(String)
    /// Print this version to stdout and exit 0.
    case version(String)
}
