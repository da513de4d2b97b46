import Foundation
import Testing
@testable import RoomcastFusion
import RoomcastSimulation
import Shared
import TestSupport

@Suite("Fusion on a simulated home: regression guard")
struct SimulatedHomeGuardTests {
    @Test("with node beacons: offsets learned near the truth, and better than the best simple rule")
    func guardOnAFlat() async throws {
        var settings = SimulationSettings(plan: .flat, seed: 1001, duration: 240)
        settings.nodeBeacons = true
        SimulationFixtures.smoothShadowing(&settings)
        let generated = ScenarioSimulator(settings: settings).run()
        let run = try await ScenarioRun.generated(generated)
        let (score, learned, bermuda) = try await offPool {
            let (result, engine) = try run.fusionWithEngine(FusionSettings())
            var learned: [String: Double] = [:]
            for c in engine.receiverCalibration { learned[c.node] = c.offsetDb }
            guard let rule = Baselines.all.first(where: { $0.name == "bermuda" }) else { throw Missing.baseline }
            return (result.score, learned, try run.baseline(rule).score)
        }
        let scenario = run.scenario
        // Offsets are relative (a common one is the beacons' power): compare centred values.
        let names = scenario.layout.nodes.map(\.name)
        func centred(_ v: [String: Double]) -> [Double] {
            let mean = names.map { v[$0] ?? 0 }.reduce(0, +) / Double(names.count)
            return names.map { (v[$0] ?? 0) - mean }
        }
        let truth = centred(generated.receiverOffsets), got = centred(learned)
        let before = (truth.map { $0 * $0 }.reduce(0, +) / Double(truth.count)).squareRoot()
        let after = (zip(truth, got).map { ($0 - $1) * ($0 - $1) }.reduce(0, +) / Double(truth.count)).squareRoot()
        #expect(after < 0.6 * before, "offset error \(after) dB rms, uncalibrated \(before) dB")

        #expect(score.settledAccuracy > bermuda.settledAccuracy + 0.05, "\(score.summary) vs bermuda \(bermuda.summary)")
        #expect(score.flapsPerHour <= bermuda.flapsPerHour, "\(score.summary) vs bermuda \(bermuda.summary)")
        #expect(score.missedSwitches <= bermuda.missedSwitches + 1)
    }

    @Test("a tag lying in the flat's narrow hall holds its room")
    func stillTagHoldsItsRoom() async throws {
        // Holdout flat 2001: the tag lies in the 1.5 m hall between the living room and
        // the bedroom, where the position estimate swings from one side to the other.
        var settings = SimulationSettings(plan: .flat, seed: 2001, duration: 600)
        settings.nodeBeacons = true
        SimulationFixtures.smoothShadowing(&settings)
        let run = try await ScenarioRun.generated(ScenarioSimulator(settings: settings).run())
        let (tag, shown) = try await offPool {
            let scenario = run.scenario
            guard let tag = scenario.beacons.first(where: { $0.name == "tag-0" }) else { throw Missing.beacon }
            let timeline = try run.fusion(FusionSettings()).timeline
            // From 30 s in up to the end of the captures: there every agent stops and says
            // offline, one after another, and the tag is decided afresh from the nodes still up.
            let start = scenario.layout.t0 + 30, end = scenario.layout.t0 + scenario.layout.duration - 1
            let changes = timeline.changes[tag.id] ?? []
            let first = changes.last { $0.t <= start }
            return (tag, ([first].compactMap { $0 } + changes.filter { $0.t > start && $0.t < end }).map(\.room))
        }
        #expect(!tag.mobile)
        // Shown in the hall from 30 s in, and only there.
        withKnownIssue("a still beacon at a spot two rooms fit almost alike keeps the room first shown (docs/fusion.md, Known limits)") {
            #expect(!shown.isEmpty && shown.allSatisfy { $0 == "hall" }, "\(shown)")
        }
    }
}

/// What a simulated home lacked that a guard needs (thrown off the cooperative pool, where
/// `#require` has no test to report to).
enum Missing: Error {
    case baseline, beacon
}

extension SimulatedHomeGuardTests {
    @Test("a tag lying in the flat's narrow hall, first placed in the bedroom before the hall's node reported, is put right")
    func stillTagLeavesItsFirstGuess() async throws {
        // Check flat 1003 (the shadowing fitted to the recordings): tag-1 lies in the 1.5 m
        // hall; the bedroom and bath nodes report before the hall's, so a first guess can be
        // the bedroom, and its position sits in the hall within 0.6 m of the bedroom wall.
        var settings = SimulationSettings(plan: .flat, seed: 1003, duration: 240)
        settings.nodeBeacons = true
        let run = try await ScenarioRun.generated(ScenarioSimulator(settings: settings).run())
        let (tag, changes) = try await offPool {
            let scenario = run.scenario
            guard let tag = scenario.beacons.first(where: { $0.name == "tag-1" }) else { throw Missing.beacon }
            let timeline = try run.fusion(FusionSettings()).timeline
            // Up to the end of the captures, where the agents stop one after another.
            return (tag, (timeline.changes[tag.id] ?? []).map { DecisionTimeline.Change(t: $0.t - scenario.layout.t0, room: $0.room) }
                .filter { $0.t < scenario.layout.duration - 1 })
        }
        #expect(!tag.mobile)
        #expect(changes.count <= 2, "\(changes)")
        // In the hall within a minute and a half, and there it stays.
        withKnownIssue("a still beacon at a spot two rooms fit almost alike keeps the room first shown (docs/fusion.md, Known limits)") {
            #expect(changes.last?.room == "hall", "\(changes)")
            let hall = try #require(changes.firstIndex(where: { $0.room == "hall" }), "\(changes)")
            #expect(changes[hall].t < 90, "\(changes)")
            #expect(changes[hall...].allSatisfy { $0.room == "hall" }, "\(changes)")
        }
    }
}
