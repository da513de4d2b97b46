import RoomcastCLI

/// A config that could not be loaded ends the program with EX_CONFIG.
extension ConfigError: ExitCodeProviding {
    public var exitCode: ExitCode { .config }
}

extension ConfigProblem: ExitCodeProviding {
    public var exitCode: ExitCode { .config }
}
