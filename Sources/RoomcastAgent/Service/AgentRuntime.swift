import RoomcastHCI
import Shared

/// Owns the agent core while the service runs: reports, ticks and broker
/// reconnects all pass through this actor, so the core has one owner.
public actor AgentRuntime {
    private var core: AgentCore
    private let sink: any AgentSink
    private let counters: RadioCounters?
    /// Replays tick on the capture's clock (deterministic); live runs tick on a timer.
    private let ticksFromReports: Bool
    private var nextTick: Double?
    private var lastTime: Double

    public init(core: AgentCore, sink: any AgentSink, counters: RadioCounters?, ticksFromReports: Bool, startTime: Double) {
        self.core = core
        self.sink = sink
        self.counters = counters
        self.ticksFromReports = ticksFromReports
        self.lastTime = startTime
    }

    /// Publishes the online status (and first telemetry).
    public func start(now: Double) {
        lastTime = now
        sink.send([core.onlineMessage], at: now)
        tick(now: now)
    }

    public func handle(_ report: AdvertisingReport) {
        let ts = report.timestamp
        if ticksFromReports {
            if let due = nextTick {
                if ts >= due { tick(now: ts) }
            } else {
                nextTick = ts + 1
            }
        }
        lastTime = max(lastTime, ts)
        sink.send(core.handle(report), at: ts)
    }

    public func tick(now: Double) {
        lastTime = max(lastTime, now)
        nextTick = now + 1
        sink.send(core.tick(now: now, radio: counters?.snapshot, dropped: sink.dropped, brokerReconnects: sink.reconnects), at: now)
    }

    /// The broker came (back): status online, telemetry, then the current state with the next advertisements.
    public func brokerConnected() {
        core.brokerReconnected()
        sink.send([core.onlineMessage, core.telemetry(now: lastTime, radio: counters?.snapshot, dropped: sink.dropped,
                                                         brokerReconnects: sink.reconnects)], at: lastTime)
    }

    /// Final tick, then offline status, flush and disconnect.
    public func finish() async {
        sink.send(core.tick(now: lastTime, radio: counters?.snapshot, dropped: sink.dropped, brokerReconnects: sink.reconnects),
                  at: lastTime)
        await sink.shutdown(final: core.offlineMessage, at: lastTime)
    }

    public var scanTable: ScanTable { core.scanTable }
    public var stats: AgentCore.Stats { core.stats }
    public var now: Double { lastTime }
}
