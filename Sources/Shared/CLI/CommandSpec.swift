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
