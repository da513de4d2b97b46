import Testing
@testable import Benchmarks
import RoomcastSimulation

/// The Goals table of results.md: each verdict is the figure, as the tables print it, against
/// the goal — so a reader who checks a row by eye agrees with it.
@Suite struct ResultsGoalsTests {
    static func score(_ accuracy: Double, flaps: Double = 0, switches: [Double] = []) -> Score {
        Score(settledAccuracy: accuracy, settledSamples: 100, roomAccuracy: accuracy, flapsPerHour: flaps, flaps: 0,
              truthHours: 1, switchLatencies: switches, missedSwitches: 0, awayLatencies: [], missedAways: 0)
    }

    static func tally(_ accuracy: Double, flaps: Double = 0, switches: [Double] = []) -> ResultsBenchmark.Tally {
        var tally = ResultsBenchmark.Tally()
        tally.add(score(accuracy, flaps: flaps, switches: switches))
        return tally
    }

    /// The verdict of the row whose goal begins with `goal`.
    static func verdict(_ markdown: String, _ goal: String) -> String? {
        let row = markdown.split(separator: "\n").first { $0.hasPrefix("| \(goal)") }
        return row?.split(separator: "|").last.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test func aRecordingIsJudgedAsItsFigureIsPrinted() {
        var goals = ResultsGoals()
        // 0.9795 prints as 0.980: met. 0.9794 prints as 0.979: not.
        goals.recordings["kolakowski-robot"] = .init(positions: Self.score(0.9795))
        goals.recordings["danis-office"] = .init(positions: Self.score(0.9794))
        let table = goals.markdown()
        #expect(Self.verdict(table, "kolakowski-robot, positions") == "yes")
        #expect(Self.verdict(table, "danis-office, positions") == "**no**")
        #expect(table.contains("| danis-office, positions: ≥ 0.980 | 0.979 |"))
    }

    @Test func membershipMustAlsoChangeRoomNoMoreOftenThanTheBestSimpleRule() {
        var goals = ResultsGoals()
        goals.recordings["kolakowski-calib"] = .init(membership: Self.score(0.97, flaps: 5.24),
                                                     bestRule: ("bermuda", Self.score(0.92, flaps: 5.2)))
        goals.recordings["danis-office"] = .init(membership: Self.score(0.97, flaps: 5.3),
                                                 bestRule: ("bermuda", Self.score(0.92, flaps: 5.2)))
        goals.recordings["kolakowski-robot"] = .init(membership: Self.score(0.982),
                                                     bestRule: ("bermuda", Self.score(0.96, flaps: 70)))
        let table = goals.markdown()
        #expect(Self.verdict(table, "kolakowski-calib, membership only") == "yes")   // 5.2 ≤ 5.2 as printed
        #expect(Self.verdict(table, "danis-office, membership only") == "**no**")    // 5.3 > 5.2
        #expect(Self.verdict(table, "kolakowski-robot, membership only") == "**no**") // 0.982 < 0.983
    }

    @Test func taughtMustReachTheGoalAndBeatUntaught() {
        var goals = ResultsGoals()
        goals.recordings["kolakowski-robot"] = .init(taught: Self.score(1), untaught: Self.score(0.97))
        goals.recordings["kolakowski-calib"] = .init(taught: Self.score(0.99), untaught: Self.score(0.99),
                                                     taughtScope: "sessions 3–4")
        let table = goals.markdown()
        #expect(Self.verdict(table, "kolakowski-robot, taught") == "yes")
        #expect(Self.verdict(table, "kolakowski-calib sessions 3–4, taught") == "**no**")
    }

    @Test func aSimulatedSplitIsJudgedAgainstItsOwnCeilingAndBound() {
        var goals = ResultsGoals()
        goals.check = [
            "bound": Self.tally(0.894),
            "ceil-nearest": Self.tally(0.818),
            "roomcast, membership": Self.tally(0.818, flaps: 0.5, switches: [3, 4.04, 5]),
            "roomcast, membership, taught from another day ²": Self.tally(0.867),
            ResultsBenchmark.positionsRow: Self.tally(0.894, flaps: 1.004, switches: [2]),
            ResultsBenchmark.transmittingPositions: Self.tally(0.895, flaps: 0.2, switches: [4.2]),
        ]
        let table = goals.markdown()
        #expect(Self.verdict(table, "check split, roomcast, membership: ≥ ceil-nearest's 0.818") == "yes")
        // 0.97 × 0.894 = 0.867 as printed.
        #expect(Self.verdict(table, "check split, roomcast, membership, taught from another day ²: ≥") == "yes")
        // Positions must beat bound, not equal it.
        #expect(Self.verdict(table, "check split, \(ResultsBenchmark.positionsRow): > bound") == "**no**")
        #expect(Self.verdict(table, "check split, \(ResultsBenchmark.transmittingPositions): > bound") == "yes")
        // Median switch 4.04 prints as 4.0: met; 4.2 is not; 1.004 flaps an hour prints as 1.00: met.
        #expect(Self.verdict(table, "check split, roomcast, membership: flaps/h") == "yes")
        #expect(Self.verdict(table, "check split, \(ResultsBenchmark.positionsRow): flaps/h") == "yes")
        #expect(Self.verdict(table, "check split, \(ResultsBenchmark.transmittingPositions): flaps/h") == "**no**")
        // A split without bound (the holdout, left empty here) has no rows at all.
        #expect(!table.contains("holdout split"))
    }

    /// A row that followed no room change has no median switch: its switch goal is not met
    /// (it read as a switch of 0 s).
    @Test func aRowWithNoSwitchDoesNotMeetTheSwitchGoal() {
        var goals = ResultsGoals()
        goals.check = ["bound": Self.tally(0.894), "ceil-nearest": Self.tally(0.818), "roomcast, membership": Self.tally(0.82, flaps: 0.5)]
        let table = goals.markdown()
        #expect(table.contains("| check split, roomcast, membership: flaps/h ≤ 1, median switch ≤ 4 s | 0.50, – |"))
        #expect(Self.verdict(table, "check split, roomcast, membership: flaps/h") == "**no**")
    }
}
