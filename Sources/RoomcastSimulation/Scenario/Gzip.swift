import Foundation

/// gzip through the system's `gzip` binary: Foundation on Linux has no gzip API,
/// and this is only used by tools and tests, never on the data path.
public enum Gzip {
    /// Why (de)compression failed.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    static let candidates = ["/bin/gzip", "/usr/bin/gzip"]

    static func executable() throws -> URL {
        guard let path = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw Failure(description: "gzip not found in \(candidates.joined(separator: ", ")); install the gzip package")
        }
        return URL(fileURLWithPath: path)
    }

    /// The decompressed contents of a .gz file.
    public static func decompress(file: URL) throws -> Data {
        try run(["-dc", file.path], input: nil)
    }

    /// `data` gzip-compressed (deterministic: no name or time stamp in the header).
    public static func compress(_ data: Data) throws -> Data {
        try run(["-cn"], input: data)
    }

    /// Runs gzip with stdin, stdout and stderr on temporary files, waiting with `waitpid`.
    /// (Foundation's `Process.waitUntilExit` depends on its SIGCHLD monitoring, which was
    /// seen to miss a child's exit in a busy test process and hang.)
    private static func run(_ arguments: [String], input: Data?) throws -> Data {
        let gzip = try executable().path
        let base = NSTemporaryDirectory() + "roomcast-gzip-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let inPath = base + ".in", outPath = base + ".out", errPath = base + ".err"
        defer { for p in [inPath, outPath, errPath] { unlink(p) } }
        if let input { try input.write(to: URL(fileURLWithPath: inPath)) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input == nil ? "/dev/null" : inPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv: [UnsafeMutablePointer<CChar>?] = ([gzip] + arguments).map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, gzip, &actions, nil, argv, environ)
        guard rc == 0 else { throw Failure(description: "could not start gzip: \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        guard code == 0 else {
            let errors = (try? Data(contentsOf: URL(fileURLWithPath: errPath))) ?? Data()
            let why = String(decoding: errors, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw Failure(description: "gzip \(arguments.joined(separator: " ")) failed (\(code)): \(why)")
        }
        return try Data(contentsOf: URL(fileURLWithPath: outPath))
    }
}
