/// How the aggregator tells its own deafness from the nodes' silence, live and in replay alike:
/// one pair of numbers, so a recording replays the gaps the live aggregator would have seen.
public enum DeafTime {
    /// A gap between two runs of the aggregator longer than this means the process was paused
    /// (live), or the recorder's connection was lost (a recording with heartbeats, every node
    /// sending one a second).
    public static let pauseThreshold = 5.0
    /// Seconds after hearing again before decisions resume: a few report intervals, so fresh
    /// readings have arrived.
    public static let reconnectGrace = 3.0
}
