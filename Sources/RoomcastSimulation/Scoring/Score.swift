/// How well an estimator's decisions matched the truth (definitions in docs/simulator.md).
public struct Score: Sendable, Equatable, Codable {
    /// Share of settled seconds where the decision in force equalled the truth.
    public var settledAccuracy: Double
    /// Seconds sampled for `settledAccuracy`.
    public var settledSamples: Int
    /// The same over the settled seconds whose truth is a room (not away): away stays
    /// cost every estimator with an away timeout its timeout minus the 10 s settle time.
    public var roomAccuracy: Double
    /// Unexplained decision changes per hour of truth.
    public var flapsPerHour: Double
    public var flaps: Int
    /// Hours covered by truth spans (all beacons).
    public var truthHours: Double
    /// Latencies (s) from a true room change to the first matching decision, for stays ≥ 30 s.
    public var switchLatencies: [Double]
    /// True changes whose stay ended before the decision matched.
    public var missedSwitches: Int
    /// Latencies (s) from leaving to deciding "away", for away stays ≥ 30 s.
    public var awayLatencies: [Double]
    public var missedAways: Int
    /// Decision changes into a room while the truth was away: the room shown for someone
    /// who has left. The flap count explains every change within 30 s of leaving (and a
    /// change to away within 60 s), so it does not see these.
    public var movesWhileAway: Int

    public init(settledAccuracy: Double, settledSamples: Int, roomAccuracy: Double, flapsPerHour: Double, flaps: Int,
                truthHours: Double, switchLatencies: [Double], missedSwitches: Int, awayLatencies: [Double],
                missedAways: Int, movesWhileAway: Int = 0) {
        self.settledAccuracy = settledAccuracy
        self.roomAccuracy = roomAccuracy
        self.settledSamples = settledSamples
        self.flapsPerHour = flapsPerHour
        self.flaps = flaps
        self.truthHours = truthHours
        self.switchLatencies = switchLatencies
        self.missedSwitches = missedSwitches
        self.awayLatencies = awayLatencies
        self.missedAways = missedAways
        self.movesWhileAway = movesWhileAway
    }

    /// Median switch latency in seconds, nil without switches.
    public var medianSwitchLatency: Double? { Score.median(switchLatencies) }
    /// Median away latency in seconds, nil without away stays.
    public var medianAwayLatency: Double? { Score.median(awayLatencies) }

    /// The upper median (the element at index count/2 of the sorted values), so the
    /// result is always a latency that happened; this is how the reference numbers
    /// in /docs/simulator.md were computed.
    public static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        return values.sorted()[values.count / 2]
    }

    /// One line: accuracy / flaps per hour / median switch latency (/ median away latency).
    public var summary: String {
        func f(_ v: Double?, _ digits: Int) -> String {
            guard let v else { return "-" }
            return String(format: "%.\(digits)f", v)
        }
        var s = "\(f(settledAccuracy, 3)) / \(f(flapsPerHour, 0)) / \(f(medianSwitchLatency, 1)) s"
        if !awayLatencies.isEmpty || missedAways > 0 { s += " / away \(f(medianAwayLatency, 1)) s" }
        return s
    }
}
