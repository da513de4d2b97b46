import Foundation
import Testing
import TestSupport

/// `aggregator check` and `edge-agent check`, run as the package's upgrade runs them: the config
/// read as `run` reads it, nothing connected; what it describes on stdout with no secret in it,
/// or every problem with its path and exit code 78.
@Suite struct CheckCommandTests {
    func write(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "roomcast-check-\(UUID().uuidString).yaml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func aGoodAggregatorConfigIsDescribedWithoutItsPassword() async throws {
        let path = try write("""
            mqtt:
              broker: mqtt://roomcast:hunter2-secret@broker.local:1883
            rooms:
              - name: kitchen
              - name: office
            nodes:
              - name: kitchen-pi
                room: kitchen
            beacons:
              - id: ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1
                name: Keys
            people:
              - name: Alice
                beacons: [ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1]
            standby:
              enabled: true
            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await BuiltExecutable.run("aggregator", ["check", "--config", path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("config ok: 2 rooms, 1 node, 1 beacon, 1 person; broker mqtt://roomcast:"), "\(run.stdout)")
        #expect(run.stdout.contains("@broker.local:1883") && run.stdout.contains("hot standby"), "\(run.stdout)")
        #expect(!(run.stdout + run.stderr).contains("hunter2"))
    }

    /// A key this version does not know (one renamed since the config was written) and a node in a
    /// room the site lacks: both said, each with its path, and exit 78.
    @Test func aConfigThisVersionRefusesIsEveryProblemWithItsPath() async throws {
        let path = try write("""
            rooms:
              - name: kitchen
            nodes:
              - name: kitchen-pi
                room: kitchn
            fusion:
              hysteresis_db: 3
            """)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await BuiltExecutable.run("aggregator", ["check", "--config", path])
        #expect(run.status == 78)
        #expect(run.stdout.isEmpty)
        #expect(run.stderr.contains("nodes[0].room: unknown room 'kitchn'") && run.stderr.contains("fusion.hysteresis_db"), "\(run.stderr)")
    }

    @Test func theAgentsConfigIsCheckedAsRunReadsIt() async throws {
        let good = try write("""
            node: kitchen-pi
            room: kitchen
            mqtt:
              broker: mqtt://node:s3cret-pw@broker.local
            irks:
              - name: alice-phone
                key: 0123456789abcdef0123456789abcdef
            """)
        defer { try? FileManager.default.removeItem(atPath: good) }
        let ok = try await BuiltExecutable.run("edge-agent", ["check", "--config", good])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.hasPrefix("config ok: node kitchen-pi in room kitchen; broker mqtt://node:"), "\(ok.stdout)")
        #expect(ok.stdout.contains("1 IRK") && !(ok.stdout + ok.stderr).contains("s3cret") && !ok.stdout.contains("0123456789abcdef"))
        let bad = try write("node: kitchen-pi\nranging:\n  path_loss_exponent: 9\n")
        defer { try? FileManager.default.removeItem(atPath: bad) }
        let refused = try await BuiltExecutable.run("edge-agent", ["check", "--config", bad])
        #expect(refused.status == 78)
        #expect(refused.stderr.contains("ranging.path_loss_exponent: must be between"), "\(refused.stderr)")
    }
}
