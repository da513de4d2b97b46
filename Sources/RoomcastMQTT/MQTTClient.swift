internal import CMosquitto
import Dispatch
import Foundation
import Shared
import Synchronization
import RoomcastLogging

/// An MQTT client over libmosquitto: connects with retry and capped exponential
/// backoff (the first connect included), re-sends its subscriptions after every
/// reconnect, and hands inbound messages to a bounded stream.
///
/// The client owns one mosquitto handle and one thread that drives it
/// (`mosquitto_loop`), so blocking socket work never runs on the cooperative
/// pool. Call `shutdown()` when done: it is idempotent and joins that thread.
/// See docs/mqtt-client.md for the behaviour in detail.
public final class MQTTClient: Sendable {
    /// The settings this client was built with.
    public let configuration: MQTTClientConfiguration
    /// Inbound messages of every subscription; keeps the newest `inboundBufferSize`, counts the rest in
    /// `droppedInbound`. One consumer: iterate it from a single task.
    public let messages: AsyncStream<MQTTMessage>
    /// Inbound messages in batches, when `configuration.batchInbound` (then `messages` stays
    /// empty); same bound and drop count. One consumer.
    public let inboundBatches: MQTTInboundBatches
    /// Connection changes: connected, disconnected, each failed attempt (newest 256 kept). One consumer.
    public let connectionEvents: AsyncStream<MQTTConnectionEvent>

    let logger: Logger
    let endpoint: String
    let messageSink: AsyncStream<MQTTMessage>.Continuation
    let inboundQueue: MQTTInboundBatches.Queue
    /// Messages read in the current turn of the loop thread, handed over at its end
    /// (`batchInbound`). Only the loop thread (and the callbacks it runs) touches it.
    nonisolated(unsafe) var inboundTurn: [MQTTMessage] = []
    let eventSink: AsyncStream<MQTTConnectionEvent>.Continuation
    let state: Mutex<State>
    /// The mosquitto handle. It is destroyed only while holding `handleAlive`
    /// (by the loop thread as it ends, or by shutdown/deinit if it never ran);
    /// other threads hold that lock across their C call. The loop thread itself
    /// and the callbacks it runs use the handle without the lock.
    nonisolated(unsafe) let handle: OpaquePointer
    let handleAlive = Mutex(true)
    /// Wakes the loop thread out of a backoff wait (shutdown).
    let wakeup = DispatchSemaphore(value: 0)

    let reconnectCount = Atomic<Int>(0)
    /// The lines of connections that do not hold (`stableConnection`): lost and made again at
    /// every cycle while two clients with one id displace each other, said ever further apart.
    let shortConnectionLog = RateLimitedLog(interval: 10)
    let publishFailureCount = Atomic<Int>(0)
    let droppedInboundCount = Atomic<Int>(0)
    let receivedInboundCount = Atomic<Int>(0)
    let connectFailureCount = Atomic<Int>(0)
    let refusals = Mutex(PublishRefusals())
    /// libmosquitto's warnings and errors, each said at once and then ever further apart: a failed
    /// TLS handshake logs one at every retry (an expired broker certificate: every 30 s, for good).
    let libraryLog = RateLimitedLog(interval: 10)
    /// Maps a refused topic to the family it is counted under (e.g. beacon ids replaced by `+`).
    let refusalFamily: @Sendable (String) -> String

    /// Successful connections after the first one.
    public var reconnects: Int { reconnectCount.load(ordering: .relaxed) }
    /// `publish` calls that threw (not connected, queue full, invalid topic, shut down).
    public var publishFailures: Int { publishFailureCount.load(ordering: .relaxed) }
    /// Inbound messages dropped because the consumer of `messages` fell behind.
    public var droppedInbound: Int { droppedInboundCount.load(ordering: .relaxed) }
    /// Inbound messages received from the broker (delivered or dropped).
    public var receivedInbound: Int { receivedInboundCount.load(ordering: .relaxed) }
    /// Connection attempts that failed.
    public var connectFailures: Int { connectFailureCount.load(ordering: .relaxed) }
    /// QoS 1 publishes the broker refused (MQTT 5 PUBACK reason ≥ 0x80), per topic family. QoS 0
    /// and MQTT 3.1.1 publishes get no answer, so their refusals are not seen.
    public var publishRefusals: PublishRefusals { refusals.withLock { $0 } }

    /// The libmosquitto version linked at run time, e.g. "2.0.11".
    public static var libraryVersion: String {
        _ = Mosquitto.initialised
        return Mosquitto.version
    }

    /// True while connected with every subscription in place.
    public var isConnected: Bool { state.withLock { $0.phase == .connected } }

    /// Whether the broker refused `filter` among the subscriptions sent at the current
    /// connection's start (its ACL denies it; or later, for one whose wait ran out): nothing
    /// published on it reaches this client until a later connection is granted it. A refusal
    /// answered to a `subscribe` call is that call's error instead.
    public func isRefused(_ filter: String) -> Bool { state.withLock { $0.refusedFilters.contains(filter) } }

    /// Creates the client and its mosquitto handle; nothing touches the network until `start()`.
    /// `refusalFamily` names the family a refused topic is counted under (default: the topic).
    public init(configuration: MQTTClientConfiguration, logger: Logger,
                refusalFamily: @escaping @Sendable (String) -> String = { $0 }) throws(MQTTError) {
        self.refusalFamily = refusalFamily
        let problems = configuration.validate()
        guard problems.isEmpty else { throw .invalidConfiguration(problems) }
        _ = Mosquitto.initialised
        self.endpoint = configuration.endpoint
        let handle = try Self.makeHandle(configuration, endpoint: configuration.endpoint)
        self.handle = handle
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "mqtt.broker"] = configuration.endpoint
        if !configuration.clientID.isEmpty { logger[metadataKey: "mqtt.client_id"] = configuration.clientID }
        self.logger = logger
        (messages, messageSink) = AsyncStream.makeStream(of: MQTTMessage.self,
                                                         bufferingPolicy: .bufferingNewest(configuration.inboundBufferSize))
        inboundQueue = MQTTInboundBatches.Queue(capacity: configuration.inboundBufferSize,
                                                byteCapacity: configuration.inboundBufferBytes)
        inboundBatches = MQTTInboundBatches(queue: inboundQueue)
        (connectionEvents, eventSink) = AsyncStream.makeStream(of: MQTTConnectionEvent.self,
                                                               bufferingPolicy: .bufferingNewest(256))
        state = Mutex(State(subscriptions: []))
        installCallbacks()
    }

    deinit {
        // Backstop only: a started client is kept alive by its loop thread until
        // shutdown, so this destroys just a handle that never ran.
        handleAlive.withLock { alive in
            if alive { mosquitto_destroy(handle); alive = false }
        }
        eventSink.finish()
        messageSink.finish()
        inboundQueue.finish()
    }

    /// Starts connecting in the background; failures are retried with backoff until `shutdown()`.
    public func start() {
        let go = state.withLock { s in
            guard !s.started, !s.stopping else { return false }
            s.started = true
            return true
        }
        guard go else { return }
        logger.info("mqtt client starting", metadata: [
            "mqtt.protocol": configuration.protocolVersion.rawValue,
            "mqtt.tls": configuration.tls == nil ? "off" : "on",
            "mqtt.username": configuration.username ?? "-",
            "mqtt.libmosquitto": Mosquitto.version,
        ])
        let thread = Thread { [self] in self.runLoop() }
        thread.name = "mqtt-loop"
        thread.start()
    }

    /// Returns once connected (subscriptions acknowledged); throws at once on a
    /// failure retrying will not fix (credentials, TLS trust), else `.timedOut` with the last failure.
    public func waitUntilConnected(timeout: Duration) async throws(MQTTError) {
        let id = state.withLock { s in s.allocateID() }
        let timer = WaitTimer()
        defer { timer.cancel() }
        let result: Result<Void, MQTTError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Result<Void, MQTTError>, Never>) in
                let immediate: Result<Void, MQTTError>? = state.withLock { s in
                    if s.phase == .connected { return .success(()) }
                    if s.stopping || s.exited { return .failure(.shutDown) }
                    if let e = s.lastError, e.isPermanent { return .failure(e) }
                    if Task.isCancelled { return .failure(.cancelled) }
                    s.connectWaiters[id] = c
                    return nil
                }
                if let immediate {
                    c.resume(returning: immediate)
                } else {
                    timer.start(after: timeout) { [weak self] in
                        self?.resolveConnectWaiter(id) { s in
                            .failure(.timedOut(seconds: timeout.seconds, lastError: s.lastError?.description))
                        }
                    }
                }
            }
        } onCancel: {
            resolveConnectWaiter(id) { _ in .failure(.cancelled) }
        }
        if case .failure(let e) = result { throw e }
    }

    /// Sends a message without blocking. Throws `.notConnected` while there is no
    /// connection (the caller decides whether that message matters); every throw is counted in `publishFailures`.
    public func publish(_ message: MQTTMessage) throws(MQTTError) {
        do {
            try send(message, whileStopping: false)
        } catch {
            publishFailureCount.add(1, ordering: .relaxed)
            throw error
        }
    }

    /// Remembers a subscription and, when connected, sends it and waits (up to `connectTimeout`) for the
    /// broker's acknowledgement; throws `.subscriptionRejected` when the broker refuses it.
    /// Remembered subscriptions are sent again after every reconnect.
    ///
    /// Returning means the filter is remembered: granted, or to be sent again at the next connect.
    /// A connection lost before the acknowledgement, or a broker silent past the wait, returns
    /// too. Failing then would drop a filter the broker may still grant; a broker that stopped
    /// answering loses the connection to the keep-alive, and the reconnect sends the filter again.
    public func subscribe(_ filter: String, qos: MQTTQoS = .atLeastOnce) async throws(MQTTError) {
        guard !filter.isEmpty, mosquitto_sub_topic_check(filter) == Mosquitto.success else { throw .invalidTopic(filter) }
        let connected = try state.withLock { s throws(MQTTError) -> Bool in
            if s.stopping || s.exited { throw .shutDown }
            s.subscriptions.removeAll { $0.filter == filter }
            s.subscriptions.append(Subscription(filter: filter, qos: qos))
            return s.phase == .connected || s.phase.isSubscribing
        }
        guard connected else { return }
        var subscribeMid: Int32 = 0
        let (rc, err) = handleAlive.withLock { alive -> (Int32, Int32) in
            guard alive else { return (Int32(MOSQ_ERR_NO_CONN.rawValue), 0) }
            let rc = mosquitto_subscribe(handle, &subscribeMid, filter, Int32(qos.rawValue))
            return (rc, errno)
        }
        if rc == Int32(MOSQ_ERR_NO_CONN.rawValue) { return } // sent on the next connect
        guard rc == Mosquitto.success else {
            throw Mosquitto.error(rc, call: "mosquitto_subscribe", errnoValue: err, endpoint: endpoint,
                                  host: configuration.host, topic: filter)
        }
        let timeout = Duration.seconds(configuration.connectTimeout)
        let mid = subscribeMid
        let timer = WaitTimer()
        defer { timer.cancel() }
        let result: Result<Void, MQTTError> = await withCheckedContinuation { c in
            let early: Int32? = state.withLock { s in
                if let granted = s.earlySubscribeAcks.removeValue(forKey: mid) { return granted }
                s.subscribeWaiters[mid] = SubscribeWaiter(filter: filter, continuation: c)
                return nil
            }
            if let early {
                c.resume(returning: early >= 0x80 ? .failure(.subscriptionRejected(filter: filter)) : .success(()))
            } else {
                // Still remembered: see above.
                timer.start(after: timeout) { [weak self] in self?.subscribeWaitRanOut(mid) }
            }
        }
        if case .failure(let e) = result {
            state.withLock { s in s.subscriptions.removeAll { $0.filter == filter } }
            throw e
        }
    }

    /// Waits until no published message is pending: QoS 1 ones acknowledged, QoS 0 ones written
    /// out or lost with a connection (libmosquitto never re-sends those, so waiting on them would
    /// hold every later flush for good); false when `timeout` passed first. True therefore does
    /// not promise that a QoS 0 message arrived: publish at QoS 1 what must.
    public func flush(timeout: Duration) async -> Bool {
        let id = state.withLock { s in s.allocateID() }
        let timer = WaitTimer()
        defer { timer.cancel() }
        return await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let done = state.withLock { s in
                if s.pendingPublishes.isEmpty { return true }
                s.flushWaiters[id] = c
                return false
            }
            if done {
                c.resume(returning: true)
            } else {
                timer.start(after: timeout) { [weak self] in self?.resolveFlushWaiter(id, false) }
            }
        }
    }

    /// Stops the client: publishes `finalMessage` when connected (e.g. a retained
    /// `offline` status), waits up to `timeout` for outstanding QoS 1 messages,
    /// disconnects cleanly (so the broker does not send the Last Will), joins the
    /// loop thread and finishes both streams. Safe to call more than once.
    ///
    /// A final message that could not be queued or was not acknowledged in time may never
    /// reach the broker: then the connection is closed without DISCONNECT, so the broker
    /// publishes the Last Will, which says the same (a clean DISCONNECT cancels it, and a
    /// retained `online` stayed for good).
    public func shutdown(publishing finalMessage: MQTTMessage? = nil, timeout: Duration = .seconds(5)) async {
        let deadline = ContinuousClock.now + timeout + .seconds(1)
        // Marked under the handle's lock too: a message `send` hands to libmosquitto while the
        // stop begins then goes before the final message, or not at all (`send`).
        let (first, started, connected, inConnectCall) = handleAlive.withLock { _ in
            state.withLock { s in
                if s.stopping { return (false, s.started, false, false) }
                s.stopping = true
                let connected = s.phase == .connected || s.phase.isSubscribing
                s.drainOnStop = connected
                s.stopDeadline = deadline
                return (true, s.started, connected, s.inConnectCall)
            }
        }
        guard first else {
            await waitForExit()
            return
        }
        logger.info("mqtt client shutting down")
        guard started else {
            finishAfterLoop(wasConnected: false)
            return
        }
        if connected {
            var finalQueued = true
            if let finalMessage {
                do { try send(finalMessage, whileStopping: true) } catch {
                    finalQueued = false
                    logger.warning("mqtt final message not sent", metadata: ["mqtt.topic": finalMessage.topic, "mqtt.error": "\(error)"])
                }
            }
            let flushed = await flush(timeout: timeout)
            if !flushed {
                logger.warning("mqtt messages still unacknowledged at shutdown",
                               metadata: ["mqtt.pending": "\(state.withLock { $0.pendingPublishes.count })"])
            }
            if finalMessage != nil && !(finalQueued && flushed) {
                logger.warning("closing without DISCONNECT: the broker publishes the Last Will in place of the final message",
                               metadata: ["mqtt.will": "\(configuration.lastWill?.topic ?? "none")"])
                state.withLock { $0.stopDeadline = ContinuousClock.now }
            } else {
                handleAlive.withLock { alive in
                    if alive { _ = mosquitto_disconnect(handle) }
                }
            }
        }
        wakeup.signal()
        if inConnectCall {
            // The connect call cannot be interrupted, and its name lookup may take minutes: the
            // client ends now, with nothing sent (it never connected), and the loop thread
            // releases the handle when the call returns.
            finishClient(wasConnected: false)
            logger.info("mqtt client stopped while still resolving the broker's name (the lookup ends on its own)")
            return
        }
        await waitForExit()
        logger.info("mqtt client stopped")
    }

    // MARK: - Sending

    func send(_ message: MQTTMessage, whileStopping: Bool) throws(MQTTError) {
        guard message.payload.count <= 268_435_455 else {
            throw .payloadTooLarge(topic: message.topic, bytes: message.payload.count)
        }
        let limit = configuration.outboundQueueLimit, qos0Limit = configuration.outboundQoS0Limit
        let connection = try state.withLock { s throws(MQTTError) -> Int in
            if (s.stopping && !whileStopping) || s.exited { throw .shutDown }
            guard s.phase == .connected || s.phase.isSubscribing else { throw .notConnected }
            if message.qos == .atLeastOnce && s.pendingQoS1 >= limit { throw .outboundQueueFull(limit: limit) }
            if message.qos == .atMostOnce && s.pendingPublishes.count - s.pendingQoS1 >= qos0Limit {
                throw .outboundQueueFull(limit: qos0Limit)
            }
            return s.connection
        }
        var mid: Int32 = 0
        let (rc, err, stopped) = handleAlive.withLock { alive -> (Int32, Int32, Bool) in
            guard alive else { return (Int32(MOSQ_ERR_NO_CONN.rawValue), 0, false) }
            // Checked again where `shutdown` marks the stop: a message that passed the check
            // above as the stop began would be queued after the final one (a retained `online`
            // after the `offline` it must not outlive).
            if !whileStopping && state.withLock({ $0.stopping }) { return (0, 0, true) }
            let rc = message.payload.withUnsafeBytes { buf in
                mosquitto_publish(handle, &mid, message.topic, Int32(buf.count), buf.baseAddress,
                                  Int32(message.qos.rawValue), message.retain)
            }
            return (rc, errno, false)
        }
        if stopped { throw .shutDown }
        guard rc == Mosquitto.success else {
            throw Mosquitto.error(rc, call: "mosquitto_publish", errnoValue: err, endpoint: endpoint,
                                  host: configuration.host, topic: message.topic, payloadBytes: message.payload.count)
        }
        if let reason = state.withLock({ s in s.recordPublished(mid: mid, qos: message.qos, topic: message.topic, connection: connection) }) {
            didRefuse(topic: message.topic, reason: reason)
        }
    }

    // MARK: - Waiters

    func waitForExit() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let exited = state.withLock { s in
                if s.exited { return true }
                s.exitWaiters.append(c)
                return false
            }
            if exited { c.resume() }
        }
    }

    func resolveConnectWaiter(_ id: UInt64, _ result: (State) -> Result<Void, MQTTError>) {
        let found = state.withLock { s -> (CheckedContinuation<Result<Void, MQTTError>, Never>, Result<Void, MQTTError>)? in
            guard let c = s.connectWaiters.removeValue(forKey: id) else { return nil }
            return (c, result(s))
        }
        if let (c, r) = found { c.resume(returning: r) }
    }

    /// No SUBACK for `mid` within the wait: the call returns, and the SUBACK, should it come, is
    /// recognised as this subscription's.
    func subscribeWaitRanOut(_ mid: Int32) {
        let w = state.withLock { s -> SubscribeWaiter? in
            guard let w = s.subscribeWaiters.removeValue(forKey: mid) else { return nil }
            if s.lateSubscribeMids.count > 1024 { s.lateSubscribeMids.removeAll() }
            s.lateSubscribeMids[mid] = w.filter
            return w
        }
        w?.continuation.resume(returning: .success(()))
    }

    func resolveFlushWaiter(_ id: UInt64, _ result: Bool) {
        let w = state.withLock { s in s.flushWaiters.removeValue(forKey: id) }
        w?.resume(returning: result)
    }
}
