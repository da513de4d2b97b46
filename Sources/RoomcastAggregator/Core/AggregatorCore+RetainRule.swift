import Shared

/// What an inbound message's retain flag makes of it: the live runtime and `aggregator replay`
/// (whose lines carry the flag) take messages by the same rule, so a replay decides as the
/// aggregator did live.
public enum InboundRetainRule: Sendable, Equatable {
    /// Handled by the core.
    case handle
    /// A retained learn command: it would run again at every start, so it is refused.
    case refuseRetainedLearn
    /// Live presence after the resume window: another partition's decision, or our own output
    /// echoed back, not a state to resume from (`AggregatorCore.otherPartitionsPresence`).
    case livePresence(BeaconID)
}

extension AggregatorCore {
    /// Seconds after the start in which presence that is not retained still resumes a beacon
    /// (the active peer's, to a standby warming up).
    public static var resumeWindow: Double { 3 }

    /// How a message on `topic` with the broker's retain flag `retained` (nil when not known) is
    /// taken, `sinceStart` seconds after the start.
    public func retainRule(topic: String, retained: Bool?, sinceStart: Double, resumeWindow: Double = Self.resumeWindow) -> InboundRetainRule {
        if retained == true, topic == topics.aggregatorLearn { return .refuseRetainedLearn }
        // The prefix first: every reading passes here, and parsing a topic makes strings.
        if retained != true, sinceStart > resumeWindow, topic.utf8.starts(with: topics.prefix.utf8),
           topic.utf8.dropFirst(topics.prefix.utf8.count).starts(with: "/presence/".utf8),
           case .presence(let id) = topics.parse(topic) { return .livePresence(id) }
        return .handle
    }
}
