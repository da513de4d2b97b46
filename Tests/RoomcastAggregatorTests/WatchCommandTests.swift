import Foundation
import Testing
import TestSupport

/// `aggregator watch` as a user runs it: the real executable.
@Suite struct WatchCommandTests {
    /// A broker that cannot be reached is said once and ends the command, rather than a board
    /// redrawn every second over the reason, "waiting" for good.
    @Test func aBrokerThatCannotBeReachedEndsTheCommandWithTheReason() async throws {
        let dir = try LiveRig.workDirectory()
        let nobody = try RefusingPort()
        defer { withExtendedLifetime(nobody) {} }
        let port = nobody.port
        let config = try LiveRig.config(port: port, rooms: [.init(name: "kitchen", floor: 0)],
                                        nodes: [.init(name: "kitchen-pi", room: "kitchen")], beacons: [])
        try config.write(toFile: "\(dir)/aggregator.json", atomically: true, encoding: .utf8)
        let process = try ChildProcess(try LiveRig.executable("aggregator"), ["watch", "--config", "\(dir)/aggregator.json"],
                                       stdoutPath: "\(dir)/out.txt", stderrPath: "\(dir)/err.txt")
        let code = try await withTimeout(.seconds(60), "watch to give up") { await process.waitForExit() }
        #expect(code == 1)
        #expect(process.stderr.contains("cannot reach the broker at mqtt://127.0.0.1:\(port)"), "\(process.stderr)")
        #expect(!process.stdout.contains("Roomcast —"), "no board drawn: \(process.stdout)")
    }

    /// A dashboard's account the broker does not let subscribe to presence: an empty board,
    /// "connected", would wait for good. The command ends with the refusal and where to look.
    @Test(.requiresMosquitto) func aRefusedSubscriptionEndsTheCommandWithTheReason() async throws {
        let dir = try LiveRig.workDirectory()
        let broker = try await MosquittoBroker.start(.init(extraConfig: try MosquittoBroker.denyingEverySubscription(in: dir)))
        let config = try LiveRig.config(port: broker.port, rooms: [.init(name: "kitchen", floor: 0)],
                                        nodes: [.init(name: "kitchen-pi", room: "kitchen")], beacons: [])
        try config.write(toFile: "\(dir)/aggregator.json", atomically: true, encoding: .utf8)
        let process = try ChildProcess(try LiveRig.executable("aggregator"), ["watch", "--config", "\(dir)/aggregator.json"],
                                       stdoutPath: "\(dir)/out.txt", stderrPath: "\(dir)/err.txt")
        let code = try await withTimeout(.seconds(60), "watch to end") { await process.waitForExit() }
        await broker.stop()
        #expect(code != 0)
        #expect(["rejected the subscription to", "roomcast/presence/+", "check the broker's ACL"].allSatisfy(process.stderr.contains),
                "\(process.stderr)")
    }
}
