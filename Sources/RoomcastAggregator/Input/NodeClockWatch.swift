import RoomcastFusion

/// Estimates each node's clock offset from its readings and says which node's clock is off.
///
/// A reading's lag (arrival at the aggregator − capture time at the node) is the node's clock
/// offset plus the transit time. Judged per reading, one forged `ts`, one reading held up in a
/// queue, or the backlog a paused aggregator reads at once would each blame a node whose clock
/// is fine. So the offset is the median lag over a window of arrivals (a minority of odd
/// readings cannot move it), and a node is named only when a whole window puts it beyond the
/// limit. The caller leaves out readings that arrive while the aggregator itself was not
/// listening: their lag is ours.
///
/// A clock that is off and a link where readings queue both make the lag large; what tells
/// them apart is its spread. A clock's offset is the same for every reading, while a queue's
/// delay grows and drains. So only a window whose lags lie within `limit` of one another
/// (but for a tenth at each end) gives an offset to correct by (`offsets`): the readings of a
/// slow link stay as late as they are.
public struct NodeClockWatch: Sendable {
    /// How far the offset may be before a node is named (seconds). Half of `readingLife`: a node
    /// further behind brings its readings stale, or nearly, so it counts for little or nothing,
    /// and that is worth saying.
    public let limit: Double
    /// Seconds fusion counts a reading from its capture (`FusionModel.freshness`).
    public static let readingLife = FusionModel().freshness
    /// Arrival time one estimate covers (seconds).
    public let window: Double
    /// Readings a window needs before it is judged.
    public let minimumReadings: Int
    /// Nodes watched at once: node names come from the network, so the table is bounded.
    public let maximumNodes: Int

    private struct Window {
        var start: Double
        var lags: [Double] = []
        var seen = 0
    }
    private var windows: [String: Window] = [:]
    /// The latest judged offset per node whose clock is off (seconds, positive: behind), for at
    /// most `maximumNodes` nodes.
    public private(set) var offNodes: [String: Double] = [:]
    /// Of those, the nodes whose window was steady: their offset is their clock's, to put their
    /// capture times on the aggregator's clock by.
    public private(set) var offsets: [String: Double] = [:]
    /// Every node's latest verdict and when it was given, off or not, for at most `maximumNodes`
    /// nodes: what tells one node's clock from the aggregator's own (`everyNodeAgrees`).
    private var latest: [String: (verdict: Verdict, at: Double)] = [:]

    /// Lags kept per window: a fixed sample keeps the cost per reading constant.
    static let sampleSize = 64

    public init(limit: Double = readingLife / 2, window: Double = 10, minimumReadings: Int = 5, maximumNodes: Int = 4096) {
        self.limit = limit
        self.window = window
        self.minimumReadings = minimumReadings
        self.maximumNodes = maximumNodes
    }

    /// Starts every window afresh (the aggregator's clock stepped): lags from before the step
    /// and after it do not belong in one median. Verdicts already given stand until the next.
    public mutating func restart() {
        windows.removeAll(keepingCapacity: true)
        latest.removeAll(keepingCapacity: true)
    }

    /// A verdict when a window closes: the node's median offset and whether it is beyond `limit`.
    public struct Verdict: Sendable, Equatable {
        public var node: String
        public var offset: Double
        public var off: Bool
        /// The window's lags lay within `limit` of one another: a clock's offset, not a queue.
        public var steady: Bool
    }

    /// One reading of `node` captured at `captured`, arriving at `now`. Returns a verdict when
    /// this reading closes a window that had enough readings.
    public mutating func observe(node: String, captured: Double, now: Double) -> Verdict? {
        let lag = now - captured
        guard lag.isFinite else { return nil }
        guard windows[node] != nil else {
            if windows.count < maximumNodes { windows[node] = Window(start: now, lags: [lag], seen: 1) }
            return nil
        }
        // Mutated in place: a copy out of the dictionary would copy its lags on every reading.
        guard let (offset, spread) = Self.add(lag, now: now, to: &windows[node]!, window: window, minimumReadings: minimumReadings) else {
            return nil
        }
        let off = abs(offset) > limit, steady = spread <= limit
        // Bounded too: the windows start afresh whenever the aggregator stops listening, so names
        // rotated across reconnects would otherwise add verdicts without end.
        if !off { offNodes[node] = nil } else if offNodes[node] != nil || offNodes.count < maximumNodes { offNodes[node] = offset }
        offsets[node] = off && steady ? offNodes[node] : nil
        let verdict = Verdict(node: node, offset: offset, off: off, steady: steady)
        if latest[node] != nil || latest.count < maximumNodes { latest[node] = (verdict, now) }
        return verdict
    }

    /// True when `verdict`'s steady offset is every node's: at least two nodes judged within the
    /// last three windows, all steady and within `limit` of it. Then the clock that is off is
    /// most likely the aggregator's own (one machine set wrong, rather than every node alike),
    /// and saying so spares the user a search through nodes whose clocks are right. Readings are
    /// put on this clock all the same: fusion compares the nodes with one another.
    public func everyNodeAgrees(with verdict: Verdict, now: Double) -> Bool {
        guard verdict.off, verdict.steady else { return false }
        var agreeing = 0
        for (_, entry) in latest where now - entry.at <= 3 * window {
            guard entry.verdict.steady, abs(entry.verdict.offset - verdict.offset) <= limit else { return false }
            agreeing += 1
        }
        return agreeing >= 2
    }

    /// Adds one lag to `w`; when it closes a window with enough readings, the window's median
    /// and the spread of its lags: a tenth of them, and at least one, left out at each end, so one
    /// forged or held-up reading in a window of a few cannot make a steady clock look unsteady.
    private static func add(_ lag: Double, now: Double, to w: inout Window, window: Double,
                            minimumReadings: Int) -> (median: Double, spread: Double)? {
        var offset: (Double, Double)?
        if now - w.start >= window {
            if w.lags.count >= minimumReadings {
                let median = median(&w.lags)  // sorts the lags
                let n = w.lags.count, k = max(1, n / 10)
                offset = (median, w.lags[n - 1 - k] - w.lags[k])
            }
            w = Window(start: now)
        }
        w.seen += 1
        if w.lags.count < sampleSize {
            w.lags.append(lag)
        } else {
            // The window's latest readings (a ring): deterministic, so replays warn alike.
            w.lags[(w.seen - 1) % sampleSize] = lag
        }
        return offset
    }

    /// Forgets the windows in progress: readings that arrived while the aggregator was not
    /// listening must not be judged with the ones after.
    public mutating func restartWindows() {
        windows.removeAll(keepingCapacity: true)
    }

    static func median(_ values: inout [Double]) -> Double {
        values.sort()
        let n = values.count
        return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2
    }
}
