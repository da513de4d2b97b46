import RoomcastFusion
import Shared

/// Replays a scenario through ranging and any `PresenceEstimator` and scores the
/// decisions: raw packets → per-node `RangingTable` → readings at most once per
/// second per beacon per node → estimator ticked once per second → `Scorer`.
public enum Evaluation {
    /// Knobs of a replay.
    public struct Options: Sendable {
        public var ranging = RangingConfig()
        /// Per-node receiver calibration in dB.
        public var rxAdjust: [String: Double] = [:]
        public var publishInterval = 1.0
        public var tickInterval = 1.0
        public var scorer = Scorer()
        /// Also tick right after every reading, so an event-driven estimator's changes
        /// between whole seconds are seen (and timed) individually.
        public var tickAfterEveryReading = false

        public init() {}
    }

    /// The outcome of a replay.
    public struct Result: Sendable {
        public var score: Score
        public var timeline: DecisionTimeline
        public var readings: Int
        public var ticks: Int
    }

    /// Replays `scenario` through `estimator` and returns its score.
    public static func run(scenario: Scenario, estimator: some PresenceEstimator,
                           options: Options = Options()) -> Score {
        replay(scenario: scenario, estimator: estimator, options: options).score
    }

    /// Replays `scenario` through `estimator`; the score plus the decision timeline.
    /// `finished`, if given, sees the estimator as it is at the end (diagnostics: what it learned).
    public static func replay<E: PresenceEstimator>(scenario: Scenario, estimator: E,
                                                    options: Options = Options(),
                                                    finished: ((E) -> Void)? = nil) -> Result {
        var estimator = estimator
        var publisher = ReadingPublisher(ranging: options.ranging, rxAdjust: options.rxAdjust,
                                         beacons: scenario.beacons, publishInterval: options.publishInterval)
        let start = scenario.layout.t0
        let end = start + scenario.layout.duration
        for node in scenario.layout.nodes { estimator.nodeStatus(node.name, online: true, now: start) }
        var timeline = DecisionTimeline()
        var readings = 0, ticks = 0
        var previousTick = start
        var nextTick = start + options.tickInterval

        func tick(_ t: Double) {
            for d in estimator.tick(now: t) {
                // An event-driven estimator may have changed its mind between ticks.
                let at = min(max(d.ts, previousTick), t)
                timeline.record(d.id, room: d.room, at: at)
            }
            previousTick = t
            ticks += 1
        }

        for packet in scenario.packets {
            // A stray time stamp far outside the scenario must not make us tick for ages.
            guard packet.t >= start - 3600, packet.t <= end + 60 else { continue }
            while packet.t > nextTick {
                tick(nextTick)
                nextTick += options.tickInterval
            }
            if let r = publisher.ingest(packet) {
                estimator.ingest(r, now: packet.t)
                readings += 1
                if options.tickAfterEveryReading {
                    for d in estimator.tick(now: packet.t) { timeline.record(d.id, room: d.room, at: packet.t) }
                }
            }
        }
        while nextTick <= end {
            tick(nextTick)
            nextTick += options.tickInterval
        }
        finished?(estimator)
        let score = options.scorer.score(timeline, truth: scenario.truth, start: start)
        return Result(score: score, timeline: timeline, readings: readings, ticks: ticks)
    }
}
