import Shared

/// Anything that turns node readings into per-beacon room decisions: the
/// fusion engine, and the baseline rules it is scored against. Pure and
/// deterministic: time only enters through `now` (and readings' capture `ts`).
public protocol PresenceEstimator {
    /// Feeds one reading; `now` is when the aggregator received it (the
    /// reading itself is judged by its capture time `reading.ts`).
    mutating func ingest(_ reading: BeaconReading, now: Double)

    /// A node's status changed; an offline node's evidence drops out at once.
    mutating func nodeStatus(_ node: String, online: Bool, now: Double)

    /// Advances time to `now` and returns the decisions that changed since the
    /// previous call: a new room, or going away (`room == nil`).
    mutating func tick(now: Double) -> [PresenceDecision]

    /// The decision in force for `id`, if the beacon has been heard.
    func decision(for id: BeaconID) -> PresenceDecision?

    /// The aggregator could not hear the nodes until `now` (its broker connection was down, or
    /// the process was paused): the silence before `now` says nothing about the beacons, so it
    /// must not count towards away, nor let the room filter forget what it knew.
    mutating func hearingRestored(at now: Double)
}

extension PresenceEstimator {
    /// Estimators without a notion of silence over time have nothing to adjust.
    public mutating func hearingRestored(at now: Double) {}
}

/// Resuming after a restart.
public protocol ResumablePresenceEstimator: PresenceEstimator {
    /// Seeds a beacon's decision from the aggregator's own retained output
    /// (read back at start-up), so the first fresh readings are judged against
    /// the room it was in — with the usual hysteresis — instead of from nothing.
    mutating func resume(_ decision: PresenceDecision, now: Double)
}
