/// How a Roomcast executable ends, following sysexits.h where it has a name for it.
public struct ExitCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// Everything went as asked.
    public static let success = ExitCode(0)
    /// A runtime failure (broker gone for good, adapter lost, shutdown deadline passed).
    public static let failure = ExitCode(1)
    /// The command line was wrong (EX_USAGE).
    public static let usage = ExitCode(64)
    /// Input data was malformed, e.g. a capture file to replay (EX_DATAERR).
    public static let dataError = ExitCode(65)
    /// A permission the program needs was not given to it, e.g. the agent's CAP_NET_RAW (EX_NOPERM).
    public static let noPermission = ExitCode(77)
    /// The config file was missing or wrong (EX_CONFIG).
    public static let config = ExitCode(78)

    /// Killed by `signal` without a graceful shutdown: 128 + its number (130 for SIGINT, 143 for SIGTERM).
    public static func signal(_ signal: Int32) -> ExitCode { ExitCode(128 + signal) }

    /// The conventional code for an error that ended the program (config errors provide `.config`).
    public init(for error: any Error) {
        switch error {
        case let e as any ExitCodeProviding: self = e.exitCode
        case is UsageError: self = .usage
        default: self = .failure
        }
    }

    public var description: String { String(rawValue) }
}

/// An error that knows which exit code it should end the program with.
public protocol ExitCodeProviding: Error {
    var exitCode: ExitCode { get }
}
