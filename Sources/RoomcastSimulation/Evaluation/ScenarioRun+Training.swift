import Foundation
import RoomcastAggregator
import RoomcastFusion
import Shared

/// Teaching rooms on a scenario, through the product's path: the labels a user would give
/// (`TruthLabels`) go into the same merged input as the agents' readings, and the aggregator
/// core learns from them as `aggregator replay` would; what it learned can then be carried
/// into the scoring of another run (`aggregator replay --learned`).
extension ScenarioRun {
    /// The learn messages for the sessions `sessions` (nil: all of them), of the beacons
    /// `beacons` (nil: every beacon).
    public func labels(sessions: Set<Int>? = nil, labels: TruthLabels = TruthLabels(), beacons: Set<BeaconID>? = nil) -> [MessageLogLine] {
        labels.messages(truth(sessions: sessions).filter { beacons?.contains($0.id) ?? true })
    }

    /// The beacons people carry: what a user teaching walks the rooms with. A still tag lies on
    /// the same spot whatever the day, so labels of it would teach that spot itself.
    public var carriedBeacons: Set<BeaconID> { Set(scenario.beacons.filter(\.mobile).map(\.id)) }

    /// The truth of `sessions` (nil: all of it).
    public func truth(sessions: Set<Int>?) -> [TruthSpan] {
        guard let sessions else { return scenario.truth }
        return ScenarioSessions(truth: scenario.truth).truth(scenario.truth, in: sessions)
    }

    /// Replays the agents' readings with the labels of `sessions` (of `beacons`; nil: all)
    /// merged in; returns the rooms the aggregator was taught (starting from `from`).
    ///
    /// The departure counts the replay gathered (`LearnedRooms.departures`) are left behind:
    /// they record when this run's beacons came and went (a recording's sessions end with the
    /// tag switched off), not the rooms, and carried into another run they would judge its
    /// first silences by this one's. A taught run and an untaught one then start alike, with
    /// no departures, and differ only in what was taught.
    public func train(sessions: Set<Int>? = nil, positions: Bool = true, labels: TruthLabels = TruthLabels(),
                      beacons: Set<BeaconID>? = nil, from learned: LearnedRooms = LearnedRooms()) throws -> LearnedRooms {
        try inputs.requireEveryLineDecoded()
        var core = try site(positions: positions).makeCore()
        core.restoreLearned(learned)
        var merged = inputs.merged + self.labels(sessions: sessions, labels: labels, beacons: beacons)
        // Stable: a label at the same time as a reading comes after it, as in a merged file read later.
        merged = merged.enumerated().sorted { $0.element.ts != $1.element.ts ? $0.element.ts < $1.element.ts : $0.offset < $1.offset }.map(\.element)
        var report = ReplayRunner.Report()
        try ReplayRunner.run(core: &core, inputs: merged, report: &report) { _ in }
        var taught = core.learnedRooms
        taught.departures = learned.departures
        return taught
    }

    /// What one person teaches the home of `home` on another day (day 1), walking every room
    /// in turn for 30 s (`SimulationSettings.makeTeachingDay`), as a user teaching with
    /// `aggregator learn --seconds 30` would.
    public static func teachingTour(of home: SimulationSettings, positions: Bool = false) async throws -> LearnedRooms {
        var tour = home
        tour.day = 1
        tour.makeTeachingDay()
        return try await generated(ScenarioSimulator(settings: tour).run()).train(positions: positions)
    }

    /// Roomcast with the default config, starting from `learned`, scored on `sessions` (nil: all).
    public func roomcast(positions: Bool = true, learned: LearnedRooms, sessions: Set<Int>? = nil) throws -> Evaluation.Result {
        var core = try site(positions: positions).makeCore()
        core.restoreLearned(learned)
        var scored = scenario
        scored.truth = truth(sessions: sessions)
        return try Evaluation.replay(scenario: scored, inputs: inputs, core: &core)
    }
}
