/// A command of a command-line tool, declared as data: its options,
/// positional arguments, subcommands and what it runs. `parse(_:)` reads argv
/// against it, `helpText(path:)` renders `--help`, and `CommandLineTool.run`
/// runs the chosen command's `action`.
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
    /// What the command does once its command line is read; nil for a command that only groups subcommands.
    public var action: CommandAction?

    public init(_ name: String, abstract: String, discussion: String? = nil, version: String? = nil,
                arguments: [any ArgumentDeclaration] = [], options: [any OptionDeclaration] = [],
                subcommands: [CommandSpec] = [], defaultSubcommand: String? = nil,
                run action: CommandAction.Body? = nil) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.version = version
        self.arguments = arguments.map(\.spec)
        self.options = options.map(\.spec)
        self.subcommands = subcommands
        self.defaultSubcommand = defaultSubcommand
        self.action = action.map(CommandAction.init)
    }

    public func subcommand(_ name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }
}

/// What a command runs: the parsed command line and where its text goes, to an exit code.
public struct CommandAction: Sendable, Equatable {
    public typealias Body = @Sendable (ParsedCommand, CommandOutput) async -> ExitCode

    public let body: Body

    public init(_ body: @escaping Body) { self.body = body }

    /// Actions are not compared: two specs are equal when they declare the same command line.
    public static func == (lhs: CommandAction, rhs: CommandAction) -> Bool { true }
}

/// Where a command writes: standard output and standard error, or a test's buffers.
public struct CommandOutput: Sendable {
    public var output: @Sendable (String) -> Void
    public var errorOutput: @Sendable (String) -> Void

    public init(output: @escaping @Sendable (String) -> Void, errorOutput: @escaping @Sendable (String) -> Void) {
        self.output = output
        self.errorOutput = errorOutput
    }
}
