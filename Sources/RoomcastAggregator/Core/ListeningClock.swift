/// Seconds the aggregator has listened since a moment, leaving out the time it was deaf (its
/// broker connection gone, the process paused): the wait for the listed nodes after the first
/// is heard (`FirstNodeWait.patience`) counts in it, so a broker outage does not use the wait up
/// and name every node not yet heard as down the moment hearing comes back.
struct ListeningClock: Sendable, Equatable {
    /// Seconds listened before the current stretch.
    private var before: Double = 0
    /// When the current stretch of listening began; nil while deaf.
    private var from: Double?

    /// Starts counting at `now`, listening or not.
    init(from now: Double, listening: Bool) {
        from = listening ? now : nil
    }

    /// Hearing is lost at `now`: the stretch ends.
    mutating func stop(at now: Double) {
        guard let start = from else { return }
        before += max(0, now - start)
        from = nil
    }

    /// Hearing is back at `now`: a stretch begins, unless one is under way.
    mutating func resume(at now: Double) {
        if from == nil { from = now }
    }

    /// Seconds listened up to `now`.
    func listened(at now: Double) -> Double {
        before + (from.map { max(0, now - $0) } ?? 0)
    }

    /// When `seconds` of listening will have been reached, listening on from now; infinity while
    /// deaf and short of it.
    func reaches(_ seconds: Double) -> Double {
        guard let start = from else { return before >= seconds ? -.infinity : .infinity }
        return start + max(0, seconds - before)
    }

    /// The wall clock was stepped back by `seconds`.
    mutating func clockSteppedBack(by seconds: Double) {
        if let start = from { from = start - seconds }
    }
}
