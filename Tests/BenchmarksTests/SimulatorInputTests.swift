import Foundation
@testable import Benchmarks
import RoomcastHCI
@testable import RoomcastSimulation
import Shared
import Testing
import TestSupport

/// What the simulator and the benchmarks are given: bad input is an error that says so, never
/// a hang, a crash, or a figure computed from nothing.
@Suite struct SimulatorInputTests {
    static let cat = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45")!

    /// A truth in milliseconds beside a layout in seconds made `score` walk trillions of seconds.
    @Test func aTruthOutsideTheLayoutsTimeIsRefused() {
        let layout = ScenarioLayout(rooms: [], nodes: [], t0: 1_000, duration: 60)
        #expect(Scenario.truthProblem([TruthSpan(id: Self.cat, t0: 1_000, t1: 1_060, room: "kitchen")], layout: layout) == nil)
        let ms = Scenario.truthProblem([TruthSpan(id: Self.cat, t0: 1_000_000, t1: 1_060_000, room: "kitchen")], layout: layout)
        #expect(ms?.contains("outside the layout's time") == true, "\(ms ?? "accepted")")
        #expect(Scenario.truthProblem([TruthSpan(id: Self.cat, t0: 1_050, t1: 1_010, room: nil)], layout: layout)?.contains("forwards") == true)
        #expect(Scenario.truthProblem([TruthSpan(id: Self.cat, t0: 1_000, t1: .infinity, room: nil)], layout: layout) != nil)
    }

    /// `score --decisions` of a replay run under another `mqtt.topic_prefix` scored no decision
    /// at all, and said 0.000.
    @Test func aReplaysOutputIsReadUnderItsOwnTopicPrefix() throws {
        let d = PresenceDecision(id: Self.cat, name: nil, room: "kitchen", floor: 0, distance: nil, confidence: 1, node: nil,
                                 since: 5, lastSeen: 5, evidence: [], ts: 5)
        let line = MessageLogLine(ts: 5, topic: "home/roomcast/presence/\(Self.cat.rawValue)", payload: try WireFormat.encode(d))
        let timeline = Evaluation.timeline(replayOutput: [MessageLogLine(ts: 4, topic: "home/roomcast/aggregator/status", payload: Array("online".utf8)), line])
        #expect(timeline.room(of: Self.cat, at: 6) == "kitchen")
        #expect(Evaluation.timeline(replayOutput: []).changes.isEmpty)
    }

    /// A capture whose clock stepped back (btmon across an NTP step) trapped `roomcast-bench hci`.
    @Test func aCaptureWhoseClockSteppedBackIsTimedFromItsEarliestRecord() throws {
        let path = NSTemporaryDirectory() + "roomcast-backwards-\(UUID().uuidString).btsnoop"
        defer { unlink(path) }
        let writer = try BTSnoopWriter(path: path)
        let event: [UInt8] = [0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]  // Command Complete (Reset)
        try writer.write(type: .event, bytes: event, timestamp: 100, direction: .controllerToHost)
        try writer.write(type: .event, bytes: event, timestamp: 99, direction: .controllerToHost)
        writer.shutdown()
        let events = try HCIBenchmark.loadEvents(path)
        #expect(events.map(\.0) == [1_000_000, 0])
    }

    /// A beacon's `measured_power` past what a frame carries trapped `roomcast-sim capture`.
    @Test func aMeasuredPowerNoFrameCarriesIsRefused() {
        let json = #"{"id": "ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45", "measured_power": 9223372036854775807}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ScenarioBeacon.self, from: Data(json.utf8)) }
        let fine = #"{"id": "ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45", "measured_power": -59}"#
        #expect((try? JSONDecoder().decode(ScenarioBeacon.self, from: Data(fine.utf8)))?.measuredPower == -59)
    }

    /// `generate --no-btsnoop` (or `--no-configs`) into a folder used before left the old
    /// scenario's captures and configs, which `score` then replayed against the new truth.
    @Test func aScenarioWrittenOverAnotherKeepsNothingOfIt() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-rewrite-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        func generated(_ plan: FloorPlan, seed: UInt64) -> GeneratedScenario {
            ScenarioSimulator(settings: SimulationSettings(plan: plan, seed: seed, duration: 10)).run()
        }
        try DirectoryScenarioWriter(directory: dir).write(generated(.house, seed: 1))
        let nodes = dir.appendingPathComponent("nodes")
        #expect(try !FileManager.default.contentsOfDirectory(atPath: nodes.path).isEmpty)
        try DirectoryScenarioWriter(directory: dir, btsnoop: false, configs: false).write(generated(.flat, seed: 2))
        #expect(try FileManager.default.contentsOfDirectory(atPath: nodes.path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("site.yaml").path))
        #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("agent.yaml").path))
    }

    /// Options that named nothing ran nothing of it and exited 0, or exited 1 like a failure.
    @Test(arguments: [["--noise", "foo"], ["--layouts", "mansion"], ["--only", "roomcast,nosuch"], ["--flaps", "nosuch"],
                      ["--seeds", "1000"]])
    func aSimulationOptionThatNamesNothingIsAUsageError(_ arguments: [String]) async throws {
        let run = try await BuiltExecutable.run("roomcast-bench", ["simulation", "--duration", "10"] + arguments)
        #expect(run.status == 64, "\(arguments): exit \(run.status), \(run.stderr)")
        #expect(!run.stderr.isEmpty)
    }
}
