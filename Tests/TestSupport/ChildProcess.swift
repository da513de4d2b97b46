import Foundation
import Synchronization

/// A child process whose stdout and stderr go to files (readable while it
/// runs, shown when a test fails), with async waiting for its exit.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched through its thread-safe methods;
    // the mutable exit state lives behind `exit`.
    private let process: Process
    private struct ExitState { var status: Int32?; var waiters: [CheckedContinuation<Int32, Never>] = [] }
    private final class ExitBox: Sendable { let state = Mutex(ExitState()) }
    private let exitBox = ExitBox()
    /// Where stdout goes.
    public let stdoutPath: String
    /// Where stderr goes.
    public let stderrPath: String
    /// The child's pid.
    public let pid: Int32

    /// Launches `executable` with `arguments`; stdout/stderr are appended to the given files.
    public init(_ executable: String, _ arguments: [String], stdoutPath: String, stderrPath: String) throws {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw ChildProcessError.notExecutable(executable)
        }
        for path in [stdoutPath, stderrPath] where !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        out.seekToEndOfFile()
        err.seekToEndOfFile()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        self.process = p
        self.stdoutPath = stdoutPath
        self.stderrPath = stderrPath
        let box = exitBox
        p.terminationHandler = { proc in
            let status = proc.terminationStatus
            let waiters = box.state.withLock { s in
                s.status = status
                defer { s.waiters.removeAll() }
                return s.waiters
            }
            for w in waiters { w.resume(returning: status) }
        }
        try p.run()
        try? out.close()
        try? err.close()
        pid = p.processIdentifier
    }

    deinit {
        if exitBox.state.withLock({ $0.status == nil }) { Foundation.kill(pid, SIGKILL) }
    }

    /// True until the child has exited (and been reaped).
    public var isRunning: Bool { exitBox.state.withLock { $0.status == nil } }

    /// Sends `signal` to the child (no effect once it has exited).
    public func send(_ signal: Int32) {
        if isRunning { Foundation.kill(pid, signal) }
    }

    /// Waits for the child to exit; returns its status (or signal number).
    @discardableResult
    public func waitForExit() async -> Int32 {
        await withCheckedContinuation { c in
            let status = exitBox.state.withLock { s -> Int32? in
                if let st = s.status { return st }
                s.waiters.append(c)
                return nil
            }
            if let status { c.resume(returning: status) }
        }
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
    case failed(command: String, status: Int32, stderr: String)

    public var description: String {
        switch self {
        case .notExecutable(let p): "\(p) is not an executable file"
        case .failed(let c, let s, let e): "`\(c)` exited with status \(s):\n\(e)"
        }
    }
}
