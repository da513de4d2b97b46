import RoomcastAggregator
import Shared

/// The labels a user walking each room would give, from a scenario's truth: at the start of
/// every true room stay of at least `minimumSpan` seconds, "the beacon is in this room" for
/// the stay less `margin` at each end (so the walk in and out is not taught as the room),
/// at most 600 s. As learn messages (`<prefix>/aggregator/learn`) at their times, ready to
/// be merged into an `aggregator replay` input.
public struct TruthLabels: Sendable {
    public var minimumSpan: Double
    public var margin: Double

    public init(minimumSpan: Double = 20, margin: Double = 3) {
        self.minimumSpan = minimumSpan
        self.margin = margin
    }

    /// The learn messages for `truth` (restricted beforehand to the sessions wanted), in time order.
    public func messages(_ truth: [TruthSpan], topics: Topics = Topics()) -> [MessageLogLine] {
        var out: [MessageLogLine] = []
        for (id, runs) in Scorer().runs(truth) {
            for run in runs {
                guard let room = run.room, run.t1 - run.t0 >= minimumSpan else { continue }
                let seconds = min(run.t1 - run.t0 - 2 * margin, 600)
                guard seconds >= 5 else { continue }
                let command = LearnCommand(.label(room: room, beacon: id, seconds: (seconds * 1000).rounded(.down) / 1000))
                let line = MessageLogLine(ts: run.t0 + margin, message: OutboundMessage(topic: topics.aggregatorLearn,
                                                                                       payload: command.encoded(), qos: 1))
                // As printed and read back (times to the millisecond): in process, the same as from a file.
                out.append((try? MessageLogLine.decode(line.encoded())) ?? line)
            }
        }
        // Ties (two beacons labelled at once) in beacon order, so the output is the same every run.
        return out.sorted { $0.ts != $1.ts ? $0.ts < $1.ts : $0.payload.lexicographicallyPrecedes($1.payload) }
    }
}
