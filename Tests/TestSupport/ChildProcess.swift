import Foundation
import Synchronization

/// A child process whose stdout and stderr go to files (readable while it
/// runs, shown when a test fails), with async waiting for its exit.
///
/// Spawned with posix_spawn and an empty signal mask: Foundation's `Process`
/// passes on the spawning thread's mask, and Dispatch threads block SIGTERM,
/// so a broker started that way would ignore `stop()`.
public final class ChildProcess: Sendable {
    private struct ExitState { var status: Int32?; var waiters: [UUID: CheckedContinuation<Int32, Never>] = [:] }
    private final class ExitBox: Sendable {
        let state = Mutex(ExitState())
        /// Signalled by the reaper when the child has exited, for threads that block on it.
        let exited = DispatchSemaphore(value: 0)
    }
    private let exitBox = ExitBox()
    /// Where stdout goes.
    public let stdoutPath: String
    /// Where stderr goes.
    public let stderrPath: String
    /// The child's pid.
    public let pid: pid_t

    /// Launches `executable` with `arguments`; stdout/stderr are appended to the given files;
    /// `environment` replaces the inherited one when given, but for the sanitizer settings
    /// (`childEnvironment(_:inheriting:)`).
    /// `descriptors` maps a descriptor number in the child to one of ours to hand it (a pipe).
    public init(_ executable: String, _ arguments: [String], stdoutPath: String, stderrPath: String,
                environment: [String: String]? = nil, descriptors: [Int32: Int32] = [:]) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ChildProcessError.notExecutable(executable)
        }
        self.stdoutPath = stdoutPath
        self.stderrPath = stderrPath

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var noneBlocked = sigset_t()
        sigemptyset(&noneBlocked)
        posix_spawnattr_setsigmask(&attr, &noneBlocked)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGUSR1, SIGUSR2, SIGCHLD] { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        for (childFD, ours) in descriptors.sorted(by: { $0.key < $1.key }) {
            posix_spawn_file_actions_adddup2(&actions, ours, childFD)
        }
        // Nothing else of ours: a socket a test holds (or closes to hang up) must not live on in
        // a broker or browser another test starts meanwhile, which keeps the connection open.
        if let closeFrom = Self.addCloseFrom {
            _ = closeFrom(&actions, max(3, (descriptors.keys.max() ?? 2) + 1))
        }

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { given in
            Self.childEnvironment(given, inheriting: ProcessInfo.processInfo.environment).sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer { for e in envp ?? [] { free(e) } }
        var child: pid_t = 0
        let rc = envp.map { e in e.withUnsafeBufferPointer { posix_spawn(&child, executable, &actions, &attr, argv, $0.baseAddress) } }
            ?? posix_spawn(&child, executable, &actions, &attr, argv, environ)
        guard rc == 0 else { throw ChildProcessError.spawnFailed(executable, String(cString: strerror(rc))) }
        pid = child
        let spawned = child

        // Reap on a dedicated thread: waitpid blocks, which the cooperative pool must not.
        let reaper = Thread { [exitBox] in
            var status: Int32 = 0
            while waitpid(spawned, &status, 0) == -1 && errno == EINTR {}
            // WIFEXITED → exit code, else the terminating signal.
            let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : status & 0x7F
            let waiters = exitBox.state.withLock { s in
                s.status = code
                defer { s.waiters.removeAll() }
                return s.waiters
            }
            for w in waiters.values { w.resume(returning: code) }
            exitBox.exited.signal()
        }
        reaper.name = "reap \(spawned)"
        reaper.start()
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 on), which Swift's Glibc module
    /// does not declare.
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    deinit {
        if exitBox.state.withLock({ $0.status == nil }) { Foundation.kill(pid, SIGKILL) }
    }

    /// True until the child has exited (and been reaped).
    public var isRunning: Bool { exitBox.state.withLock { $0.status == nil } }

    /// Sends `signal` to the child (no effect once it has exited).
    public func send(_ signal: Int32) {
        if isRunning { Foundation.kill(pid, signal) }
    }

    /// Waits for the child to exit; returns its exit code (or the signal that ended it), or -1
    /// when the waiting task is cancelled first. Cancellable, so that `withTimeout` around it
    /// returns at its deadline: its task group waits for the wait to end, and a child that
    /// ignored a signal would otherwise hold the test, and the run, for ever.
    @discardableResult
    public func waitForExit() async -> Int32 {
        let id = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { c in
                let status = exitBox.state.withLock { s -> Int32? in
                    if let st = s.status { return st }
                    // Checked under the lock the cancellation handler takes: cancelled before
                    // this, the handler found no waiter to resume.
                    if Task.isCancelled { return -1 }
                    s.waiters[id] = c
                    return nil
                }
                if let status { c.resume(returning: status) }
            }
        } onCancel: {
            exitBox.state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: -1)
        }
    }

    /// Blocks the calling thread until the child has exited (for synchronous helpers; the
    /// reaper thread does the waiting, so no SIGCHLD handling is involved — Foundation's
    /// `Process.waitUntilExit` was seen to hang on a reaped-by-nobody child here).
    @discardableResult
    public func waitForExitBlocking() -> Int32 {
        exitBox.exited.wait()
        // Pass the exit on to the next thread that blocks on it.
        exitBox.exited.signal()
        return exitBox.state.withLock { $0.status } ?? -1
    }

    /// The sanitizer settings a child keeps whatever environment a test gives it.
    public static let sanitizerVariables = ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS"]

    /// The environment a child given `given` runs with: `given`, plus this process's sanitizer
    /// settings where `given` has none. Under `make sanitize` an instrumented binary a test starts
    /// with its own environment must still read the pass's options: where to write its reports
    /// (else they land in the test's log, seen only as an exit status), the leak suppressions
    /// (else LeakSanitizer's known false positives fail its exit), the symbolizer they match by.
    public static func childEnvironment(_ given: [String: String], inheriting inherited: [String: String]) -> [String: String] {
        var environment = given
        for name in sanitizerVariables where environment[name] == nil {
            if let value = inherited[name] { environment[name] = value }
        }
        return environment
    }

    /// Runs a tool to completion on the calling thread; its exit status and stdout.
    public static func runBlocking(_ executable: String, _ arguments: [String],
                                   environment: [String: String]? = nil) throws -> (status: Int32, stdout: String) {
        let tag = UUID().uuidString.prefix(8)
        let out = NSTemporaryDirectory() + "roomcast-run-\(tag).out"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let child = try ChildProcess(executable, arguments, stdoutPath: out, stderrPath: "/dev/null", environment: environment)
        let status = child.waitForExitBlocking()
        return (status, child.stdout)
    }

    /// Everything written to stdout so far.
    public var stdout: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    /// Everything written to stderr so far.
    public var stderr: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Runs a tool to completion and returns its stdout; throws with its stderr when it fails.
    @discardableResult
    public static func run(_ executable: String, _ arguments: [String], in directory: String) async throws -> String {
        let tag = UUID().uuidString.prefix(8)
        let out = "\(directory)/.\(tag).out", err = "\(directory)/.\(tag).err"
        defer {
            try? FileManager.default.removeItem(atPath: out)
            try? FileManager.default.removeItem(atPath: err)
        }
        let child = try ChildProcess(executable, arguments, stdoutPath: out, stderrPath: err)
        let status = await child.waitForExit()
        guard status == 0 else {
            throw ChildProcessError.failed(command: ([executable] + arguments).joined(separator: " "),
                                           status: status, stderr: child.stderr)
        }
        return child.stdout
    }
}

/// Why a child process could not do its job.
public enum ChildProcessError: Error, CustomStringConvertible {
    case notExecutable(String)
    case spawnFailed(String, String)
    case failed(command: String, status: Int32, stderr: String)

    public var description: String {
        switch self {
        case .notExecutable(let p): "\(p) is not an executable file"
        case .spawnFailed(let p, let why): "cannot start \(p): \(why)"
        case .failed(let c, let s, let e): "`\(c)` exited with status \(s):\n\(e)"
        }
    }
}
