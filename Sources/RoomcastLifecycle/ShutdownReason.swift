import Foundation
import RoomcastCLI

/// Why a run is ending.
public enum ShutdownReason: Sendable, Equatable, CustomStringConvertible {
    /// SIGINT, SIGTERM or another installed signal arrived.
    case signal(Int32)
    /// The service returned by itself (e.g. the end of a replay file).
    case serviceFinished
    /// The service threw; carries the error's text and the exit code it maps to.
    case serviceFailed(String, ExitCode)
    /// A service asked for the run to end with this code.
    case requested(ExitCode)

    /// The exit code once shutdown completed in time.
    ///
    /// A signal that led to a clean, timely shutdown exits 0: the operator
    /// asked for a stop and got one (systemd counts 0 as a clean stop too).
    /// SIGHUP exits 129: it asks for the config to be read again (or its
    /// terminal closed), and the config is read at start, so a service
    /// manager that restarts a failed service (`Restart=on-failure`) starts it
    /// again with the config as it is now; systemd leaves one that exits 0 stopped.
    public var exitCode: ExitCode {
        switch self {
        case .signal(SIGHUP): .signal(SIGHUP)
        case .signal, .serviceFinished: .success
        case .serviceFailed(_, let code): code
        case .requested(let code): code
        }
    }

    public var description: String {
        switch self {
        case .signal(let s): "signal \(ShutdownReason.signalName(s))"
        case .serviceFinished: "service finished"
        case .serviceFailed(let message, _): "service failed: \(message)"
        case .requested(let code): "requested (exit \(code))"
        }
    }

    static func signalName(_ signal: Int32) -> String {
        switch signal {
        case 2: "SIGINT"
        case 15: "SIGTERM"
        case 1: "SIGHUP"
        default: "\(signal)"
        }
    }
}
