import Shared

/// Scores a decision timeline against truth spans (docs/simulator.md "Scoring"):
/// settled accuracy, switch latency, flaps per hour and away latency.
public struct Scorer: Sendable {
    /// Truth must have held this long before a second counts as settled.
    public var settleAfter: Double = 10
    /// Seconds after the scenario start that are never scored.
    public var warmUp: Double = 30
    /// Only stays at least this long have a switch (or away) latency.
    public var minimumStay: Double = 30
    /// A decision change within this many seconds after a true change is explained.
    public var explainWindow: Double = 30
    /// A change *to away* while the truth is away is explained this long after the truth
    /// went away: twice the default away timeout (30 s), the target for away
    /// latency. With the 30 s window alone, a correct away decision made at 30.4 s after
    /// the person left counted as a flap.
    public var awayExplainWindow: Double = 60
    /// Spans closer than this are contiguous (no gap in the truth).
    public var contiguity: Double = 1e-3

    public init() {}

    /// A maximal stretch of one truth room (adjacent same-room spans merged).
    public struct Run: Sendable {
        public var t0: Double
        public var t1: Double
        public var room: String?
        /// The run starts where a run with another room ended (a true change).
        public var isChange: Bool
    }

    /// Truth runs per beacon, sorted.
    public func runs(_ truth: [TruthSpan]) -> [BeaconID: [Run]] {
        var out: [BeaconID: [Run]] = [:]
        for (id, spans) in Dictionary(grouping: truth, by: \.id) {
            var list: [Run] = []
            for s in spans.sorted(by: { $0.t0 < $1.t0 }) where s.t1 > s.t0 {
                if var last = list.last, abs(s.t0 - last.t1) <= contiguity {
                    if last.room == s.room {
                        last.t1 = s.t1
                        list[list.count - 1] = last
                        continue
                    }
                    list.append(Run(t0: s.t0, t1: s.t1, room: s.room, isChange: true))
                } else {
                    list.append(Run(t0: s.t0, t1: s.t1, room: s.room, isChange: false))
                }
            }
            out[id] = list
        }
        return out
    }

    /// Scores `timeline` against `truth` for a scenario starting at `start`.
    public func score(_ timeline: DecisionTimeline, truth: [TruthSpan], start: Double) -> Score {
        var correct = 0, samples = 0, flaps = 0, missed = 0, missedAways = 0, movesWhileAway = 0
        var roomCorrect = 0, roomSamples = 0
        var truthSeconds = 0.0
        var latencies: [Double] = [], awayLatencies: [Double] = []
        let allRuns = runs(truth)
        for id in allRuns.keys.sorted() {
            let runs = allRuns[id]!
            let changes = timeline.changes[id] ?? []
            for run in runs {
                truthSeconds += run.t1 - run.t0
                // Settled accuracy (and over rooms only), sampled on whole seconds.
                forEachSettledSecond(of: run, start: start) { t in
                    samples += 1
                    let right = timeline.room(of: id, at: t) == run.room
                    if right { correct += 1 }
                    if run.room != nil {
                        roomSamples += 1
                        if right { roomCorrect += 1 }
                    }
                }
                // Latency of true changes into stays of at least `minimumStay`.
                if run.isChange, run.t1 - run.t0 >= minimumStay {
                    // The first decision change *into* the new room after the true change:
                    // an estimator that was already there by accident (or by flapping)
                    // has not yet made that decision.
                    if let hit = changes.first(where: { $0.t >= run.t0 && $0.t < run.t1 && $0.room == run.room }) {
                        append(hit.t - run.t0, run.room, &latencies, &awayLatencies)
                    } else if run.room == nil {
                        missedAways += 1
                    } else {
                        missed += 1
                    }
                }
            }
            for c in changes {
                if isFlap(c, runs) { flaps += 1 }
                if isMoveWhileAway(c, runs) { movesWhileAway += 1 }
            }
        }
        let hours = truthSeconds / 3600
        return Score(
            settledAccuracy: samples > 0 ? Double(correct) / Double(samples) : 0,
            settledSamples: samples,
            roomAccuracy: roomSamples > 0 ? Double(roomCorrect) / Double(roomSamples) : 0,
            flapsPerHour: hours > 0 ? Double(flaps) / hours : 0,
            flaps: flaps, truthHours: hours,
            switchLatencies: latencies, missedSwitches: missed,
            awayLatencies: awayLatencies, missedAways: missedAways, movesWhileAway: movesWhileAway)
    }

    /// Calls `body` with each settled second of `run`: whole seconds after `start`, past the
    /// warm-up, once the truth has held for `settleAfter`.
    public func forEachSettledSecond(of run: Run, start: Double, _ body: (Double) -> Void) {
        var k = max((run.t0 + settleAfter - start).rounded(.up), warmUp.rounded(.up))
        while start + k < run.t1 {
            body(start + k)
            k += 1
        }
    }

    /// Flaps: changes inside truth that no run start in the previous `explainWindow`
    /// explains (`awayExplainWindow` for a change to away while the truth is away).
    public func isFlap(_ change: DecisionTimeline.Change, _ runs: [Run]) -> Bool {
        guard let run = runs.first(where: { change.t >= $0.t0 && change.t < $0.t1 }) else { return false }
        if change.room == nil, run.room == nil, change.t - run.t0 <= awayExplainWindow { return false }
        return !runs.contains(where: { $0.t0 <= change.t && change.t - $0.t0 <= explainWindow })
    }

    /// Moves while away: a change into a room while the truth is away (the room shown for
    /// someone who has left).
    public func isMoveWhileAway(_ change: DecisionTimeline.Change, _ runs: [Run]) -> Bool {
        guard change.room != nil, let run = runs.first(where: { change.t >= $0.t0 && change.t < $0.t1 }) else { return false }
        return run.room == nil
    }

    private func append(_ latency: Double, _ room: String?, _ rooms: inout [Double], _ aways: inout [Double]) {
        if room == nil { aways.append(latency) } else { rooms.append(latency) }
    }
}
