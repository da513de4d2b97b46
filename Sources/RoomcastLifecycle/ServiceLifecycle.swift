import Dispatch
import Foundation
import Synchronization
import RoomcastCLI
import RoomcastLogging

/// Runs a service until it ends or the process is asked to stop, then shuts
/// down gracefully: cancels the service, waits for it, and runs the
/// registered shutdown handlers (publish offline, flush, disconnect) in
/// reverse order of registration, all within one deadline. Shaped like
/// swift-service-lifecycle, much smaller.
///
/// Exit codes: 0 after a clean shutdown that a signal, the service's return
/// or `requestShutdown()` started, 129 when SIGHUP started it (a restart
/// applies the config, `ShutdownReason.exitCode`); the error's code (`ExitCode(for:)`) when the
/// service threw; 1 when the deadline passed; 128 + signal (130 SIGINT,
/// 143 SIGTERM) when a second signal arrives during shutdown. The last two
/// call `hardExit` at once (the default is `exit`), because the code that
/// would return from `run` may be the very thing that hangs.
public final class ServiceLifecycle: Sendable {
    public typealias Handler = @Sendable () async -> Void

    private struct Inner {
        var machine = ShutdownStateMachine()
        var handlers: [(String, Handler)] = []
        var continuation: CheckedContinuation<ExitCode, Never>?
        var result: ExitCode?
        var serviceTask: Task<Void, Never>?
        var shutdownWaiters: [CheckedContinuation<Void, Never>] = []
        var sources: [DispatchSourceBox] = []
        var deadlineTimer: DispatchSourceBox?
    }

    private let inner = Mutex(Inner())
    private let logger: Logger
    private let signals: [Int32]
    private let deadline: Double
    private let hardExit: @Sendable (ExitCode) -> Void
    private let queue = DispatchQueue(label: "roomcast.lifecycle")

    /// - Parameters:
    ///   - shutdownDeadline: seconds the whole graceful shutdown may take.
    ///   - signals: signals that start a shutdown; pass `[]` to install none (tests).
    ///   - hardExit: ends the process when the deadline passes or a second signal arrives.
    public init(logger: Logger, shutdownDeadline: Double = 10, signals: [Int32] = [SIGINT, SIGTERM, SIGHUP],
                hardExit: @escaping @Sendable (ExitCode) -> Void = { exit($0.rawValue) }) {
        self.logger = logger
        self.deadline = shutdownDeadline
        self.signals = signals
        self.hardExit = hardExit
    }

    /// Registers work for the graceful shutdown; handlers run last-registered first.
    public func onShutdown(_ name: String, _ handler: @escaping Handler) {
        inner.withLock { $0.handlers.append((name, handler)) }
    }

    /// Ends the run from inside (e.g. the replay reached the end of its file).
    public func requestShutdown(exitCode: ExitCode = .success) {
        handle(.requested(exitCode))
    }

    /// Feeds a signal as if it had arrived (the signal sources call this too).
    public func deliver(signal: Int32) {
        handle(.signal(signal))
    }

    /// True once a shutdown has begun.
    public var isShuttingDown: Bool {
        inner.withLock { if case .running = $0.machine.state { false } else { true } }
    }

    /// Returns when a shutdown begins (at once if it already has); a service
    /// may await this to stop its loops cleanly.
    public func waitForShutdown() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = inner.withLock { state -> Bool in
                if case .running = state.machine.state {
                    state.shutdownWaiters.append(c)
                    return false
                }
                return true
            }
            if now { c.resume() }
        }
    }

    /// Runs `service` until the run ends and returns the exit code. Call once.
    public func run(_ service: @escaping @Sendable () async throws -> Void) async -> ExitCode {
        // The service starts only once every signal source is registered, so a
        // SIGTERM sent right after start-up is not lost.
        // A reader of our output or logs that went away is an error where it is written
        // (`StandardStream`), never a signal that kills the process in the middle of a stop
        // (libmosquitto ignores SIGPIPE too, from its first client on).
        signal(SIGPIPE, SIG_IGN)
        await installSignalSources()
        // Started and stored in one step: a signal handled in between found no service to wait
        // for, and ran the shutdown handlers while the service was starting. One handled before
        // leaves the service unstarted.
        inner.withLock { state in
            guard case .running = state.machine.state else { return }
            state.serviceTask = Task { [self] in
                do {
                    try await service()
                    handle(.serviceFinished)
                } catch {
                    // Cancellation during a shutdown is ignored by the state machine.
                    handle(.serviceFailed(String(describing: error), ExitCode(for: error)))
                }
            }
        }
        let code = await withCheckedContinuation { (c: CheckedContinuation<ExitCode, Never>) in
            let done = inner.withLock { state -> ExitCode? in
                if let result = state.result { return result }
                state.continuation = c
                return nil
            }
            if let done { c.resume(returning: done) }
        }
        cancelSources()
        return code
    }

    // MARK: Machinery

    private func handle(_ event: ShutdownStateMachine.Event) {
        let action = inner.withLock { $0.machine.handle(event) }
        switch action {
        case .none:
            break
        case .beginShutdown(let reason):
            beginShutdown(reason)
        case .finish(let code):
            logger.notice("shutdown complete", metadata: ["exit.code": code.description])
            finish(code)
        case .exitNow(let code, let why):
            logger.error("exiting without a complete shutdown", metadata: ["reason": why, "exit.code": code.description,
                                                                           "shutdown.deadline_s": String(deadline)])
            hardExit(code)
            finish(code)
        }
    }

    private func beginShutdown(_ reason: ShutdownReason) {
        if case .serviceFailed = reason {
            // Why the run failed, at a level every configuration shows (`scan` keeps only warnings
            // and worse on its terminal, a `log.level: warning` journal the same).
            logger.error("shutting down", metadata: ["reason": reason.description])
        } else if reason == .signal(SIGHUP) {
            logger.notice("shutting down", metadata: [
                "reason": reason.description,
                "why": "the config is read at start: restarting the service applies it"])
        } else {
            logger.notice("shutting down", metadata: ["reason": reason.description])
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + deadline)
        timer.setEventHandler { [self] in handle(.deadlinePassed) }
        let (waiters, handlers, task) = inner.withLock { state in
            state.deadlineTimer = DispatchSourceBox(timer)
            defer { state.shutdownWaiters = [] }
            return (state.shutdownWaiters, state.handlers, state.serviceTask)
        }
        timer.resume()
        for waiter in waiters { waiter.resume() }
        let serviceEnded: Bool
        switch reason {
        case .serviceFinished, .serviceFailed: serviceEnded = true
        default: serviceEnded = false
        }
        Task { [self] in
            if !serviceEnded, let task {
                task.cancel()
                await task.value
            }
            for (name, handler) in handlers.reversed() {
                logger.debug("shutdown step", metadata: ["step": name])
                await handler()
            }
            handle(.shutdownCompleted)
        }
    }

    private func finish(_ code: ExitCode) {
        let (continuation, timer) = inner.withLock { state in
            state.result = state.result ?? code
            defer { state.continuation = nil; state.deadlineTimer = nil }
            return (state.continuation, state.deadlineTimer)
        }
        timer?.source.cancel()
        continuation?.resume(returning: code)
    }

    private func installSignalSources() async {
        var sources: [DispatchSourceBox] = []
        let registered = DispatchGroup()
        for sig in signals {
            // The default action would kill the process before the source sees
            // the signal, so ignore it first (what Darwin's kqueue sources need).
            // On Linux, libdispatch replaces the disposition with its own
            // forwarding handler when it registers the source; when such a
            // handler is already in place (a second run in one process), keep it.
            let previous = signal(sig, SIG_IGN)
            let ignored = previous.map { unsafeBitCast($0, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) } ?? false
            // A hang-up the caller chose to ignore (`nohup`) stays ignored: the run outlives its terminal.
            if sig == SIGHUP && ignored { continue }
            if let previous, !ignored {
                signal(sig, previous)
            }
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { [self] in deliver(signal: sig) }
            registered.enter()
            source.setRegistrationHandler { registered.leave() }
            source.resume()
            sources.append(DispatchSourceBox(source))
        }
        inner.withLock { $0.sources = sources }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            registered.notify(queue: queue) { c.resume() }
        }
    }

    private func cancelSources() {
        let sources = inner.withLock { state in
            defer { state.sources = [] }
            return state.sources
        }
        for box in sources { box.source.cancel() }
    }
}

/// Lets a dispatch source live in a `Mutex`. Dispatch sources are thread-safe
/// (resume/cancel may be called from any thread); the SDK just does not mark them `Sendable`.
private final class DispatchSourceBox: @unchecked Sendable {
    let source: any DispatchSourceProtocol
    init(_ source: any DispatchSourceProtocol) { self.source = source }
}
