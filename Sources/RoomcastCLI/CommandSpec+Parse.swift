import Shared

extension CommandSpec {
    /// Reads `arguments` (without the program name) against this spec.
    ///
    /// Accepts `--opt value`, `--opt=value`, `-o value`, `-ovalue`, grouped
    /// short flags (`-vq`), repeated options, and `--` after which everything
    /// is positional. Options of a parent command are accepted after a
    /// subcommand name too. A non-repeating option given twice keeps the last
    /// value (so wrappers can append overrides). `-h`/`--help` at any level
    /// wins over errors.
    public func parse(_ arguments: [String]) throws(UsageError) -> ParseOutcome {
        var parser = ArgumentParserState(root: self)
        return try parser.run(arguments)
    }
}

private struct ArgumentParserState {
    var chain: [CommandSpec]
    var values: [String: [String]] = [:]
    var flags: [String: Int] = [:]
    var positionals: [String] = []
    let version: String?
    /// The default subcommand was entered for an option that only it has (`edge-agent --config
    /// a.yaml`), not named: a subcommand's name may still follow.
    var enteredByOption = false

    init(root: CommandSpec) {
        chain = [root]
        version = root.version
    }

    var current: CommandSpec { chain[chain.count - 1] }

    func error(_ message: String) -> UsageError {
        UsageError(message, usage: CommandSpec.usageLine(chain), commandPath: chain.map(\.name).joined(separator: " "))
    }

    mutating func run(_ arguments: [String]) throws(UsageError) -> ParseOutcome {
        // Help first, so `--help` works even on a command line with mistakes,
        // for the command named before it.
        if let helpIndex = arguments.firstIndex(where: { $0 == "--help" || $0 == "-h" }),
           !arguments[..<helpIndex].contains("--") {
            var probe = ArgumentParserState(root: chain[0])
            let commands = probe.commandChain(arguments[..<helpIndex])
            return .help(CommandSpec.helpText(commands))
        }
        if let version, arguments.prefix(while: { $0 != "--" }).contains("--version") {
            return .version(version)
        }

        var index = 0
        var terminated = false
        while index < arguments.count {
            let arg = arguments[index]
            index += 1
            if !terminated {
                if arg == "--" { terminated = true; continue }
                if arg.hasPrefix("--") {
                    try long(arg, arguments, &index)
                    continue
                }
                if arg.hasPrefix("-"), arg.count > 1, !Self.looksNumeric(arg) {
                    try short(arg, arguments, &index)
                    continue
                }
                if enteredByOption, positionals.isEmpty {
                    enteredByOption = false
                    // `edge-agent --config a.yaml run`: the subcommand its option already entered.
                    if arg == current.name { continue }
                    let parent = chain[chain.count - 2]
                    if parent.subcommand(arg) != nil {
                        throw error("'\(arg)' comes after an option of '\(current.name)': write the subcommand first, "
                                    + "\(parent.name) \(arg) [options]")
                    }
                }
                if positionals.isEmpty, !current.subcommands.isEmpty {
                    if let sub = current.subcommand(arg) {
                        chain.append(sub)
                        continue
                    }
                    if let name = current.defaultSubcommand, let sub = current.subcommand(name), !sub.arguments.isEmpty {
                        chain.append(sub)
                    } else {
                        var message = "unknown subcommand '\(ShownText.argument(arg))'"
                        if let guess = Suggestion.closest(to: arg, in: current.subcommands.map(\.name)) {
                            message += "; did you mean '\(guess)'?"
                        }
                        throw error(message)
                    }
                }
            }
            positionals.append(arg)
        }

        if !current.subcommands.isEmpty {
            guard let name = current.defaultSubcommand, let sub = current.subcommand(name) else {
                throw error("missing subcommand; expected one of: \(current.subcommands.map(\.name).joined(separator: ", "))")
            }
            chain.append(sub)
        }
        try checkArguments()
        for command in chain {
            for option in command.options where option.isRequired && values[option.name] == nil && flags[option.name] == nil {
                throw error("missing required option '\(option.synopsis)'")
            }
        }
        return .run(ParsedCommand(chain: chain, values: values, flags: flags, positionals: positionals))
    }

    /// The commands named before `--help`, ignoring everything else.
    mutating func commandChain(_ arguments: ArraySlice<String>) -> [CommandSpec] {
        var skipValue = false
        for arg in arguments {
            if skipValue { skipValue = false; continue }
            if arg.hasPrefix("-") {
                let name = String(arg.drop(while: { $0 == "-" }).prefix(while: { $0 != "=" }))
                if !arg.contains("="), let o = lookup(long: name), case .option = o.kind, arg.hasPrefix("--") { skipValue = true }
                continue
            }
            if let sub = current.subcommand(arg) { chain.append(sub) } else { break }
        }
        return chain
    }

    func lookup(long name: String) -> OptionSpec? {
        for command in chain.reversed() {
            if let o = command.options.first(where: { $0.name == name }) { return o }
        }
        return nil
    }

    func lookup(short c: Character) -> OptionSpec? {
        for command in chain.reversed() {
            if let o = command.options.first(where: { $0.short == c }) { return o }
        }
        return nil
    }

    /// Options of the default subcommand may come before it is chosen
    /// (`edge-agent --config x` runs `edge-agent run --config x`).
    mutating func enterDefaultSubcommand(ifItHas match: (CommandSpec) -> Bool) -> Bool {
        guard positionals.isEmpty, let name = current.defaultSubcommand, let sub = current.subcommand(name), match(sub) else {
            return false
        }
        chain.append(sub)
        enteredByOption = true
        return true
    }

    mutating func long(_ arg: String, _ arguments: [String], _ index: inout Int) throws(UsageError) {
        let body = arg.dropFirst(2)
        let name: String
        let inline: String?
        if let eq = body.firstIndex(of: "=") {
            name = String(body[..<eq])
            inline = String(body[body.index(after: eq)...])
        } else {
            name = String(body)
            inline = nil
        }
        var spec = lookup(long: name)
        if spec == nil, enterDefaultSubcommand(ifItHas: { $0.options.contains { $0.name == name } }) {
            spec = lookup(long: name)
        }
        guard let spec else {
            var message = "unknown option '--\(ShownText.argument(name))'"
            var candidates = chain.flatMap { $0.options.map(\.name) } + ["help"]
            if positionals.isEmpty, let name = current.defaultSubcommand, let sub = current.subcommand(name) {
                candidates += sub.options.map(\.name)
            }
            if version != nil { candidates.append("version") }
            if let guess = Suggestion.closest(to: name, in: candidates) { message += "; did you mean '--\(guess)'?" }
            throw error(message)
        }
        try take(spec, inline: inline, arguments, &index)
    }

    mutating func short(_ arg: String, _ arguments: [String], _ index: inout Int) throws(UsageError) {
        let letters = Array(arg.dropFirst())
        var i = 0
        while i < letters.count {
            let c = letters[i]
            var spec = lookup(short: c)
            if spec == nil, enterDefaultSubcommand(ifItHas: { $0.options.contains { $0.short == c } }) {
                spec = lookup(short: c)
            }
            guard let spec else { throw error("unknown option '-\(c)'") }
            if case .option = spec.kind {
                let rest = String(letters[(i + 1)...])
                try take(spec, inline: rest.isEmpty ? nil : rest, arguments, &index, shown: "-\(c)")
                return
            }
            flags[spec.name, default: 0] += 1
            i += 1
        }
    }

    mutating func take(_ spec: OptionSpec, inline: String?, _ arguments: [String], _ index: inout Int,
                       shown: String? = nil) throws(UsageError) {
        switch spec.kind {
        case .flag:
            if inline != nil { throw error("flag '--\(spec.name)' does not take a value") }
            flags[spec.name, default: 0] += 1
        case .option(let valueName, _):
            let value: String
            if let inline {
                value = inline
            } else if index < arguments.count, Self.canBeValue(arguments[index]) {
                value = arguments[index]
                index += 1
            } else {
                throw error("missing value for '\(shown ?? "--\(spec.name)") <\(valueName)>'")
            }
            values[spec.name, default: []].append(value)
        }
    }

    func checkArguments() throws(UsageError) {
        let specs = current.arguments
        var remaining = positionals[...]
        for argument in specs {
            if argument.isRepeating {
                if remaining.isEmpty && !argument.isOptional { throw error("missing required argument '<\(argument.name)>'") }
                remaining = []
                break
            }
            if remaining.isEmpty {
                if !argument.isOptional { throw error("missing required argument '<\(argument.name)>'") }
                continue
            }
            remaining = remaining.dropFirst()
        }
        if let extra = remaining.first { throw error("unexpected argument '\(ShownText.argument(extra))'") }
    }

    /// A value may start with '-' only when it is a number or a lone '-' (stdin).
    static func canBeValue(_ text: String) -> Bool {
        text == "-" || !text.hasPrefix("-") || looksNumeric(text)
    }

    static func looksNumeric(_ text: String) -> Bool {
        text.count > 1 && text.hasPrefix("-") && Double(text) != nil
    }
}
