import Foundation
import RoomcastMQTT
import Shared
import Testing
import TestSupport

/// `aggregator run 2>&1 | tee agg.log`, then Ctrl-C: the shell's signal ends `tee` at once, and
/// the aggregator's next log line ("shutting down") went to a pipe nobody reads. libmosquitto
/// ignores SIGPIPE, so the write failed, and Foundation's write trapped: exit 132 in the middle
/// of the stop, the site's offline status left to the broker's Last Will.
@Suite(.serialized, .requiresMosquitto) struct BrokenStandardErrorTests {
    @Test func aStopWhoseLogsNobodyReadsStillCompletes() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let configPath = "\(dir)/site.json"
        try LiveRig.config(port: broker.port, rooms: Home.rooms, nodes: Home.nodes, beacons: Home.beacons)
            .write(toFile: configPath, atomically: true, encoding: .utf8)
        let observer = try await Observer(port: broker.port)
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        let aggregator = try ChildProcess(try LiveRig.executable("aggregator"), ["run", "--config", configPath],
                                          stdoutPath: "\(dir)/out.log", stderrPath: "\(dir)/err.log", descriptors: [2: fds[1]])
        defer { aggregator.send(SIGKILL) }
        close(fds[1])
        try await observer.waitFor("the aggregator online") { _ in observer.last("roomcast/aggregator/status") == "online" }
        close(fds[0])  // the reader goes, as `tee` does at Ctrl-C
        aggregator.send(SIGINT)
        let status = try await withTimeout(.seconds(30), "the aggregator to exit") { await aggregator.waitForExit() }
        #expect(status == 0, "exit status \(status)")
        try await observer.waitFor("the offline status of a completed stop") { _ in
            observer.last("roomcast/aggregator/status") == "offline"
        }
        await observer.stop()
        await broker.cleanup()
    }
}
