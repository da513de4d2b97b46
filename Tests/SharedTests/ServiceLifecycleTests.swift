import Foundation
import Synchronization
import Testing
@testable import Shared
@testable import RoomcastCLI
@testable import RoomcastConfig
@testable import RoomcastLifecycle
@testable import RoomcastLogging

/// Records what the lifecycle did, for assertions.
private final class Recorder: Sendable {
    let steps = Mutex<[String]>([])
    let exits = Mutex<[ExitCode]>([])
    func add(_ s: String) { steps.withLock { $0.append(s) } }
}

/// Runs `body` but fails loudly instead of hanging when it takes unreasonably long.
private func withTimeout<T: Sendable>(_ seconds: Double = 20, _ body: @escaping @Sendable () async -> T) async throws -> T {
    let result = Mutex<(done: Bool, continuation: CheckedContinuation<T?, Never>?)>((false, nil))
    let finish = { @Sendable (value: T?) in
        let c = result.withLock { r -> CheckedContinuation<T?, Never>? in
            if r.done { return nil }
            r.done = true
            defer { r.continuation = nil }
            return r.continuation
        }
        c?.resume(returning: value)
    }
    // Unstructured on purpose: a hung body must not keep the test waiting.
    let value: T? = await withCheckedContinuation { c in
        result.withLock { $0.continuation = c }
        Task { finish(await body()) }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            finish(nil)
        }
    }
    return try #require(value, "timed out after \(seconds) s")
}

/// A gate tests open by hand; `wait()` returns once it is open.
private final class Gate: Sendable {
    private let state = Mutex<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    func open() {
        let waiters = state.withLock { s in
            s.open = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for w in waiters { w.resume() }
    }
    func wait() async {
        await withCheckedContinuation { c in
            let now = state.withLock { s -> Bool in
                if s.open { return true }
                s.waiters.append(c)
                return false
            }
            if now { c.resume() }
        }
    }
}

@Suite struct ShutdownStateMachineTests {
    typealias M = ShutdownStateMachine

    @Test func firstSignalBeginsGracefulShutdownThatExitsZero() {
        var m = M()
        #expect(m.handle(.signal(SIGTERM)) == .beginShutdown(.signal(SIGTERM)))
        #expect(m.handle(.serviceFinished) == .none)
        #expect(m.handle(.shutdownCompleted) == .finish(.success))
        #expect(m.state == .finished(.success))
        #expect(m.handle(.signal(SIGTERM)) == .none)
    }

    /// SIGHUP asks for the config to be read again: the run stops as for SIGTERM and exits 129,
    /// which a service manager restarting failed services (`Restart=on-failure`) starts again.
    @Test func hangUpStopsGracefullyAndAsksForARestart() {
        var m = M()
        #expect(m.handle(.signal(SIGHUP)) == .beginShutdown(.signal(SIGHUP)))
        // A closing terminal hangs up twice: the stop under way finishes.
        #expect(m.handle(.signal(SIGHUP)) == .none)
        #expect(m.handle(.shutdownCompleted) == .finish(ExitCode(129)))
    }

    @Test(arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143))])
    func secondSignalExitsAtOnce(_ signal: Int32, _ code: Int32) {
        var m = M()
        _ = m.handle(.signal(SIGINT))
        guard case .exitNow(let exit, _) = m.handle(.signal(signal)) else {
            Issue.record("expected exitNow")
            return
        }
        #expect(exit.rawValue == code)
        #expect(m.handle(.shutdownCompleted) == .none)
    }

    @Test func deadlineExitsOne() {
        var m = M()
        _ = m.handle(.requested(.success))
        #expect(m.handle(.deadlinePassed) == .exitNow(.failure, why: "shutdown deadline passed"))
    }

    @Test func serviceOutcomesPickTheExitCode() {
        var a = M()
        #expect(a.handle(.serviceFinished) == .beginShutdown(.serviceFinished))
        #expect(a.handle(.shutdownCompleted) == .finish(.success))
        var b = M()
        _ = b.handle(.serviceFailed("boom", .failure))
        #expect(b.handle(.deadlinePassed) == .exitNow(.failure, why: "shutdown deadline passed"))
        var c = M()
        _ = c.handle(.requested(.dataError))
        #expect(c.handle(.shutdownCompleted) == .finish(.dataError))
        var d = M()
        #expect(d.handle(.deadlinePassed) == .none)
        #expect(d.handle(.shutdownCompleted) == .none)
        #expect(d.state == .running)
    }
}

@Suite struct ServiceLifecycleTests {
    @Test func serviceEndingRunsHandlersInReverseAndExitsZero() async throws {
        let rec = Recorder()
        let lifecycle = ServiceLifecycle(logger: .silent, signals: [], hardExit: { c in rec.exits.withLock { $0.append(c) } })
        lifecycle.onShutdown("disconnect") { rec.add("disconnect") }
        lifecycle.onShutdown("publish offline") { rec.add("offline") }
        let code = try await withTimeout { await lifecycle.run { rec.add("service") } }
        #expect(code == .success)
        #expect(rec.steps.withLock { $0 } == ["service", "offline", "disconnect"])
        #expect(rec.exits.withLock { $0 }.isEmpty)
    }

    @Test func signalCancelsTheServiceThenRunsHandlers() async throws {
        let rec = Recorder()
        let handler = InMemoryLogHandler()
        let lifecycle = ServiceLifecycle(logger: Logger(label: "t", level: .trace, handler: handler), signals: [],
                                         hardExit: { c in rec.exits.withLock { $0.append(c) } })
        let started = Gate()
        lifecycle.onShutdown("flush") { rec.add("flush") }
        let code = try await withTimeout {
            async let result = lifecycle.run {
                started.open()
                do {
                    try await Task.sleep(for: .seconds(3600))
                } catch {
                    rec.add("cancelled")
                    throw error
                }
            }
            await started.wait()
            lifecycle.deliver(signal: SIGTERM)
            return await result
        }
        #expect(code == .success)
        #expect(rec.steps.withLock { $0 } == ["cancelled", "flush"])
        #expect(handler.records.contains { $0.message == "shutting down" && $0.metadata["reason"] == "signal SIGTERM" })
    }

    /// A signal handled before the service is stored as the run's: the service does not start,
    /// the handlers run, and the run ends. The service was started and cancelled, so it could
    /// run (here: record that it started) beside the shutdown handlers.
    @Test func aSignalBeforeTheServiceStartsLeavesItUnstarted() async throws {
        let rec = Recorder()
        // The deadline runs from the signal, before `run`: long, so a suite that keeps every
        // thread of the pool busy for a while cannot make it pass.
        let lifecycle = ServiceLifecycle(logger: .silent, shutdownDeadline: 600, signals: [],
                                         hardExit: { c in rec.exits.withLock { $0.append(c) } })
        lifecycle.onShutdown("flush") { rec.add("flush") }
        lifecycle.deliver(signal: SIGTERM)
        let code = try await withTimeout(600) { await lifecycle.run { rec.add("started") } }
        #expect(code == .success && rec.exits.withLock { $0 }.isEmpty)
        #expect(rec.steps.withLock { $0 } == ["flush"])
    }

    @Test func serviceCanEndTheRunWithACode() async throws {
        let lifecycle = ServiceLifecycle(logger: .silent, signals: [], hardExit: { _ in })
        let code = try await withTimeout {
            await lifecycle.run {
                lifecycle.requestShutdown(exitCode: .dataError)
                await lifecycle.waitForShutdown()
            }
        }
        #expect(code == .dataError)
        #expect(lifecycle.isShuttingDown)
    }

    @Test func serviceErrorsMapToExitCodes() async throws {
        let failing = ServiceLifecycle(logger: .silent, signals: [], hardExit: { _ in })
        let code = try await withTimeout { await failing.run { throw ConfigError(problems: []) } }
        #expect(code == .config)
        struct Boom: Error {}
        let other = ServiceLifecycle(logger: .silent, signals: [], hardExit: { _ in })
        #expect(try await withTimeout { await other.run { throw Boom() } } == .failure)
    }

    /// Why the service failed is an error: `edge-agent scan` shows only warnings and worse, and
    /// the reason, logged as a notice, never reached the terminal (a missing capability: exit 1
    /// and not a word).
    @Test func aServiceFailureIsLoggedAsAnError() async throws {
        let handler = InMemoryLogHandler()
        let lifecycle = ServiceLifecycle(logger: Logger(label: "t", level: .warning, handler: handler), signals: [], hardExit: { _ in })
        struct NoPermission: Error, CustomStringConvertible { var description: String { "hci0: Operation not permitted" } }
        #expect(try await withTimeout { await lifecycle.run { throw NoPermission() } } == .failure)
        #expect(handler.records(atLeast: .error).contains { $0.metadata["reason"]?.contains("Operation not permitted") == true },
                "\(handler.records)")
    }

    @Test func secondSignalExitsAtOnceWith130() async throws {
        let rec = Recorder()
        let lifecycle = ServiceLifecycle(logger: .silent, signals: [], hardExit: { c in rec.exits.withLock { $0.append(c) } })
        let inHandler = Gate()
        let release = Gate()
        lifecycle.onShutdown("stuck") {
            inHandler.open()
            await release.wait()
        }
        let code = try await withTimeout {
            async let result = lifecycle.run { await lifecycle.waitForShutdown() }
            lifecycle.deliver(signal: SIGINT)
            await inHandler.wait()
            lifecycle.deliver(signal: SIGINT)
            return await result
        }
        release.open()
        #expect(code == .signal(SIGINT))
        #expect(code.rawValue == 130)
        #expect(rec.exits.withLock { $0 } == [ExitCode(130)])
    }

    @Test func deadlinePassingExitsOneWithALogLine() async throws {
        let rec = Recorder()
        let handler = InMemoryLogHandler()
        let lifecycle = ServiceLifecycle(logger: Logger(label: "t", handler: handler), shutdownDeadline: 0.05, signals: [],
                                         hardExit: { c in rec.exits.withLock { $0.append(c) } })
        let release = Gate()
        lifecycle.onShutdown("never finishes") { await release.wait() }
        let code = try await withTimeout { await lifecycle.run {} }
        release.open()
        #expect(code == .failure)
        #expect(rec.exits.withLock { $0 } == [.failure])
        let line = try #require(handler.records(atLeast: .error).first)
        #expect(line.metadata["reason"] == "shutdown deadline passed")
    }

    /// A real signal through the DispatchSource path (SIGUSR2, so a stray
    /// delivery cannot stop the test process).
    @Test func realSignalStartsTheShutdown() async throws {
        let rec = Recorder()
        let lifecycle = ServiceLifecycle(logger: .silent, signals: [SIGUSR2], hardExit: { c in rec.exits.withLock { $0.append(c) } })
        let started = Gate()
        let code = try await withTimeout {
            async let result = lifecycle.run {
                started.open()
                await lifecycle.waitForShutdown()
            }
            await started.wait()
            kill(getpid(), SIGUSR2)
            return await result
        }
        #expect(code == .success)
        #expect(rec.exits.withLock { $0 }.isEmpty)
    }
}
