/// A command of a command-line tool, declared as data: its options,
/// positional arguments and subcommands. `parse(_:)` reads argv against it and
/// `helpText(path:)` renders `--help`.
public struct CommandSpec: Sendable, Equatable {
    public var name: String
    /// One line shown after OVERVIEW and in the parent's SUBCOMMANDS list.
    public var abstract: String
    /// Extra paragraphs shown after the overview line.
    public var discussion: String?
    /// When set on the root command, `--version` prints it.
    public var version: String?
    public var arguments: [ArgumentSpec]
    public var options: [OptionSpec]
    public var subcommands: [CommandSpec]
    /// The subcommand run when none is named.
    public var defaultSubcommand: String?

    public init(_ name: String, abstract: String, discussion: String? = nil, version: String? = nil,
                arguments: [ArgumentSpec] = [], options: [OptionSpec] = [],
                subcommands: [CommandSpec] = [], defaultSubcommand: String? = nil) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.version = version
        self.arguments = arguments
        self.options = options
        self.subcommands = subcommands
        self.defaultSubcommand = defaultSubcommand
    }

    public func subcommand(_ name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }
}

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

    public init(name: String, short: Character? = nil, kind: Kind, help: String,
                defaultDescription: String? = nil, isRequired: Bool = false) {
        self.name = name
        self.short = short
        self.kind = kind
        self.help = help
        self.defaultDescription = defaultDescription
        self.isRequired = isRequired
    }

    /// A boolean flag such as `--dry-run`.
    public static func flag(_ name: String, short: Character? = nil, help: String) -> OptionSpec {
        OptionSpec(name: name, short: short, kind: .flag, help: help)
    }

    /// An option with a value such as `--config <file>`.
    public static func option(_ name: String, short: Character? = nil, value: String, help: String,
                              default defaultDescription: String? = nil, required: Bool = false,
                              repeating: Bool = false) -> OptionSpec {
        OptionSpec(name: name, short: short, kind: .option(valueName: value, repeating: repeating), help: help,
                   defaultDescription: defaultDescription, isRequired: required)
    }

    /// `--config <file>` (or `--dry-run`), as shown in messages and usage lines.
    public var synopsis: String {
        switch kind {
        case .flag: "--\(name)"
        case .option(let value, _): "--\(name) <\(value)>"
        }
    }
}

/// A positional argument.
public struct ArgumentSpec: Sendable, Equatable {
    public var name: String
    public var help: String
    public var isOptional: Bool
    /// Takes every remaining positional; only the last argument may repeat.
    public var isRepeating: Bool

    public init(_ name: String, help: String, optional: Bool = false, repeating: Bool = false) {
        self.name = name
        self.help = help
        self.isOptional = optional
        self.isRepeating = repeating
    }

    var synopsis: String {
        var s = "<\(name)>"
        if isRepeating { s += " ..." }
        return isOptional ? "[\(s)]" : s
    }
}
