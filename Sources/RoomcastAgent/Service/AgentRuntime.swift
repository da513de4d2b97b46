import RoomcastHCI
import Shared
import Synchronization
import RoomcastLogging

/// Owns the agent core while the service runs: reports, ticks and broker
/// reconnects all go through one lock, so the core has one owner. A lock and
/// not an actor: the report path runs thousands of times a second and must
/// not pay a suspension per advertisement; nothing under the lock blocks
/// (sinks send or drop at once). What the core decides is sent under the lock
/// too, so it reaches the sink in the order decided: a region's exit on the
/// timer's thread and its enter on the radio's must not cross, nor new
/// messages pass the events held through an outage.
public final class AgentRuntime: Sendable {
    private struct State {
        var core: AgentCore
        var nextTick: Double?
        var lastTime: Double
        /// The latest tick's wall and monotonic times (`elapsed`).
        var lastTick: (wall: Double, monotonic: Double)?
        /// The final tick ran (`finish`): a timer's tick after it would go out behind the stop.
        var finished = false
        /// The radio hears (`RadioSource.isListening`), as last told.
        var listening = true
        /// Since when it has not, while it has not.
        var deafSince: Double?
        /// The status published says `offline` for the radio's sake.
        var saidDeaf = false
    }

    /// Seconds the radio may be closed (reopened after a stall, an adapter reset) before the
    /// node says it is offline: the aggregator takes a node whose heartbeats stop as missing after
    /// as long (`NodeLiveness.quietAfter`), and the status says the same to everyone else.
    public static let deafAfter = 3.0

    private let state: Mutex<State>
    private let sink: any AgentSink
    private let counters: RadioCounters?
    /// Replays tick on the capture's clock (deterministic); live runs tick on a timer.
    private let ticksFromReports: Bool
    /// A monotonic clock, read at each tick: the wall clock running ahead of it between two
    /// ticks is a step forward (`AgentCore.clockSteppedForward`). Nil: ticks' times are all
    /// there is (replays, tests on a virtual clock).
    private let elapsed: (any TimeSource)?
    private let logger: Logger

    public init(core: AgentCore, sink: any AgentSink, counters: RadioCounters?, ticksFromReports: Bool, startTime: Double,
                elapsed: (any TimeSource)? = nil, logger: Logger = .silent) {
        self.state = Mutex(State(core: core, nextTick: nil, lastTime: startTime))
        self.elapsed = elapsed
        self.sink = sink
        self.counters = counters
        self.ticksFromReports = ticksFromReports
        self.logger = logger
    }

    /// Publishes the status (and first telemetry): online, or offline when the radio is not
    /// listening yet (an adapter waited for at boot).
    public func start(now: Double, listening: Bool = true) {
        state.withLock { s in
            s.lastTime = now
            s.listening = listening
            s.saidDeaf = !listening
            s.deafSince = listening ? nil : now
            sink.send([listening ? s.core.onlineMessage : s.core.offlineMessage], at: now)
        }
        if !listening { logger.warning("radio not listening: the node says it is offline until it is", metadata: [:]) }
        tick(now: now)
    }

    /// Whether the radio hears, on the wall clock at `now` (the service asks every second). A
    /// node whose adapter is absent or being reopened says it is offline once `deafAfter` has
    /// passed, and online when it hears again (or at its first report, `handle`): connected and
    /// hearing nothing, it would read as every beacon it hears leaving. No heartbeat goes out
    /// meanwhile (`heartbeat`).
    public func radio(listening: Bool, now: Double) {
        let said: Bool? = state.withLock { s in
            guard !s.finished else { return nil }
            s.listening = listening
            if listening {
                s.deafSince = nil
                guard s.saidDeaf else { return nil }
                s.saidDeaf = false
                sink.send([s.core.onlineMessage], at: s.lastTime)
                return true
            }
            let since = s.deafSince ?? now
            s.deafSince = since
            guard !s.saidDeaf, now - since >= Self.deafAfter else { return nil }
            s.saidDeaf = true
            s.core.radioClosed()
            sink.send([s.core.offlineMessage], at: s.lastTime)
            return false
        }
        switch said {
        case true?: logger.notice("radio listening again: the node says it is online", metadata: [:])
        case false?: logger.warning("radio not listening: the node says it is offline until it is", metadata: [:])
        case nil: break
        }
    }

    public func handle(_ report: AdvertisingReport) {
        let ts = report.timestamp
        var stepped = false, heardAgain = false
        let warning: CapacityWarning? = state.withLock { s in
            var due: [OutboundMessage] = []
            var warning: CapacityWarning?
            // A report is the radio listening, whatever the once-a-second look said last.
            s.listening = true
            s.deafSince = nil
            if s.saidDeaf {
                // Online before its first reading, or the aggregator would take the reading for a
                // node back against its status.
                s.saidDeaf = false
                sink.send([s.core.onlineMessage], at: s.lastTime)
                heardAgain = true
            }
            if ticksFromReports {
                if let next = s.nextTick {
                    if ts >= next {
                        (due, warning) = tickLocked(&s, now: ts)
                    } else if ts < next - 1 - AgentCore.clockStepTolerance {
                        s.nextTick = ts + 1  // the capture's clock stepped back: tick on from here
                    }
                } else {
                    s.nextTick = ts + 1
                }
            }
            let steps = s.core.stats.clockSteps
            let messages = s.core.handle(report)
            s.lastTime = s.core.latestTime
            if s.core.stats.clockSteps != steps { stepped = true }
            if !due.isEmpty { sink.send(due, at: ts) }
            if !messages.isEmpty { sink.send(messages, at: ts) }
            return warning
        }
        if heardAgain { logger.notice("radio listening again: the node says it is online", metadata: [:]) }
        if stepped { warnClockStep() }
        if let warning { warn(warning) }
    }

    public func tick(now: Double) {
        // Read next to the caller's wall clock, not after waiting for the lock: the wait would
        // count as the wall clock running ahead.
        let monotonic = elapsed?.now()
        let (warning, stepped) = state.withLock { s -> (CapacityWarning?, Bool) in
            guard !s.finished else { return (nil, false) }
            let steps = s.core.stats.clockSteps
            if let monotonic {
                if let last = s.lastTick {
                    let ahead = (now - last.wall) - (monotonic - last.monotonic)
                    if ahead > AgentCore.clockStepTolerance { s.core.clockSteppedForward(by: ahead) }
                }
                s.lastTick = (now, monotonic)
            }
            let (messages, warning) = tickLocked(&s, now: now)
            sink.send(messages, at: now)
            return (warning, s.core.stats.clockSteps != steps)
        }
        if stepped { warnClockStep() }
        if let warning { warn(warning) }
    }

    private func tickLocked(_ s: inout State, now: Double) -> ([OutboundMessage], CapacityWarning?) {
        s.nextTick = now + 1
        let messages = s.core.tick(now: now, radio: counters?.snapshot, dropped: sink.dropped, brokerReconnects: sink.reconnects, refused: sink.refused)
        s.lastTime = s.core.latestTime
        return (messages, s.core.capacityWarning(now: now))
    }

    private func warnClockStep() {
        let stats = stats
        logger.warning("the wall clock stepped: every time kept moves with it", metadata: [
            "clock_steps": "\(stats.clockSteps)", "step_s": "\(String(format: "%+.1f", stats.lastClockStep))"])
    }

    /// Outside the lock: a log handler may write to a slow terminal or journal.
    private func warn(_ w: CapacityWarning) {
        logger.warning(w.message, metadata: w.metadata)
    }

    /// That the node listens (`NodeHeartbeat`), on the wall clock at `now`: what a live connection
    /// sends every second while the radio listens, whether or not it hears anything. None after
    /// the final tick, nor while the radio is closed: the aggregator takes the node as missing.
    public func heartbeat(now: Double) {
        state.withLock { s in
            guard !s.finished, s.listening else { return }
            sink.send([s.core.heartbeatMessage(now: now)], at: s.lastTime)
        }
    }

    /// The broker came (back): status online (offline while the radio is said to be closed),
    /// telemetry, then the current state with the next advertisements.
    public func brokerConnected() {
        state.withLock { s in
            s.core.brokerReconnected()
            sink.send([s.saidDeaf ? s.core.offlineMessage : s.core.onlineMessage, s.core.telemetry(now: s.lastTime, radio: counters?.snapshot, dropped: sink.dropped,
                                                              brokerReconnects: sink.reconnects, refused: sink.refused)], at: s.lastTime)
        }
    }

    /// Final tick, then offline status, flush and disconnect.
    public func finish() async {
        let (offline, at) = state.withLock { s in
            s.finished = true
            sink.send(s.core.tick(now: s.lastTime, radio: counters?.snapshot, dropped: sink.dropped, brokerReconnects: sink.reconnects,
                                  refused: sink.refused), at: s.lastTime)
            return (s.core.offlineMessage, s.lastTime)
        }
        await sink.shutdown(final: offline, at: at)
    }

    public var scanTable: ScanTable { state.withLock { $0.core.scanTable(now: $0.lastTime) } }
    public var stats: AgentCore.Stats { state.withLock { $0.core.stats } }
    /// What `/metrics` shows of the core: its counters, advertisements/s and the table's size.
    public var metrics: (stats: AgentCore.Stats, advertisementRate: Double, trackedBeacons: Int) {
        state.withLock { ($0.core.stats, $0.core.advertisementRate, $0.core.trackedBeacons) }
    }
    public var now: Double { state.withLock { $0.lastTime } }
}
