extension CommandSpec {
    /// Column where option and argument descriptions start.
    static let helpColumn = 26
    /// Help text is wrapped to this width.
    static let helpWidth = 80

    /// The `--help` text of the command at the end of `path` (the root when empty),
    /// in the familiar OVERVIEW / USAGE / ARGUMENTS / OPTIONS / SUBCOMMANDS layout.
    public func helpText(path: [String] = []) -> String {
        var chain = [self]
        for name in path {
            guard let sub = chain[chain.count - 1].subcommand(name) else { break }
            chain.append(sub)
        }
        return Self.helpText(chain)
    }

    static func helpText(_ chain: [CommandSpec]) -> String {
        let command = chain[chain.count - 1]
        let isRoot = chain.count == 1
        var out: [String] = []
        out.append(wrap("OVERVIEW: " + command.abstract, indent: 0, hanging: 0))
        if let discussion = command.discussion {
            out.append("")
            out.append(discussion.split(separator: "\n", omittingEmptySubsequences: false)
                .map { wrap(String($0), indent: 0, hanging: 0) }.joined(separator: "\n"))
        }
        out.append("")
        out.append(wrapUsage(usageParts(chain)))

        if !command.arguments.isEmpty {
            out.append("")
            out.append("ARGUMENTS:")
            for argument in command.arguments {
                out.append(row("<\(argument.name)>" + (argument.isRepeating ? " ..." : ""), argument.help))
            }
        }

        out.append("")
        out.append("OPTIONS:")
        for option in command.options {
            var label = option.short.map { "-\($0), " } ?? ""
            label += option.synopsis
            if case .option(_, true) = option.kind { label += " ..." }
            var help = option.help
            if let d = option.defaultDescription { help += " (default: \(d))" }
            out.append(row(label, help))
        }
        if isRoot, let _ = command.version {
            out.append(row("--version", "Show the version."))
        }
        out.append(row("-h, --help", "Show help information."))

        if !command.subcommands.isEmpty {
            out.append("")
            out.append("SUBCOMMANDS:")
            for sub in command.subcommands {
                let label = sub.name + (sub.name == command.defaultSubcommand ? " (default)" : "")
                out.append(row(label, sub.abstract))
            }
            out.append("")
            let path = chain.map(\.name).joined(separator: " ")
            out.append("  See '\(path) <subcommand> --help' for detailed help.")
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// `edge-agent run [--config <file>] [--dry-run] <source>`.
    static func usageLine(_ chain: [CommandSpec]) -> String {
        usageParts(chain).joined(separator: " ")
    }

    /// The usage line's items; an item such as `[--beacon <id> ...]` is never split.
    static func usageParts(_ chain: [CommandSpec]) -> [String] {
        let command = chain[chain.count - 1]
        var parts = [chain.map(\.name).joined(separator: " ")]
        for option in command.options {
            var s = option.synopsis
            if case .option(_, true) = option.kind { s += " ..." }
            parts.append(option.isRequired ? s : "[\(s)]")
        }
        parts.append(contentsOf: command.arguments.map(\.synopsis))
        if !command.subcommands.isEmpty {
            parts.append(command.defaultSubcommand == nil ? "<subcommand>" : "[<subcommand>]")
        }
        return parts
    }

    /// `USAGE: ` and the items, wrapped under the first one.
    static func wrapUsage(_ parts: [String]) -> String {
        let prefix = "USAGE: "
        var lines: [String] = []
        var line = prefix
        for part in parts {
            if line.count > prefix.count && line.count + 1 + part.count > helpWidth {
                lines.append(line)
                line = String(repeating: " ", count: prefix.count)
            } else if line.count > prefix.count {
                line += " "
            }
            line += part
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }

    /// Two spaces, the label padded to the help column, then the wrapped help;
    /// a label too long for its column puts the help on the next line.
    static func row(_ label: String, _ help: String) -> String {
        let lead = "  " + label
        if lead.count <= helpColumn - 2 {
            let padded = lead + String(repeating: " ", count: helpColumn - lead.count)
            return padded + wrap(help, indent: helpColumn, hanging: helpColumn, firstLineUsed: true)
        }
        return lead + "\n" + wrap(help, indent: helpColumn, hanging: helpColumn)
    }

    /// Word-wraps `text` to `helpWidth`; continuation lines start at `hanging`.
    static func wrap(_ text: String, indent: Int, hanging: Int, firstLineUsed: Bool = false) -> String {
        var lines: [String] = []
        var line = firstLineUsed ? "" : String(repeating: " ", count: indent)
        var width = indent
        var lineHasWords = false
        for word in text.split(separator: " ") {
            if lineHasWords && width + 1 + word.count > helpWidth {
                lines.append(line)
                line = String(repeating: " ", count: hanging)
                width = hanging
                lineHasWords = false
            }
            if lineHasWords { line += " "; width += 1 }
            line += word
            width += word.count
            lineHasWords = true
        }
        lines.append(line)
        return lines.joined(separator: "\n")
    }
}
