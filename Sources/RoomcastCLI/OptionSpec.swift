/// A named option (`--config <file>`) or flag (`--dry-run`).
public struct OptionSpec: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case flag
        /// Takes a value; `repeating` options may be given several times and keep every value.
        case option(valueName: String, repeating: Bool)
    }

    /// The long name without dashes.
    public var name: String
    public var short: Character?
    public var kind: Kind
    public var help: String
    /// Shown as `(default: ...)` in help; the program applies the default itself.
    public var defaultDescription: String?
    public var isRequired: Bool
    /// The config path the option's value replaces (`mqtt.broker`), for `Overrides(command)`.
    public var configPath: String?

    public init(name: String, short: Character? = nil, kind: Kind, help: String,
                defaultDescription: String? = nil, isRequired: Bool = false, configPath: String? = nil) {
        self.configPath = configPath
        self.name = name
        self.short = short
        self.kind = kind
        self.help = help
        self.defaultDescription = defaultDescription
        self.isRequired = isRequired
    }

    /// `--config <file>` (or `--dry-run`), as shown in messages and usage lines.
    public var synopsis: String {
        switch kind {
        case .flag: "--\(name)"
        case .option(let value, _): "--\(name) <\(value)>"
        }
    }
}
