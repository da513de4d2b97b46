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

    /// Children a test gives an environment of its own (a password, a short PATH) ran under
    /// `make sanitize` without the pass's options: their reports went to the test's log instead of
    /// the pass's folder, and LeakSanitizer's known false positive (a live object's weak-reference
    /// side table) failed an aggregator's exit as a leak, since the suppressions never reached it.
    @Test func aChildWithItsOwnEnvironmentKeepsTheSanitizerSettings() {
        let inherited = ["ASAN_OPTIONS": "log_path=/reports/report", "LSAN_OPTIONS": "suppressions=/lsan.txt",
                         "PATH": "/usr/local/bin:/usr/bin", "HOME": "/root"]
        let child = ChildProcess.childEnvironment(["ROOMCAST_MQTT_PASSWORD": "pw", "TSAN_OPTIONS": "mine"],
                                                  inheriting: inherited)
        #expect(child == ["ROOMCAST_MQTT_PASSWORD": "pw", "TSAN_OPTIONS": "mine",
                          "ASAN_OPTIONS": "log_path=/reports/report", "LSAN_OPTIONS": "suppressions=/lsan.txt"],
                "the given variables, the sanitizer settings it does not set, and nothing else inherited")
        #expect(ChildProcess.childEnvironment(["A": "1"], inheriting: ["PATH": "/usr/bin"]) == ["A": "1"])
    }

    /// The end to end half: a spawned child sees what `childEnvironment` returns.
    @Test func aChildSeesTheEnvironmentItIsGiven() throws {
        let dir = NSTemporaryDirectory() + "roomcast-child-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let child = try ChildProcess("/usr/bin/env", [], stdoutPath: "\(dir)/out", stderrPath: "\(dir)/err",
                                     environment: ["ROOMCAST_CHILD_TEST": "1"])
        #expect(child.waitForExitBlocking() == 0, "\(child.stderr)")
        let expected = ChildProcess.childEnvironment(["ROOMCAST_CHILD_TEST": "1"],
                                                     inheriting: ProcessInfo.processInfo.environment)
        let seen = Set(child.stdout.split(separator: "\n").map(String.init))
        #expect(seen == Set(expected.map { "\($0.key)=\($0.value)" }))
    }
}
