import Foundation
import RoomcastMQTT
import Shared
import Testing
import TestSupport

/// `aggregator calibrate` as a user runs it: the real executable against a real broker, fed
/// readings as edge agents publish them.
@Suite struct CalibrateCommandTests {
    static let keys = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1")!
    static let tag = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")!

    static func run(_ arguments: [String], port: Int, in dir: String) async throws -> (code: Int32, stdout: String, stderr: String) {
        let config = try LiveRig.config(port: port, rooms: [.init(name: "kitchen", floor: 0), .init(name: "office", floor: 0)],
                                        nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "office-pi", room: "office")],
                                        beacons: [.init(id: keys, name: "Keys")])
        try config.write(toFile: "\(dir)/aggregator.json", atomically: true, encoding: .utf8)
        let process = try ChildProcess(try LiveRig.executable("aggregator"),
                                       ["calibrate", "--config", "\(dir)/aggregator.json"] + arguments,
                                       stdoutPath: "\(dir)/out.txt", stderrPath: "\(dir)/err.txt")
        let code = await process.waitForExit()
        return (code, process.stdout, process.stderr)
    }

    @Test func theNodeTheBeaconIsHeldByGetsItsAdjustment() async throws {
        guard MosquittoBroker.shouldRun else { return }
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let feeder = try await ReadingFeeder(port: broker.port, jitter: 2)
        // Held 1 m from the kitchen's node, which reads it 5 dB under the −59 dBm it
        // advertises; the office's node and a tag across the room are not what is asked.
        feeder.set(Self.keys, node: "kitchen-pi", rssi: -64)
        feeder.set(Self.keys, node: "office-pi", rssi: -52)
        feeder.set(Self.tag, node: "kitchen-pi", rssi: -82)
        // 8 s: about 40 readings, and enough under a sanitizer's load too (4 s gave 5 there).
        let result = try await Self.run(["--node", "kitchen-pi", "--seconds", "8"], port: broker.port, in: dir)
        await feeder.stop()
        await broker.stop()
        #expect(result.code == 0, "\(result.stderr)")
        #expect(result.stdout.contains("kitchen-pi heard \(Self.keys) (Keys)"), "\(result.stdout)")
        #expect(result.stdout.contains("  - name: kitchen-pi\n    rx_adjust: "), "\(result.stdout)")
        // Readings −64 ± 2 dB, rounded as agents round them: the median is −64 or half a dB off it.
        let suggested = result.stdout.components(separatedBy: "rx_adjust: ").last.flatMap {
            Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        #expect(suggested.map { abs($0 - 5) <= 0.5 } == true, "\(result.stdout)")
        #expect(result.stderr.contains("Listening to kitchen-pi for 8 s"), "\(result.stderr)")
    }

    @Test func aBeaconTheNodeDoesNotReportIsAClearError() async throws {
        guard MosquittoBroker.shouldRun else { return }
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let feeder = try await ReadingFeeder(port: broker.port)
        feeder.set(Self.keys, node: "kitchen-pi", rssi: -64)
        let result = try await Self.run(["--node", "kitchen-pi", "--beacon", Self.tag.rawValue, "--seconds", "2"],
                                        port: broker.port, in: dir)
        await feeder.stop()
        await broker.stop()
        #expect(result.code == 65)
        #expect(result.stderr.contains("kitchen-pi did not report \(Self.tag)"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func mistakesInTheCommandAreCaughtBeforeListening() async throws {
        guard MosquittoBroker.shouldRun else { return }
        let dir = try LiveRig.workDirectory()
        // Port 9 (discard): nothing is asked of a broker when the command itself is wrong.
        let unknown = try await Self.run(["--node", "garage-pi"], port: 9, in: dir)
        #expect(unknown.code == 64)
        #expect(unknown.stderr.contains("node 'garage-pi' is not in the config; its nodes are kitchen-pi, office-pi"), "\(unknown.stderr)")
        let badBeacon = try await Self.run(["--node", "kitchen-pi", "--beacon", "keys"], port: 9, in: dir)
        #expect(badBeacon.code == 64)
        #expect(badBeacon.stderr.contains("'keys' is not a beacon id"), "\(badBeacon.stderr)")
        let badSeconds = try await Self.run(["--node", "kitchen-pi", "--seconds", "0"], port: 9, in: dir)
        #expect(badSeconds.code == 64)
    }

    @Test func aBrokerThatIsDownIsReportedOnce() async throws {
        guard MosquittoBroker.shouldRun else { return }
        let dir = try LiveRig.workDirectory()
        let port = try freePort()
        let result = try await Self.run(["--node", "kitchen-pi", "--seconds", "1"], port: port, in: dir)
        #expect(result.code == 1)
        #expect(result.stderr.contains("cannot reach the broker at mqtt://127.0.0.1:\(port)"), "\(result.stderr)")
        // The client's retries are not repeated to the user.
        #expect(result.stderr.components(separatedBy: "\n").filter { $0.contains("cannot reach the broker") }.count == 1,
                "\(result.stderr)")
        #expect(!result.stderr.contains("connect failed"), "\(result.stderr)")
    }
}
