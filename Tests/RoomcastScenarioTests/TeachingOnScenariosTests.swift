import Foundation
import RoomcastAggregator
import RoomcastFusion
import RoomcastSimulation
import Shared
import Testing
import TestSupport

/// Teaching rooms on a recording, as a user would: labels from the truth, learned through
/// the same replay of the agents' readings that scores Roomcast.
@Suite struct TeachingOnScenariosTests {
    @Test func kolakowskiCalibrationIsFourSessions() throws {
        let scenario = try SimulationFixtures.scenario("kolakowski-calib")
        let sessions = ScenarioSessions(truth: scenario.truth)
        #expect(sessions.spans.count == 4)
        let first = sessions.truth(scenario.truth, in: [1])
        #expect(!first.isEmpty && first.allSatisfy { sessions.spans[0].contains($0.t0) })
        #expect(sessions.unknown([0, 3, 5]) == [0, 5])
    }

    @Test func labelsStartEachLongStayAndKeepClearOfItsEnds() throws {
        let scenario = try SimulationFixtures.scenario("kolakowski-calib")
        let truth = ScenarioSessions(truth: scenario.truth).truth(scenario.truth, in: [1, 2])
        let runs = Scorer().runs(truth)
        let lines = TruthLabels(minimumSpan: 20, margin: 3).messages(truth)
        let expected = runs.values.flatMap { $0 }.filter { $0.room != nil && $0.t1 - $0.t0 >= 20 }
        #expect(lines.count == expected.count && !lines.isEmpty)
        for line in lines {
            #expect(line.topic == "roomcast/aggregator/learn" && !line.retain)
            guard case .success(let command) = LearnCommand.decode(line.payload),
                  case let .label(room, beacon, seconds) = command.action else { Issue.record("not a label: \(line.encoded())"); continue }
            let run = try #require(runs[beacon]?.first { abs($0.t0 + 3 - line.ts) < 0.001 })
            #expect(run.room == room)
            #expect(seconds >= 5 && seconds <= 600 && line.ts + seconds <= run.t1 - 3 + 0.001)
        }
    }

    @Test func trainingGoesThroughTheReplayPathAndIsDeterministic() async throws {
        let run = try await SimulationFixtures.run("kolakowski-calib")
        let taught = try run.train(sessions: [1, 2], positions: false)
        #expect(try run.train(sessions: [1, 2], positions: false) == taught)
        let site = try run.site(positions: false)
        #expect(taught.rooms.map(\.name).allSatisfy { name in site.rooms.contains { $0.name == name } })
        #expect(taught.rooms.count >= 3)
        for room in taught.rooms { #expect(room.seconds >= 5 && !room.nodes.isEmpty) }
        // What `aggregator replay` does with the agents' logs and `roomcast-sim labels` as files.
        var report = ReplayRunner.Report()
        let labels = run.labels(sessions: [1, 2]).map { $0.encoded() }.joined(separator: "\n")
        let logs = run.inputs.logs.map { (name: $0.node, text: $0.text) } + [(name: "labels.jsonl", text: labels)]
        var core = site.makeCore()
        try ReplayRunner.run(core: &core, inputs: ReplayRunner.mergedInputs(logs: logs, report: &report), report: &report) { _ in }
        #expect(report.badLines.isEmpty)
        // The same rooms; `train` leaves the run's departure counts behind.
        #expect(core.learnedRooms.rooms == taught.rooms && taught.departures.isEmpty)
        // Scoring from a taught state runs the same path (the model's use of it is its own concern).
        let scored = try run.roomcast(positions: false, learned: taught, sessions: [3, 4])
        #expect(scored.score.settledSamples > 0)
    }

    /// The issue's goal for teaching, on the recordings: taught from kolakowski-calib's sessions
    /// 1–2, right at least 0.98 of the time on its sessions 3–4 and on the robot run, more often
    /// than untaught and with no more room changes (measured 1.000 / 0 on both; untaught 0.951 /
    /// 20.9 an hour and 0.968 / 0).
    @Test func taughtRoomsAreRightOnTheRecordingsTheLabelsNeverSaw() async throws {
        let calib = try await SimulationFixtures.run("kolakowski-calib")
        let robot = try await SimulationFixtures.run("kolakowski-robot")
        let taught = try calib.train(sessions: [1, 2], positions: false)
        for (run, sessions) in [(calib, Set([3, 4]) as Set<Int>?), (robot, nil)] {
            let (withTeaching, without) = try await offPool {
                (try run.roomcast(positions: false, learned: taught, sessions: sessions).score,
                 try run.roomcast(positions: false, learned: LearnedRooms(), sessions: sessions).score)
            }
            let name = run.scenario.name
            #expect(withTeaching.settledAccuracy >= 0.98, "\(name): \(withTeaching.summary)")
            #expect(withTeaching.settledAccuracy > without.settledAccuracy, "\(name): \(withTeaching.summary) vs \(without.summary)")
            #expect(withTeaching.flapsPerHour <= without.flapsPerHour, "\(name): \(withTeaching.summary) vs \(without.summary)")
        }
    }
}
