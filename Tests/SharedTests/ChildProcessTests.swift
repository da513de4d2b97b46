import Foundation
import Testing
import TestSupport

/// Tests start brokers, browsers and the package's binaries while other tests hold sockets.
@Suite struct ChildProcessTests {
    /// A socket a test held (an event stream it would close to hang up) lived on in every child
    /// process started meanwhile, so closing it hung nothing up. A child gets stdin, stdout,
    /// stderr and the descriptors it is handed, nothing else.
    @Test func aChildGetsOnlyTheDescriptorsItIsHanded() throws {
        let made = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(made >= 0)
        defer { close(made) }
        // Far above what the child is handed and what `ls` opens.
        let held = fcntl(made, F_DUPFD, 200)
        try #require(held >= 200)
        defer { close(held) }
        var pipe: [Int32] = [0, 0]
        try #require(Glibc.pipe(&pipe) == 0)
        defer { close(pipe[0]); close(pipe[1]) }
        let dir = NSTemporaryDirectory() + "roomcast-child-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // The shell lists its own descriptors (`ls` runs as its child, and lists what it inherited).
        let child = try ChildProcess("/bin/sh", ["-c", "exec ls /proc/self/fd"], stdoutPath: "\(dir)/out",
                                     stderrPath: "\(dir)/err", descriptors: [3: pipe[1]])
        #expect(child.waitForExitBlocking() == 0, "\(child.stderr)")
        let open = Set(child.stdout.split(separator: "\n").compactMap { Int32($0) })
        // 0–2, the handed 3, and the one `ls` opened to read the folder.
        #expect(!open.contains(held), "the held socket \(held) reached the child: \(open.sorted())")
        #expect(open.isSubset(of: [0, 1, 2, 3, 4]) && open.isSuperset(of: [0, 1, 2, 3]), "\(open.sorted())")
    }
}
