import Foundation
import RoomcastAdvertising
import RoomcastHCI
import RoomcastHTTP
import RoomcastMQTT
import Shared
import RoomcastLogging

/// The running edge agent: a radio source feeding the agent core, whose
/// messages go to a sink (broker or `--dry-run`). `run()` returns when the
/// source ends (end of a replay) or after `stop()`; either way it publishes
/// the offline status, flushes and disconnects first.
public final class EdgeAgentService: Sendable {
    public let settings: AgentSettings
    private let decoder: AdvertisementDecoder
    private let source: any RadioSource
    private let sink: any AgentSink
    private let mqtt: MQTTClient?
    private let clock: any TimeSource
    private let logger: Logger
    private let isReplay: Bool
    /// Called with the scan table after each tick (for `edge-agent scan`).
    private let onTick: (@Sendable (ScanTable, Double) -> Void)?
    /// Stamp a replay's reports with the time they are handled instead of their
    /// capture time: a capture replayed (in real time or at a factor) to a live
    /// aggregator then looks like a live node on the aggregator's clock.
    private let rebaseReplayToNow: Bool
    /// The optional listener for `/metrics` and `/healthz` (`http.listen`).
    private let http: HTTPConfig?

    public init(settings: AgentSettings, decoder: AdvertisementDecoder, source: any RadioSource, sink: any AgentSink,
                mqtt: MQTTClient?, clock: any TimeSource = SystemTimeSource(), logger: Logger,
                rebaseReplayToNow: Bool = false, http: HTTPConfig? = nil, onTick: (@Sendable (ScanTable, Double) -> Void)? = nil) {
        self.rebaseReplayToNow = rebaseReplayToNow
        self.http = http
        self.settings = settings
        self.decoder = decoder
        self.source = source
        self.sink = sink
        self.mqtt = mqtt
        self.clock = clock
        self.logger = logger
        self.onTick = onTick
        isReplay = source.spec.isReplay
    }

    /// Runs until the source ends or `stop()` is called. Throws when the radio cannot start
    /// (adapter absent, permission, ...), with a message that says how to fix it, and when it
    /// stops on an error it cannot recover from (a live adapter that gives up, a capture corrupt
    /// part-way), once what was read before has been published: the agent exits with a failure,
    /// so its supervisor restarts it (systemd's `Restart=on-failure`) and a replay says the
    /// capture is bad.
    public func run() async throws(RadioError) -> AgentCore.Stats {
        mqtt?.start()
        try await source.start()
        var reports = source.reports.makeAsyncIterator()
        // A replay's clock starts at its first packet; a live radio's is now (never wait for a first report).
        var first = isReplay ? await reports.next() : nil
        let rebase = isReplay && rebaseReplayToNow
        if rebase { first?.timestamp = clock.now() }
        let start = isReplay ? (first?.timestamp ?? clock.now()) : clock.now()
        let core = AgentCore(settings: settings, decoder: decoder, startTime: start)
        let runtime = AgentRuntime(core: core, sink: sink, counters: source.counters, ticksFromReports: isReplay, startTime: start,
                                   elapsed: isReplay ? nil : BootTimeSource(), logger: logger)
        runtime.start(now: start, listening: source.isListening)
        logger.info("edge agent running", metadata: ["node": settings.node, "source": source.spec.description])
        let listener = startListener(runtime: runtime)
        defer { listener?.shutdown() }

        let connectionWatcher = Task { [mqtt] in
            guard let mqtt else { return }
            for await event in mqtt.connectionEvents {
                switch event {
                case .connected:
                    // The client logs it ("mqtt connected", "mqtt reconnected"); its lines name the broker.
                    runtime.brokerConnected()
                case .disconnected, .connectFailed:
                    // The client logs both ("mqtt connection lost", "mqtt connect failed"), with
                    // why and when it tries again; scanning goes on meanwhile.
                    break
                }
            }
        }
        // Every second while there is a broker and the radio listens, whatever it hears (a replay
        // paced for a broker too): the aggregator takes a node that stops as missing, not silent
        // (`NodeLiveness`).
        let heartbeats = Task { [mqtt, clock] in
            guard let mqtt else { return }
            while !Task.isCancelled {
                do { try await Task.sleep(for: .seconds(NodeHeartbeat.interval)) } catch { break }
                // Only over a live link: one sent into an outage says nothing, and would count as dropped.
                if mqtt.isConnected { runtime.heartbeat(now: clock.now()) }
            }
        }
        let ticker = Task { [isReplay, clock, onTick, source] in
            guard !isReplay || onTick != nil else { return }
            while !Task.isCancelled {
                // Cancelled while asleep: no tick after the run's final one (`finish`).
                do { try await Task.sleep(for: .seconds(1)) } catch { break }
                if !isReplay {
                    let now = clock.now()
                    // A radio closed for longer than a reopen takes makes the node offline.
                    runtime.radio(listening: source.isListening, now: now)
                    runtime.tick(now: now)
                }
                if let onTick { onTick(runtime.scanTable, runtime.now) }
            }
        }

        if let first { runtime.handle(first) }
        // A live radio's reports are handled on its reader thread once the first batches are (see
        // `BoundedStream.deliverDirectly`): one thread woken per burst instead of two. A replay's
        // are handled here.
        var direct = isReplay
        while let batch = await reports.nextBatch() {
            for var report in batch {
                if rebase { report.timestamp = clock.now() }
                runtime.handle(report)
            }
            if !direct {
                direct = source.reports.deliverDirectly { batch in
                    for report in batch { runtime.handle(report) }
                }
            }
        }
        // Not awaited: its `onTick` may be stuck writing to a terminal that stopped reading (`scan`
        // into a paused pager); the runtime takes no tick after its final one.
        ticker.cancel()
        heartbeats.cancel()
        await runtime.finish()
        // The client's events end with its shutdown (in `finish`): what it reported last is
        // handled before the stop is logged, within 2 s whatever happens.
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await connectionWatcher.value }
            group.addTask { try? await Task.sleep(for: .seconds(2)) }
            await group.next()
            connectionWatcher.cancel()  // ends its `for await`, and so the child waiting on it
            group.cancelAll()
        }
        await source.shutdown()
        let stats = runtime.stats
        if let notice = source.notice { logger.warning("\(notice)", metadata: ["source": "\(source.spec)"]) }
        logger.info("edge agent stopped", metadata: ["reports": "\(stats.reports)", "readings": "\(stats.readings)",
                                                     "beacons.evicted": "\(stats.evicted)"])
        if let error = source.terminationError { throw error }
        return stats
    }

    /// Starts `/metrics` and `/healthz` when `http.listen` is set. A listener that cannot start
    /// (port in use) is reported and tried again while the agent scans on: the radio matters more
    /// than its metrics.
    private func startListener(runtime: AgentRuntime) -> AgentHTTP? {
        guard let http, let configuration = HTTPServer.Configuration(http) else { return nil }
        let (settings, source, mqtt) = (settings, source, mqtt)
        let listener = AgentHTTP(configuration: configuration, config: http, sample: {
            let m = runtime.metrics
            return AgentHTTP.Sample(node: settings.node, stats: m.stats, advertisementRate: m.advertisementRate,
                                    trackedBeacons: m.trackedBeacons, maxTrackedBeacons: settings.maxTrackedBeacons,
                                    radio: source.counters.snapshot, mqttConnected: mqtt?.isConnected,
                                    mqttReconnects: mqtt?.reconnects ?? 0, mqttPublishFailures: mqtt?.publishFailures ?? 0)
        }, logger: logger)
        do {
            // The server says "http listening" itself, now or once a retry succeeds.
            try listener.server.startOrKeepTrying()
        } catch {
            logger.error("cannot start the metrics listener", metadata: ["error": "\(error)"])
            return nil
        }
        if http.exposesReads() {
            logger.warning("/metrics is readable from the network without a token",
                           metadata: ["http.listen": http.listen ?? "", "hint": "\(HTTPConfig.exposureHint)"])
        }
        return listener
    }

    /// Ends `run()` gracefully (idempotent).
    public func stop() async {
        await source.shutdown()
    }
}
