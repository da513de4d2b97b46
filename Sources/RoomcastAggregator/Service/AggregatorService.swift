import Foundation
import RoomcastFusion
import RoomcastMQTT
import Shared
import Synchronization
import RoomcastLogging

/// The live aggregator: subscribes to the nodes' readings and status (and its
/// own retained output, to resume after a restart), feeds the core, and
/// publishes while it is the active instance. `run()` returns after `stop()`.
public final class AggregatorService<Engine: PresenceEstimator & Sendable>: Sendable {
    public let runtime: AggregatorRuntime<Engine>
    private let mqtt: MQTTClient
    private let topics: Topics
    private let discoveryFilter: String?
    private let extraFilters: [String]
    private let clock: any TimeSource
    private let logger: Logger
    private let tickInterval: Double
    private let stopSignal = AsyncStream<Void>.makeStream()
    private let makeStatusGuard: (@Sendable () throws -> MQTTClient)?
    private let http: AggregatorHTTP?

    /// `statusGuard` (hot standby): makes an unstarted client whose Last Will sets the site status
    /// offline; the service keeps one connected while `AggregatorRuntime.wantsStatusGuard`.
    public init(runtime: AggregatorRuntime<Engine>, mqtt: MQTTClient, topics: Topics, discoveryFilter: String?,
                extraFilters: [String] = [], clock: any TimeSource = SystemTimeSource(), tickInterval: Double = 0.5,
                statusGuard: (@Sendable () throws -> MQTTClient)? = nil, http: AggregatorHTTP? = nil, logger: Logger) {
        self.makeStatusGuard = statusGuard
        self.http = http
        self.runtime = runtime
        self.mqtt = mqtt
        self.topics = topics
        self.discoveryFilter = discoveryFilter
        self.extraFilters = extraFilters
        self.clock = clock
        self.tickInterval = tickInterval
        self.logger = logger
    }

    /// Every subscription, re-sent by the client after each reconnect. The retained state comes
    /// first: the broker sends a subscription's retained messages before anything published
    /// after it, so a beacon's retained presence is read before its first reading, which would
    /// otherwise resume it from the state file (`AggregatorCore.pendingPlacements`) however much
    /// newer the broker's copy. The drain marker's topic comes last.
    var filters: [String] {
        [topics.allNodeStatus, topics.allPresence, topics.aggregatorCalibration, topics.aggregatorLearnState, runtime.leaseTopic]
            + (runtime.instanceTopic == nil ? [] : [topics.aggregatorInstance("+")])
            + (discoveryFilter.map { [$0] } ?? []) + runtime.leftoverFilters
            + (runtime.homeAssistantStatusTopic.map { [$0] } ?? [])
            + [topics.allNodeBeacons, topics.allNodeHeartbeats, topics.aggregatorLearn] + extraFilters + [runtime.syncTopic]
    }

    public func run() async {
        // Remembered before the client starts, so every one is sent at each (re)connect, where a
        // refusal is logged with the filter: none is ever answered to this call instead.
        for f in filters { try? await mqtt.subscribe(f, qos: .atLeastOnce) }
        mqtt.start()
        let sender = Task { await self.sendQueued() }
        let inbound = Task { [mqtt, runtime, clock] in
            if mqtt.configuration.batchInbound {
                await runtime.consume(mqtt.inboundBatches, clock: clock) { out, active in self.enqueue(out, active: active) }
            } else {
                await runtime.consume(mqtt.messages, clock: clock) { out, active in self.enqueue(out, active: active) }
            }
        }
        let ticker = Task { [runtime, clock, tickInterval, mqtt, http] in
            // No tick before the first connection (subscriptions acknowledged): what the first
            // tick announces (online status, discovery) would be lost, and a standby must have
            // read the retained lease before it may take it.
            while !Task.isCancelled {
                do { try await mqtt.waitUntilConnected(timeout: .seconds(60)); break } catch {
                    try? await Task.sleep(for: .seconds(1))
                }
            }
            var inboundDrops = DropReport()
            var outboundDrops = DropReport()
            var pushes = Pacer(interval: 1)
            let standby = await runtime.standbyEnabled
            while !Task.isCancelled {
                if standby { await runtime.leaseSubscription(refused: mqtt.isRefused(runtime.leaseTopic)) }
                let now = await runtime.tick(clock: clock) { out, active in self.enqueue(out, active: active) }
                // Open dashboards get the state once a second; nobody watching costs nothing.
                if let http, http.hasWatchers, pushes.due(now: now) {
                    http.push(await runtime.dashboardSnapshot(now: now, connected: mqtt.isConnected))
                }
                await self.updateStatusGuard(wanted: await runtime.wantsStatusGuard)
                // Readings the inbound buffer could not hold are lost to fusion; output the outbound
                // queue could not hold (a broker that stopped acknowledging) is lost to subscribers.
                if let line = inboundDrops.due(dropped: mqtt.droppedInbound, now: now) {
                    self.logger.warning("inbound messages dropped: the aggregator is behind", metadata: [
                        "mqtt.dropped_inbound": "\(line.total)", "mqtt.dropped_since_last": "\(line.since)"])
                }
                if let line = outboundDrops.due(dropped: Int(clamping: self.outbound.dropped), now: now) {
                    self.logger.warning("outbound queue full; output dropped", metadata: [
                        "dropped": "\(line.total)", "dropped_since_last": "\(line.since)", "queued": "\(self.outbound.count)"])
                }
                try? await Task.sleep(for: .seconds(tickInterval))
            }
        }
        let events = Task { [mqtt, runtime, clock] in
            for await e in mqtt.connectionEvents {
                switch e {
                case .connected:
                    // The client logs it ("mqtt connected", "mqtt reconnected"); its lines name the broker.
                    await runtime.brokerConnected(clock: clock)
                case .disconnected(let why):
                    // The client's own end at a stop is no lost connection.
                    if case .shutDown = why { continue }
                    // The client logs it ("mqtt connection lost"), with why and when it tries again.
                    await runtime.brokerDisconnected()
                case .connectFailed:
                    // The client logs it ("mqtt connect failed"), with why and when it tries again.
                    break
                }
            }
        }
        for await _ in stopSignal.stream { break }
        http?.shutdown()
        ticker.cancel()
        await ticker.value
        inbound.cancel()
        // What was decided goes out before the final messages; a chunk the broker does not
        // acknowledge within `waitsWhenStopping` waits now is given up.
        stopping.store(true, ordering: .releasing)
        outbound.finish()
        await sender.value
        await runtime.persistLearnedAtStop(now: clock.now())
        var final = await runtime.stopMessages()
        // With the guard armed the site status goes out on the guard's connection, whose Last
        // Will says the same: sent on the main connection, a status that cannot be sent (a full
        // queue, a link down) would be followed by the guard's clean disconnect, which cancels
        // its will, and the site would stay `online`.
        // A guard that is not connected (its account missing on the broker, or still connecting)
        // has no will to fire: the status then goes on the main connection.
        let guardClient = statusGuard.withLock { $0 }
        let guardCarriesStatus = guardClient?.isConnected == true
        let siteStatus = guardCarriesStatus ? final.last { $0.topic == topics.aggregatorStatus } : nil
        if guardCarriesStatus { final.removeAll { $0.topic == topics.aggregatorStatus } }
        for m in final.dropLast() { try? mqtt.publish(Self.mqttMessage(m)) }
        await mqtt.shutdown(publishing: final.last.map(Self.mqttMessage), timeout: .seconds(3))
        if let guardClient {
            statusGuard.withLock { $0 = nil }
            // Confirmed, a clean disconnect; else it closes without one, and its will fires.
            await guardClient.shutdown(publishing: siteStatus.map(Self.mqttMessage), timeout: .seconds(2))
            logger.info("status guard disarmed")
        }
        events.cancel()
        logger.info("aggregator stopped")
    }

    private let statusGuard = Mutex<MQTTClient?>(nil)

    /// Connects or cleanly disconnects the status guard. Only the ticker and the end of `run()` call
    /// this, one after the other, so a guard is never made twice.
    private func updateStatusGuard(wanted: Bool) async {
        guard let makeStatusGuard else { return }
        let current = statusGuard.withLock { $0 }
        if wanted, current == nil {
            do {
                let client = try makeStatusGuard()
                // If the guard's own link drops, its will marks the site offline although this
                // instance lives: say online again each time the guard is back, on the guard's own
                // connection, so nothing it says can reach the broker after its will.
                Task { [runtime, topics, self] in
                    for await event in client.connectionEvents {
                        // Not once stopping: the stop's `offline` may already be on its way.
                        guard case .connected = event, !self.stopping.load(ordering: .acquiring), await runtime.isActive else { continue }
                        try? client.publish(MQTTMessage(topic: topics.aggregatorStatus, string: "online", qos: .atLeastOnce, retain: true))
                    }
                }
                client.start()
                statusGuard.withLock { $0 = client }
                logger.info("status guard armed: no other aggregator instance is alive")
            } catch {
                logger.error("cannot create the status guard connection", metadata: ["error": "\(error)"])
            }
        } else if !wanted, let current {
            statusGuard.withLock { $0 = nil }
            await current.shutdown(timeout: .seconds(2))
            logger.info("status guard disarmed")
        }
    }

    /// Ends `run()` gracefully (idempotent).
    public func stop() {
        stopSignal.continuation.yield()
        stopSignal.continuation.finish()
    }

    /// Everything published, in the order it was decided (`OutboundQueue`).
    private let outbound = OutboundQueue()
    private let stopping = Atomic<Bool>(false)
    /// One wait for the broker's acknowledgements while the client's queue is full; waits
    /// repeat until it acknowledges, except once stopping.
    private static var flushWait: Duration { .milliseconds(500) }
    /// Once stopping, output the broker has not acknowledged after this many waits (2 s) is given up.
    private static var waitsWhenStopping: Int { 4 }

    /// Queues what the runtime decided: lease and liveness messages always, everything else
    /// only from the active instance.
    private func enqueue(_ messages: [OutboundMessage], active: Bool) {
        outbound.appendControl(messages.filter { runtime.isControlTopic($0.topic) })
        guard active else { return }
        // What does not fit is counted, and logged by the ticker. Once stopping, the queue is
        // closed: what is decided now is left for the stop's own messages, and not counted.
        outbound.append(messages.filter { !runtime.isControlTopic($0.topic) })
    }

    /// Sends the queue in order. A refresh or a (re)announcement can be thousands of QoS 1
    /// messages, more than the client keeps unacknowledged: when its queue is full this waits
    /// for the broker's acknowledgements and goes on, rather than dropping the rest.
    private func sendQueued() async {
        while let batch = await outbound.next() {
            sendControl()
            var rest = batch[...]
            // Waits of `flushWait` for acknowledgements so far: short, so that the control lane
            // goes out between them.
            var waits = 0
            while !rest.isEmpty {
                rest = send(rest)
                guard !rest.isEmpty else { break }
                sendControl()
                if await mqtt.flush(timeout: Self.flushWait) { continue }
                sendControl()
                waits += 1
                if stopping.load(ordering: .acquiring) && waits >= Self.waitsWhenStopping {
                    logger.warning("the broker is not acknowledging; output not sent", metadata: [
                        "messages": "\(rest.count)", "mqtt.topic": "\(rest.first!.topic)"])
                    break
                }
                if waits % 20 == 0 {
                    logger.warning("the broker is not acknowledging; output waits", metadata: [
                        "messages": "\(rest.count + outbound.count)", "waiting_s": "\(waits / 2)"])
                }
            }
        }
    }

    /// Sends the control lane. A message the client's QoS 1 queue has no room for (a refresh
    /// fills it) goes at QoS 0: a lease is renewed again within a third of its duration, and a
    /// liveness message is sent again at every connection.
    private func sendControl() {
        for m in outbound.takeControl() {
            do { try mqtt.publish(Self.mqttMessage(m)) } catch {
                guard case .outboundQueueFull = error else { continue }
                var urgent = Self.mqttMessage(m)
                urgent.qos = .atMostOnce
                try? mqtt.publish(urgent)
            }
        }
    }

    /// Sends `messages` in order; returns those not sent because the outbound queue is full
    /// (other failures are logged and the message skipped: it is retried by the next refresh).
    private func send(_ messages: ArraySlice<OutboundMessage>) -> ArraySlice<OutboundMessage> {
        let guardClient = statusGuard.withLock { $0 }
        for i in messages.indices {
            let m = messages[i]
            // While a guard is armed the site status goes through it: a message on another
            // connection could be read by the broker after the guard's will when this process dies.
            if m.topic == topics.aggregatorStatus, let guardClient, (try? guardClient.publish(Self.mqttMessage(m))) != nil { continue }
            do { try mqtt.publish(Self.mqttMessage(m)) } catch {
                switch error {
                case .outboundQueueFull: return messages[i...]
                case .notConnected, .shutDown, .connectionLost:
                    // The reconnect's refresh publishes the state in force again.
                    logger.debug("publish failed", metadata: ["mqtt.topic": m.topic, "error": "\(error)"])
                default:
                    // A message the broker or the client will never take (too large for the
                    // broker's maximum packet size, say): that topic is never updated, so say so.
                    let (admit, suppressed) = publishFailureLog.admit(Self.failureKind(error), now: clock.now())
                    if admit {
                        logger.warning("publish failed; the message is skipped", metadata: [
                            "mqtt.topic": m.topic, "error": "\(error)", "suppressed": "\(suppressed)"])
                    }
                }
            }
        }
        return []
    }

    /// Publish failures logged at most once a minute per kind.
    private let publishFailureLog = RateLimitedLog(interval: 60)

    static func failureKind(_ error: MQTTError) -> String {
        switch error {
        case .payloadTooLarge: "payload_too_large"
        case .invalidTopic: "invalid_topic"
        case .library(let call, let code, _): "\(call):\(code)"
        default: "other"
        }
    }

    static func mqttMessage(_ m: OutboundMessage) -> MQTTMessage {
        MQTTMessage(topic: m.topic, payload: m.payload, qos: m.qos == 0 ? .atMostOnce : .atLeastOnce, retain: m.retain)
    }
}
