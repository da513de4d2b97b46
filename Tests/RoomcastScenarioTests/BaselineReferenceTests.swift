import Foundation
import Shared
import Testing
@testable import RoomcastSimulation
import TestSupport

/// The baseline rules on the Kolakowski sets through the product's path: the edge agents'
/// readings (their captures through `edge-agent --dry-run`), the rule in the aggregator
/// core, decided on its 1 s ticks. The figures are the ones measured on this path
/// (docs/simulator.md, Baselines); the data set README's reference numbers came from rules
/// fed every packet and deciding on every message, which no user of Roomcast's agents sees.
@Suite("Baseline figures")
struct BaselineReferenceTests {
    struct Reference: Sendable, CustomStringConvertible {
        var scenario: String
        var baseline: String
        var accuracy: Double
        var flaps: Int
        var latency: Double
        var description: String { "\(baseline) on \(scenario)" }
    }

    static let references: [Reference] = [
        Reference(scenario: "kolakowski-robot", baseline: "mqtt-room", accuracy: 0.711, flaps: 41, latency: 4.8),
        Reference(scenario: "kolakowski-calib", baseline: "mqtt-room", accuracy: 0.711, flaps: 232, latency: 3.0),
        Reference(scenario: "kolakowski-robot", baseline: "ema-nearest", accuracy: 0.908, flaps: 12, latency: 5.9),
        Reference(scenario: "kolakowski-calib", baseline: "ema-nearest", accuracy: 0.897, flaps: 23, latency: 3.7),
        Reference(scenario: "kolakowski-robot", baseline: "bermuda", accuracy: 0.926, flaps: 7, latency: 5.9),
        Reference(scenario: "kolakowski-calib", baseline: "bermuda", accuracy: 0.921, flaps: 7, latency: 6.2),
    ]

    @Test("measured figures", arguments: references)
    func reproduces(_ ref: Reference) async throws {
        let run = try await SimulationFixtures.run(ref.scenario)
        let baseline = try #require(Baselines.named(ref.baseline))
        let score = try await offPool { try run.baseline(baseline).score }
        #expect(abs(score.settledAccuracy - ref.accuracy) <= 0.002, "\(ref): \(score.summary)")
        #expect(abs(score.flaps - ref.flaps) <= 1, "\(ref): \(score.summary), \(score.flaps) flaps")
        let latency = try #require(score.medianSwitchLatency)
        #expect(abs(latency - ref.latency) <= 0.1, "\(ref): \(score.summary)")
    }

    @Test("the fixtures load with the expected shape")
    func fixtures() throws {
        let robot = try SimulationFixtures.scenario("kolakowski-robot")
        #expect(robot.packets.count == 12927)
        for node in robot.layout.nodes {
            let capture = try SimulationFixtures.directory("kolakowski-robot").appendingPathComponent("nodes/\(node.name).btsnoop.gz")
            #expect(FileManager.default.fileExists(atPath: capture.path), "\(node.name)")
        }
        #expect(robot.layout.nodes.count == 6)
        #expect(robot.layout.rooms.count == 4)
        #expect(robot.truth.count == 7)
        #expect(robot.beacons.first?.measuredPower == -51)
        #expect(zip(robot.packets, robot.packets.dropFirst()).allSatisfy { $0.t <= $1.t })
        let site = robot.layout.siteModel()
        #expect(site.nodes.first { $0.name == "anchor2" }?.room == "west_room")
    }

    @Test("the agents' readings are deterministic, and the agent publishes early on a significant change")
    func deterministic() async throws {
        let robot = try await SimulationFixtures.run("kolakowski-robot")
        let again = try await ScenarioRun.load(directory: SimulationFixtures.directory("kolakowski-robot"))
        // Telemetry names the unpacked capture's (temporary) path; every other line is the same.
        func withoutTelemetry(_ text: String) -> [Substring] { text.split(separator: "\n").filter { !$0.contains("/telemetry\"") } }
        #expect(robot.inputs.logs.map { withoutTelemetry($0.text) } == again.inputs.logs.map { withoutTelemetry($0.text) })
        let a = try robot.baseline(Baselines.named("bermuda")!), b = try again.baseline(Baselines.named("bermuda")!)
        #expect(a.score == b.score)
        #expect(a.timeline == b.timeline)
        // 6 nodes hearing the tag for ~380 s: more readings than one per node-second, as the
        // agent also publishes when the filtered RSSI moves by its significant change.
        #expect(robot.inputs.readings() > 6 * 381)
    }
}
