import Foundation

/// The glue a thin `@main` needs: parse argv, print help, version or the
/// usage error, and either hand back the command to run or the exit code.
///
/// ```swift
/// guard case .run(let command) = CommandLineTool.decide(spec) else { exit(...) }
/// let overrides = Overrides(command, paths: StandardOptions.overridePaths)
/// let config = try ConfigLoader.load(AgentConfig.self, from: command.option("config") ?? defaultPath,
///                                    overrides: overrides)          // ConfigError → exit 78
/// logger.info("config", metadata: ["config": ConfigLoader.describe(config)])
/// let lifecycle = ServiceLifecycle(logger: logger)
/// lifecycle.onShutdown("disconnect") { await client.disconnect() }
/// exit(await lifecycle.run { try await agent.run() }.rawValue)
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
                              output: (String) -> Void = { FileHandle.standardOutput.write(Data($0.utf8)) },
                              errorOutput: (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }) -> Decision {
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
}
