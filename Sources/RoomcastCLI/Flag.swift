/// A flag (`--dry-run`), declared once and read as a `Bool` (`command[dryRun]`) or a count
/// (`command.count(of: verbose)` for `-vv`).
public struct Flag: OptionDeclaration {
    public private(set) var spec: OptionSpec

    public init(_ name: String, short: Character? = nil, help: String) {
        spec = .flag(name, short: short, help: help)
    }

    /// The same flag, setting the config file's `path` to true when given (`Overrides(command)`).
    public func overriding(_ path: String) -> Flag {
        var copy = self
        copy.spec.configPath = path
        return copy
    }
}
