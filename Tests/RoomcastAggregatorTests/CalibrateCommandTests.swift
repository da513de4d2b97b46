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

    static func writeConfig(port: Int, in dir: String) throws -> String {
        let config = try LiveRig.config(port: port, rooms: [.init(name: "kitchen", floor: 0), .init(name: "office", floor: 0)],
                                        nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "office-pi", room: "office")],
                                        beacons: [.init(id: keys, name: "Keys")])
        try config.write(toFile: "\(dir)/aggregator.json", atomically: true, encoding: .utf8)
        return "\(dir)/aggregator.json"
    }

    static func start(_ arguments: [String], port: Int, in dir: String) throws -> ChildProcess {
        try ChildProcess(try LiveRig.executable("aggregator"),
                         ["calibrate", "--config", try writeConfig(port: port, in: dir)] + arguments,
                         stdoutPath: "\(dir)/out.txt", stderrPath: "\(dir)/err.txt")
    }

    static func run(_ arguments: [String], port: Int, in dir: String) async throws -> (code: Int32, stdout: String, stderr: String) {
        let process = try start(arguments, port: port, in: dir)
        let code = await process.waitForExit()
        return (code, process.stdout, process.stderr)
    }

    @Test(.requiresMosquitto) func theNodeTheBeaconIsHeldByGetsItsAdjustment() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let publisher = try LiveRig.client(port: broker.port, id: "agents")
        publisher.start()
        try await publisher.waitUntilConnected(timeout: .seconds(10))
        let process = try Self.start(["--node", "kitchen-pi", "--seconds", "10"], port: broker.port, in: dir)
        // It says it listens once it has subscribed. The readings then go out at once, from
        // the client's own thread: a feeder paced by sleeping tasks got 4 readings in 8 s
        // through while a sanitizer's test run kept every task thread busy.
        try await eventually("calibrate listening", timeout: .seconds(30)) { process.stderr.contains("Listening to kitchen-pi") }
        // Held 1 m from the kitchen's node, which reads it 5 dB under the −59 dBm it
        // advertises (−66 … −62, median −64); the office's node and a tag across the room
        // are not what is asked.
        let spread: [Double] = [-64, -63, -65, -62, -66]
        for k in 0..<30 {
            for (id, node, rssi) in [(Self.keys, "kitchen-pi", spread[k % 5]), (Self.keys, "office-pi", -52), (Self.tag, "kitchen-pi", -82)] {
                let payload = try WireFormat.encode(LiveRig.reading(id, node: node, rssi: rssi, seq: UInt64(k + 1)))
                try publisher.publish(MQTTMessage(topic: Topics().nodeBeacon(node, id), payload: payload, qos: .atLeastOnce))
            }
        }
        let code = await process.waitForExit()
        let (stdout, stderr) = (process.stdout, process.stderr)
        await publisher.shutdown()
        await broker.stop()
        #expect(code == 0, "\(stderr)")
        #expect(stdout.contains("kitchen-pi heard \(Self.keys) (Keys) 30 times: median -64.0 dBm"), "\(stdout)")
        #expect(stdout.contains("reads 5.0 dB low"), "\(stdout)")
        #expect(stdout.hasSuffix("  - name: kitchen-pi\n    rx_adjust: 5\n"), "\(stdout)")
        #expect(stderr.contains("Listening to kitchen-pi for 10 s"), "\(stderr)")
    }

    @Test(.requiresMosquitto) func aBeaconTheNodeDoesNotReportIsAClearError() async throws {
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
        let dir = try LiveRig.workDirectory()
        let nobody = try RefusingPort()
        defer { withExtendedLifetime(nobody) {} }
        let port = nobody.port
        let result = try await Self.run(["--node", "kitchen-pi", "--seconds", "1"], port: port, in: dir)
        #expect(result.code == 1)
        #expect(result.stderr.contains("cannot reach the broker at mqtt://127.0.0.1:\(port)"), "\(result.stderr)")
        // The client's retries are not repeated to the user.
        #expect(result.stderr.components(separatedBy: "\n").filter { $0.contains("cannot reach the broker") }.count == 1,
                "\(result.stderr)")
        #expect(!result.stderr.contains("connect failed"), "\(result.stderr)")
    }
}
