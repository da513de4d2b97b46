import Foundation
import RoomcastCLI

/// The decisions of a run's shutdown, as a pure state machine: events in,
/// actions out. `ServiceLifecycle` feeds it from signals, the service and
/// timers; tests drive it directly.
///
/// - The first trigger (signal, service end, request) starts a graceful shutdown.
/// - When the shutdown work finishes, the run ends with the reason's exit code.
/// - A second signal during shutdown ends the run at once with 128 + signal
///   (130 for SIGINT, 143 for SIGTERM), like a shell reports a killed process;
///   not a second SIGHUP, which a closing terminal sends on its own.
/// - When the deadline passes first, the run ends at once with exit code 1.
public struct ShutdownStateMachine: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        case running
        case shuttingDown(ShutdownReason)
        case finished(ExitCode)
    }

    public enum Event: Sendable, Equatable {
        case signal(Int32)
        case serviceFinished
        case serviceFailed(String, ExitCode)
        case requested(ExitCode)
        /// Every shutdown step has run.
        case shutdownCompleted
        /// The shutdown deadline passed.
        case deadlinePassed
    }

    public enum Action: Sendable, Equatable {
        case none
        /// Start the graceful shutdown (and its deadline).
        case beginShutdown(ShutdownReason)
        /// The run is over; exit with this code.
        case finish(ExitCode)
        /// Exit at once, without waiting for the remaining shutdown work.
        case exitNow(ExitCode, why: String)
    }

    public private(set) var state: State = .running

    public init() {}

    public mutating func handle(_ event: Event) -> Action {
        switch (state, event) {
        case (.running, .signal(let s)): return begin(.signal(s))
        case (.running, .serviceFinished): return begin(.serviceFinished)
        case (.running, .serviceFailed(let m, let code)): return begin(.serviceFailed(m, code))
        case (.running, .requested(let code)): return begin(.requested(code))
        case (.running, .shutdownCompleted), (.running, .deadlinePassed):
            return .none

        case (.shuttingDown(let reason), .shutdownCompleted):
            state = .finished(reason.exitCode)
            return .finish(reason.exitCode)
        case (.shuttingDown, .signal(SIGHUP)):
            // A terminal that closes hangs up its jobs more than once (the shell, then the
            // kernel): the stop under way finishes.
            return .none
        case (.shuttingDown, .signal(let s)):
            let code = ExitCode.signal(s)
            state = .finished(code)
            return .exitNow(code, why: "second signal \(ShutdownReason.signalName(s)) during shutdown")
        case (.shuttingDown, .deadlinePassed):
            state = .finished(.failure)
            return .exitNow(.failure, why: "shutdown deadline passed")
        case (.shuttingDown, .serviceFinished), (.shuttingDown, .serviceFailed), (.shuttingDown, .requested):
            // The service ending is part of the shutdown already under way.
            return .none

        case (.finished, _):
            return .none
        }
    }

    private mutating func begin(_ reason: ShutdownReason) -> Action {
        state = .shuttingDown(reason)
        return .beginShutdown(reason)
    }
}
