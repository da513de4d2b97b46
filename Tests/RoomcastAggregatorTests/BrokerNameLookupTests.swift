import Foundation
import Testing
import TestSupport

/// The broker's name is looked up inside libmosquitto's connect call, which nothing interrupts. A
/// name whose resolver does not answer (DNS down at boot, `homeassistant.local` with mDNS
/// stopped) held a stop until the lifecycle's 10-s deadline, which ended the process with exit 1
/// and "exiting without a complete shutdown".
///
/// The aggregator runs in its own mount and network namespaces, where `/etc/resolv.conf` names a
/// DNS server on loopback that reads queries and never answers.
@Suite(.enabled(if: PrivateNamespaces.permitted, "needs `unshare --mount --net` (root, or CAP_SYS_ADMIN): not permitted here"))
struct BrokerNameLookupTests {
    @Test func aStopWhileTheBrokersNameIsLookedUpIsClean() async throws {
        let dir = NSTemporaryDirectory() + "roomcast-lookup-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let aggregator = try #require(BuiltExecutable.path("aggregator"), "build the package first (swift build --build-tests)")
        try "mqtt:\n  broker: mqtt://roomcast-broker.example:1883\n".write(toFile: "\(dir)/aggregator.yaml", atomically: true, encoding: .utf8)
        // glibc's longest wait for one server: the lookup outlasts the lifecycle's deadline.
        try "nameserver 127.0.0.1\noptions timeout:30 attempts:1\n".write(toFile: "\(dir)/resolv.conf", atomically: true, encoding: .utf8)
        try """
            import socket, sys, time
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 53))
            open(sys.argv[1] + "/listening", "w").close()
            s.recvfrom(512)
            open(sys.argv[1] + "/queried", "w").close()
            time.sleep(120)
            """.write(toFile: "\(dir)/silent-dns.py", atomically: true, encoding: .utf8)
        try """
            ip link set lo up || exit 70
            python3 "$1/silent-dns.py" "$1" &
            echo $! > "$1/dns.pid"
            while [ ! -e "$1/listening" ]; do kill -0 $! 2>/dev/null || exit 70; sleep 0.05; done
            mount --bind "$1/resolv.conf" /etc/resolv.conf || exit 70
            exec "$2" run --config "$1/aggregator.yaml"
            """.write(toFile: "\(dir)/run.sh", atomically: true, encoding: .utf8)

        let child = try ChildProcess("/usr/bin/unshare", ["--mount", "--net", "/bin/sh", "\(dir)/run.sh", dir, aggregator],
                                     stdoutPath: "\(dir)/out", stderrPath: "\(dir)/err")
        defer {
            if let pid = (try? String(contentsOfFile: "\(dir)/dns.pid", encoding: .utf8)).flatMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                kill(pid, SIGKILL)
            }
        }
        try await eventually("the broker's name to be asked of the silent DNS server", timeout: .seconds(60),
                             detail: { child.stderr }) {
            FileManager.default.fileExists(atPath: "\(dir)/queried")
        }
        child.send(SIGTERM)
        let status = try await withTimeout(.seconds(60), "the aggregator to exit") { await child.waitForExit() }
        #expect(status == 0, "\(child.stderr)")
        #expect(child.stderr.contains("mqtt client stopped while still resolving the broker's name"), "\(child.stderr)")
        #expect(!child.stderr.contains("exiting without a complete shutdown"), "\(child.stderr)")
    }
}

/// Whether this process may give a child its own mount and network namespaces.
enum PrivateNamespaces {
    static let permitted: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        return (try? ChildProcess.runBlocking("/usr/bin/unshare", ["--mount", "--net", "/bin/true"]))?.status == 0
    }()
}
