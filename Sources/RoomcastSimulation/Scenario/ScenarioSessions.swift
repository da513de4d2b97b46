import Shared

/// A scenario's sessions: stretches of truth separated by gaps with no truth at all (the
/// Kolakowski calibration recording is four runs with silent gaps between them). Numbered
/// from 1 in time order; a scenario without such gaps is one session.
public struct ScenarioSessions: Sendable, Equatable {
    /// Each session's time span, in order.
    public var spans: [ClosedRange<Double>]

    /// A gap in every beacon's truth this long or longer separates two sessions.
    public static let minimumGap = 60.0

    public init(truth: [TruthSpan], minimumGap: Double = ScenarioSessions.minimumGap) {
        var spans: [ClosedRange<Double>] = []
        for s in truth.sorted(by: { $0.t0 < $1.t0 }) where s.t1 >= s.t0 {
            if let last = spans.last, s.t0 - last.upperBound < minimumGap {
                spans[spans.count - 1] = last.lowerBound...max(last.upperBound, s.t1)
            } else {
                spans.append(s.t0...s.t1)
            }
        }
        self.spans = spans
    }

    /// The truth of the sessions numbered in `sessions` (1-based), clipped to them.
    public func truth(_ truth: [TruthSpan], in sessions: Set<Int>) -> [TruthSpan] {
        let chosen = sessions.sorted().compactMap { $0 >= 1 && $0 <= spans.count ? spans[$0 - 1] : nil }
        return truth.filter { s in chosen.contains { $0.contains(s.t0) } }
    }

    /// Session numbers not in this scenario, for an error message.
    public func unknown(_ sessions: Set<Int>) -> [Int] { sessions.filter { $0 < 1 || $0 > spans.count }.sorted() }
}
