/// A command line read against a `CommandSpec`: which command, and its
/// options, flags and positional arguments, with typed accessors.
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

    /// The last value of `--name`, or nil when not given.
    public func option(_ name: String) -> String? { values[name]?.last }

    /// Every value of a repeatable `--name`, in order.
    public func options(_ name: String) -> [String] { values[name] ?? [] }

    /// True when the flag `--name` was given.
    public func flag(_ name: String) -> Bool { (flags[name] ?? 0) > 0 }

    /// How many times the flag was given (`-v -v`).
    public func flagCount(_ name: String) -> Int { flags[name] ?? 0 }

    /// The value of a declared positional argument (the first one for a repeating argument).
    public func argument(_ name: String) -> String? { arguments(name).first }

    /// Every value of a declared positional argument.
    public func arguments(_ name: String) -> [String] {
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

    /// The last value of `--name` converted to `T`; a value that does not convert is a usage error.
    public func option<T: LosslessStringConvertible>(_ name: String, as type: T.Type) throws(UsageError) -> T? {
        guard let text = option(name) else { return nil }
        guard let value = T(text) else {
            let what = spec(forOption: name)?.synopsis ?? "--\(name)"
            throw usageError("invalid value '\(text)' for '\(what)'")
        }
        if let d = value as? Double, !d.isFinite { throw usageError("invalid value '\(text)' for '--\(name)': must be a finite number") }
        return value
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
