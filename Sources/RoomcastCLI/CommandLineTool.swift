import Foundation
import Shared

/// The glue a thin `@main` needs: parse argv, print help, version or the
/// usage error, and run the chosen command's action.
///
/// ```swift
/// static let config = Option<String?>("config", short: "c", value: "file", help: "Config file.")
/// static let spec = CommandSpec("tool", abstract: "…", subcommands: [
///     CommandSpec("run", abstract: "…", options: [config]) { command, _ in await run(command) },
/// ])
/// await CommandLineTool.main(spec)   // exits with the action's code, 0 for help, 64 for a usage error
/// ```
public enum CommandLineTool {
    /// What the program should do after reading its command line.
    public enum Decision: Sendable, Equatable {
        case run(ParsedCommand)
        case exit(ExitCode)
    }

    /// Parses `arguments` against `spec`. Help and version go to `output`
    /// (exit 0); a usage error goes to `errorOutput` (exit 64).
    public static func decide(_ spec: CommandSpec,
                              arguments: [String] = Array(CommandLine.arguments.dropFirst()),
                              output: (String) -> Void = { StandardStream.output.write($0) },
                              errorOutput: (String) -> Void = { StandardStream.error.write($0) }) -> Decision {
        do {
            switch try spec.parse(arguments) {
            case .run(let command):
                return .run(command)
            case .help(let text):
                output(text)
                return .exit(.success)
            case .version(let version):
                output(version + "\n")
                return .exit(.success)
            }
        } catch {
            errorOutput(error.description + "\n")
            return .exit(.usage)
        }
    }

    /// Parses `arguments` and runs the chosen command's action; help, version and usage
    /// errors are handled as `decide` does.
    public static func run(_ spec: CommandSpec, arguments: [String] = Array(CommandLine.arguments.dropFirst()),
                           output: CommandOutput = .standard) async -> ExitCode {
        switch decide(spec, arguments: arguments, output: output.output, errorOutput: output.errorOutput) {
        case .exit(let code):
            return code
        case .run(let command):
            return await run(command, output: output)
        }
    }

    /// Runs the action of an already parsed command.
    public static func run(_ command: ParsedCommand, output: CommandOutput = .standard) async -> ExitCode {
        guard let action = command.chain.last?.action else {
            output.errorOutput(command.usageError("'\(command.commandPath.joined(separator: " "))' has nothing to run").description + "\n")
            return .usage
        }
        return await action.body(command, output)
    }

    /// `run(spec)` on the process's arguments, then exit with its code.
    public static func main(_ spec: CommandSpec) async -> Never {
        exit(await run(spec).rawValue)
    }
}

extension CommandOutput {
    /// The process's standard output and standard error.
    public static let standard = CommandOutput(output: { StandardStream.output.write($0) },
                                               errorOutput: { StandardStream.error.write($0) })
}
