#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Runs BlueZ's controller emulator (`btvirt -s`) for end-to-end radio tests.
///
/// btvirt serves emulated controllers over unix sockets: /tmp/bt-server-le
/// (LE only, legacy commands) and /tmp/bt-server-bredrle. On kernels without
/// AF_ALG it drops every client, so it runs with a tiny LD_PRELOAD shim, built
/// here with cc, that hands out /dev/null for socket(AF_ALG, ...) and lets
/// bind() on it succeed. A second btvirt would silently take over the socket
/// paths, so instances are serialised across processes with a file lock. Tests that start it
/// carry `.requiresBTVirt`; under CI a missing btvirt makes `init` throw and fails them.
public final class BTVirt: @unchecked Sendable {
    public static let lePath = "/tmp/bt-server-le"
    public static let bredrLEPath = "/tmp/bt-server-bredrle"
    /// Every socket `btvirt -s` creates.
    static let allPaths = ["/tmp/bt-server-le", "/tmp/bt-server-bredrle", "/tmp/bt-server-bredr", "/tmp/bt-server-amp",
                           "/tmp/bt-server-mon"]

    /// Why btvirt cannot be used here.
    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    private var process: ChildProcess?
    private var lockFD: Int32
    private let tempDir: String

    /// The btvirt binary, if installed.
    public static var binary: String? { RequiredTool.btvirt.path }

    /// Starts btvirt as `init` does, on a thread of its own: the wait for the lock (another test,
    /// or another test run on this machine, may hold btvirt for a while) and for the sockets must
    /// not hold a thread of the cooperative pool, which every test running meanwhile needs.
    public static func start(timeout: Double = 10) async throws -> BTVirt {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try BTVirt(timeout: timeout) }) }.start()
        }
    }

    /// Starts btvirt and waits (up to `timeout` seconds) for its sockets to accept connections.
    /// Blocks the calling thread meanwhile; async tests use `start(timeout:)`.
    public init(timeout: Double = 10) throws {
        let binary: String
        do { binary = try RequiredTool.btvirt.require() } catch { throw Unavailable(description: error.description) }
        lockFD = open("/tmp/roomcast-btvirt.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
        guard lockFD >= 0, flock(lockFD, LOCK_EX) == 0 else { throw Unavailable(description: "cannot lock /tmp/roomcast-btvirt.lock") }
        tempDir = NSTemporaryDirectory() + "roomcast-btvirt-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        do {
            try FileManager.default.createDirectory(atPath: tempDir, withIntermediateDirectories: true)
            let shim = try Self.buildShim(in: tempDir)
            for path in [Self.lePath, Self.bredrLEPath] { unlink(path) }
            var env = ProcessInfo.processInfo.environment
            env["LD_PRELOAD"] = shim
            process = try ChildProcess(binary, ["-s"], stdoutPath: "/dev/null", stderrPath: "/dev/null", environment: env)
        } catch {
            flock(lockFD, LOCK_UN)
            close(lockFD)
            throw error
        }
        let deadline = Date().addingTimeInterval(timeout)
        while !(Self.accepts(Self.lePath) && Self.accepts(Self.bredrLEPath)) {
            if Date() > deadline || process?.isRunning != true {
                stop()
                throw Unavailable(description: "btvirt did not open its sockets within \(timeout) s")
            }
            usleep(20_000)
        }
    }

    deinit { stop() }

    /// Kills btvirt, removes its sockets and releases the lock (idempotent).
    public func stop() {
        if let process, process.isRunning {
            process.send(SIGTERM)
            process.waitForExitBlocking()
        }
        process = nil
        for path in Self.allPaths { unlink(path) }
        try? FileManager.default.removeItem(atPath: tempDir)
        if lockFD >= 0 {
            flock(lockFD, LOCK_UN)
            close(lockFD)
            lockFD = -1
        }
    }

    private static func accepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { p in
            for (i, b) in path.utf8.enumerated() { p[i] = b }
        }
        return withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }

    private static let shimSource = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <fcntl.h>
        #include <sys/socket.h>
        #ifndef AF_ALG
        #define AF_ALG 38
        #endif
        static int alg_fds[64];
        static int alg_count;
        int socket(int domain, int type, int protocol) {
            static int (*real)(int, int, int);
            if (!real) real = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
            if (domain == AF_ALG) {
                int fd = open("/dev/null", O_RDWR);
                if (fd >= 0 && alg_count < 64) alg_fds[alg_count++] = fd;
                return fd;
            }
            return real(domain, type, protocol);
        }
        int bind(int fd, const struct sockaddr *addr, socklen_t len) {
            static int (*real)(int, const struct sockaddr *, socklen_t);
            if (!real) real = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "bind");
            for (int i = 0; i < alg_count; i++) if (alg_fds[i] == fd) return 0;
            return real(fd, addr, len);
        }
        """

    private static func buildShim(in dir: String) throws -> String {
        let source = dir + "/btvirt-alg-shim.c", library = dir + "/btvirt-alg-shim.so"
        try shimSource.write(toFile: source, atomically: true, encoding: .utf8)
        let cc = try ChildProcess.runBlocking("/usr/bin/env", ["cc", "-shared", "-fPIC", "-o", library, source, "-ldl"])
        guard cc.status == 0 else { throw Unavailable(description: "cc could not build the AF_ALG shim") }
        return library
    }
}
