import Shared

/// A command line read against a `CommandSpec`: which command, and its
/// options, flags and positional arguments, read through their declarations
/// (`command[seconds]`, `command[dryRun]`, `command[inputs]`).
public struct ParsedCommand: Sendable, Equatable {
    /// The specs from the root to the chosen command.
    public let chain: [CommandSpec]
    /// Values of options by long name, in command-line order.
    let values: [String: [String]]
    /// How often each flag was given, by long name.
    let flags: [String: Int]
    /// Positional arguments in order (after `--` too).
    public let positionals: [String]

    init(chain: [CommandSpec], values: [String: [String]], flags: [String: Int], positionals: [String]) {
        self.chain = chain
        self.values = values
        self.flags = flags
        self.positionals = positionals
    }

    /// The command words, e.g. `["edge-agent", "run"]`.
    public var commandPath: [String] { chain.map(\.name) }

    /// The chosen (innermost) command's name.
    public var command: String { chain.last?.name ?? "" }

    /// The value of `option`: converted, its default when not given. A value that does not
    /// convert is a usage error naming the option.
    public subscript<Value>(option: Option<Value>) -> Value {
        get throws(UsageError) {
            switch option.read(values[option.spec.name] ?? []) {
            case .success(let value):
                return value
            case .failure(let failure):
                if let reason = failure.reason {
                    throw usageError("invalid value '\(ShownText.argument(failure.text))' for '--\(option.spec.name)': \(reason)")
                }
                throw usageError("invalid value '\(ShownText.argument(failure.text))' for '\(option.spec.synopsis)'")
            }
        }
    }

    /// A text option, which cannot fail to convert.
    public subscript(option: Option<String>) -> String {
        if case .success(let value) = option.read(values[option.spec.name] ?? []) { return value }
        return values[option.spec.name]?.last ?? ""
    }

    /// A text option without a default: its last value, or nil.
    public subscript(option: Option<String?>) -> String? { values[option.spec.name]?.last }

    /// A repeating text option: every value, in order.
    public subscript(option: Option<[String]>) -> [String] { values[option.spec.name] ?? [] }

    /// True when the flag was given.
    public subscript(flag: Flag) -> Bool { flagCount(flag.spec.name) > 0 }

    /// How many times the flag was given (`-v -v`).
    public func count(of flag: Flag) -> Int { flagCount(flag.spec.name) }

    /// The value of a declared positional argument.
    public subscript<Value>(argument: Argument<Value>) -> Value { argument.read(arguments(argument.spec.name)) }

    /// Whether `--name` was given at all (with a value or as a flag).
    public func isGiven(_ option: some OptionDeclaration) -> Bool {
        values[option.spec.name] != nil || flags[option.spec.name] != nil
    }

    /// The last value of `--name`, or nil when not given.
    func option(_ name: String) -> String? { values[name]?.last }

    /// Every value of a repeatable `--name`, in order.
    package func options(_ name: String) -> [String] { values[name] ?? [] }

    /// True when the flag `--name` was given.
    package func flag(_ name: String) -> Bool { (flags[name] ?? 0) > 0 }

    /// How many times the flag was given.
    func flagCount(_ name: String) -> Int { flags[name] ?? 0 }

    /// The value of a declared positional argument (the first one for a repeating argument).
    func argument(_ name: String) -> String? { arguments(name).first }

    /// Every value of a declared positional argument.
    func arguments(_ name: String) -> [String] {
        guard let spec = chain.last else { return [] }
        var index = 0
        for argument in spec.arguments {
            if argument.isRepeating {
                return argument.name == name ? Array(positionals.dropFirst(index)) : []
            }
            if argument.name == name { return index < positionals.count ? [positionals[index]] : [] }
            index += 1
        }
        return []
    }

    /// The declaration of `--name` in the chosen command or one of its parents.
    public func spec(forOption name: String) -> OptionSpec? {
        for command in chain.reversed() {
            if let o = command.options.first(where: { $0.name == name }) { return o }
        }
        return nil
    }

    /// A usage error about this command line, with the chosen command's usage line.
    public func usageError(_ message: String) -> UsageError {
        UsageError(message, usage: CommandSpec.usageLine(chain), commandPath: commandPath.joined(separator: " "))
    }
}
