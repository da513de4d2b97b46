import Foundation
import Shared
import Testing
@testable import RoomcastSimulation

@Suite("Scorer")
struct ScorerTests {
    static let id = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1")!
    static let start = 1000.0

    /// Truth: kitchen 0–100 s, office 100–200 s, away 200–260 s (relative to start).
    static let truth = [
        TruthSpan(id: id, t0: start, t1: start + 100, room: "kitchen"),
        TruthSpan(id: id, t0: start + 100, t1: start + 200, room: "office"),
        TruthSpan(id: id, t0: start + 200, t1: start + 260, room: nil),
    ]

    func timeline(_ changes: [(Double, String?)]) -> DecisionTimeline {
        var t = DecisionTimeline()
        for (at, room) in changes { t.record(Self.id, room: room, at: Self.start + at) }
        return t
    }

    @Test("a perfect, instant estimator scores 1, no flaps, zero latency")
    func perfect() {
        let s = Scorer().score(timeline([(0, "kitchen"), (100, "office"), (200, nil)]), truth: Self.truth, start: Self.start)
        #expect(s.settledAccuracy == 1)
        // Settled seconds: 30..<100 (70), 110..<200 (90), 210..<260 (50).
        #expect(s.settledSamples == 210)
        #expect(s.flaps == 0)
        #expect(s.missedSwitches == 0)
        #expect(s.switchLatencies == [0])
        #expect(s.awayLatencies == [0])
    }

    @Test("latency is the time to the first change into the new room; away latency separately")
    func latency() {
        let s = Scorer().score(timeline([(0, "kitchen"), (103.5, "office"), (240, nil)]), truth: Self.truth, start: Self.start)
        #expect(s.switchLatencies == [3.5])
        #expect(s.awayLatencies == [40])
        #expect(s.medianSwitchLatency == 3.5)
        // Office decided late: settled seconds 110..<200 fine; away settled 210..<240 wrong (30).
        #expect(s.settledSamples == 210)
        #expect(abs(s.settledAccuracy - 180.0 / 210.0) < 1e-12)
    }

    @Test("a room shown for a beacon that has left is counted apart: the flap count explains it")
    func movesWhileAway() {
        // Left at 200: a move to the kitchen 5 s later, then away at 235.
        let s = Scorer().score(timeline([(0, "kitchen"), (100, "office"), (205, "kitchen"), (235, nil)]),
                               truth: Self.truth, start: Self.start)
        #expect(s.movesWhileAway == 1)
        #expect(s.flaps == 0)
        #expect(Scorer().score(timeline([(0, "kitchen"), (100, "office"), (230, nil)]), truth: Self.truth,
                               start: Self.start).movesWhileAway == 0)
    }

    @Test("flaps are changes inside truth not explained by a true change in the last 30 s")
    func flaps() {
        let s = Scorer().score(
            timeline([(0, "kitchen"), (50, "office"), (52, "kitchen"), (105, "kitchen2"), (120, "office"), (170, "kitchen"),
                      (171, "office")]),
            truth: Self.truth, start: Self.start)
        // 50 and 52: no true change since 0 → 2 flaps; 105 and 120 follow the change at 100 → explained;
        // 170 and 171 → 2 flaps. Truth covers 260 s.
        #expect(s.flaps == 4)
        #expect(abs(s.flapsPerHour - 4 / (260.0 / 3600)) < 1e-9)
        #expect(s.switchLatencies == [20])
    }

    @Test("a change to away while the truth is away is explained for twice the away timeout, nothing else is")
    func awayWindow() {
        let truth = [
            TruthSpan(id: Self.id, t0: Self.start, t1: Self.start + 100, room: "kitchen"),
            TruthSpan(id: Self.id, t0: Self.start + 100, t1: Self.start + 300, room: nil),
        ]
        func flaps(_ changes: [(Double, String?)]) -> Int {
            Scorer().score(timeline(changes), truth: truth, start: Self.start).flaps
        }
        #expect(flaps([(0, "kitchen"), (131, nil)]) == 0)  // 31 s: on target, not a flap
        #expect(flaps([(0, "kitchen"), (159, nil)]) == 0)
        #expect(flaps([(0, "kitchen"), (161, nil)]) == 1)  // later than twice the timeout
        #expect(flaps([(0, "kitchen"), (131, "office")]) == 1)  // a room while away: only the 30 s window
        #expect(flaps([(0, "kitchen"), (110, "office"), (140, nil)]) == 0)
    }

    @Test("adjacent spans of one room are one stay; the first 30 s are never scored")
    func merging() {
        let truth = [
            TruthSpan(id: Self.id, t0: Self.start, t1: Self.start + 40, room: "kitchen"),
            TruthSpan(id: Self.id, t0: Self.start + 40, t1: Self.start + 80, room: "kitchen"),
        ]
        let s = Scorer().score(timeline([(0, "hall"), (45, "kitchen")]), truth: truth, start: Self.start)
        // Seconds 30..<80 settled: 30..<45 wrong (15), 45..<80 right (35). The change at 45 is a flap
        // (no true change at 40: the spans merge).
        #expect(s.settledSamples == 50)
        #expect(abs(s.settledAccuracy - 35.0 / 50.0) < 1e-12)
        #expect(s.flaps == 1)
    }

    @Test("the timeline keeps only changes, in order")
    func timelineChanges() {
        var t = DecisionTimeline()
        t.record(Self.id, room: nil, at: 1)
        t.record(Self.id, room: "a", at: 2)
        t.record(Self.id, room: "a", at: 3)
        t.record(Self.id, room: "b", at: 4)
        t.record(Self.id, room: "c", at: 3.5)  // back in time: ignored
        #expect(t.changes[Self.id]?.map(\.t) == [2, 4])
        #expect(t.room(of: Self.id, at: 1.9) == nil)
        #expect(t.room(of: Self.id, at: 2) == "a")
        #expect(t.room(of: Self.id, at: 3.99) == "a")
        #expect(t.room(of: Self.id, at: 100) == "b")
    }

    @Test("upper median")
    func median() {
        #expect(Score.median([]) == nil)
        #expect(Score.median([3, 1]) == 3)
        #expect(Score.median([5, 1, 3]) == 3)
    }
}
