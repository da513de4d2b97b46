internal import CMosquitto
import Foundation
import Shared
import RoomcastLogging

// libmosquitto calls these from the loop thread (the log callback also from a
// publishing thread). They are nonisolated top-level functions: a closure
// formed in actor-isolated code would trap when called from a C thread. Each
// finds its client through the userdata pointer, copies what it needs and returns.

private func client(_ userdata: UnsafeMutableRawPointer?) -> MQTTClient? {
    guard let userdata else { return nil }
    // Unretained: the loop thread holds the client strongly for as long as callbacks can run.
    return Unmanaged<MQTTClient>.fromOpaque(userdata).takeUnretainedValue()
}

nonisolated func mqttOnConnect(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ code: Int32) {
    client(userdata)?.didReceiveConnack(code: Int(code))
}

nonisolated func mqttOnDisconnect(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ rc: Int32) {
    client(userdata)?.logger.debug("mqtt socket closed", metadata: ["mqtt.rc": "\(rc)"])
    // An MQTT 5 broker's DISCONNECT carries a reason code (0x80 and up for an error); libmosquitto's
    // own codes are small. Without it the closed socket read as "not connected".
    if rc >= 0x80 { client(userdata)?.didReceiveDisconnect(reason: Int(rc)) }
}

nonisolated func mqttOnMessage(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?,
                               _ message: UnsafePointer<mosquitto_message>?) {
    guard let owner = client(userdata), let m = message?.pointee, let topic = m.topic else { return }
    let payload: [UInt8] = if m.payloadlen > 0, let bytes = m.payload {
        Array(UnsafeRawBufferPointer(start: bytes, count: Int(m.payloadlen)))
    } else {
        []
    }
    owner.didReceive(MQTTMessage(topic: String(cString: topic), payload: payload,
                                 qos: m.qos >= 1 ? .atLeastOnce : .atMostOnce, retain: m.retain))
}

/// The MQTT 5 form of on_publish (libmosquitto calls it under 3.1.1 too, with reason 0): a QoS 1
/// PUBACK's reason code says whether the broker took the message or refused it (ACL: 0x87).
nonisolated func mqttOnPublish(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ mid: Int32,
                               _ reason: Int32, _ properties: OpaquePointer?) {
    client(userdata)?.didPublish(mid: mid, reason: Int(reason))
}

nonisolated func mqttOnSubscribe(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ mid: Int32,
                                 _ count: Int32, _ granted: UnsafePointer<Int32>?) {
    let first: Int32 = if count > 0, let granted { granted[0] } else { 0x80 }
    client(userdata)?.didSubscribe(mid: mid, granted: first)
}

nonisolated func mqttOnLog(_ mosq: OpaquePointer?, _ userdata: UnsafeMutableRawPointer?, _ level: Int32,
                           _ text: UnsafePointer<CChar>?) {
    guard let owner = client(userdata), let text else { return }
    owner.didLog(level: level, text: text)
}

extension MQTTClient {
    func installCallbacks() {
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_callback_set(handle, mqttOnConnect)
        mosquitto_disconnect_callback_set(handle, mqttOnDisconnect)
        mosquitto_message_callback_set(handle, mqttOnMessage)
        mosquitto_publish_v5_callback_set(handle, mqttOnPublish)
        mosquitto_subscribe_callback_set(handle, mqttOnSubscribe)
        mosquitto_log_callback_set(handle, mqttOnLog)
    }

    /// The broker closed the connection with an MQTT 5 reason code: the failure the loop reports.
    func didReceiveDisconnect(reason code: Int) {
        let failure = MQTTError.connectionLost(endpoint: endpoint, detail: Mosquitto.disconnectReason(code))
        state.withLock { s in if s.attemptError == nil { s.attemptError = failure } }
    }

    func didReceiveConnack(code: Int) {
        guard code == 0 else {
            let refusal = Mosquitto.connackError(code, endpoint: endpoint, username: configuration.username)
            state.withLock { $0.attemptError = refusal }
            return
        }
        let subscriptions = state.withLock { s -> [Subscription] in
            // From here the timeout counts the broker's silence (`pump`).
            s.phase = .subscribing(since: .now)
            return s.subscriptions
        }
        // Called on the loop thread, which owns the handle: no handleAlive lock needed.
        var mids: [Int32: String] = [:]
        for sub in subscriptions {
            var mid: Int32 = 0
            let rc = mosquitto_subscribe(handle, &mid, sub.filter, Int32(sub.qos.rawValue))
            if rc == Mosquitto.success {
                mids[mid] = sub.filter
            } else {
                logger.error("mqtt resubscribe failed", metadata: ["mqtt.topic": sub.filter, "mqtt.rc": "\(rc)"])
            }
        }
        let ready = state.withLock { s -> ReadyActions? in
            s.resubscribeMids = mids
            return mids.isEmpty ? becomeReady(&s) : nil
        }
        if let ready { perform(ready) }
    }

    struct ReadyActions {
        var isReconnect: Bool
        /// The connection before this one did not hold (`State.shortConnectionsInARow`).
        var afterShortConnection = false
        var waiters: [CheckedContinuation<Result<Void, MQTTError>, Never>]
    }

    func becomeReady(_ s: inout State) -> ReadyActions {
        s.phase = .connected
        s.lastError = nil
        s.connectedAt = ContinuousClock.now
        let again = s.everConnected
        s.everConnected = true
        let w = Array(s.connectWaiters.values)
        s.connectWaiters.removeAll()
        return ReadyActions(isReconnect: again, afterShortConnection: s.shortConnectionsInARow > 0, waiters: w)
    }

    func perform(_ ready: ReadyActions) {
        if ready.isReconnect { reconnectCount.add(1, ordering: .relaxed) }
        var metadata: Logger.Metadata = ["mqtt.subscriptions": "\(state.withLock { $0.subscriptions.count })"]
        let (admit, suppressed) = ready.afterShortConnection
            ? shortConnectionLog.admit("reconnected", now: ContinuousClock.now.secondsSinceStart) : (true, 0)
        if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
        if admit { logger.info(ready.isReconnect ? "mqtt reconnected" : "mqtt connected", metadata: metadata) }
        eventSink.yield(.connected)
        for w in ready.waiters { w.resume(returning: .success(())) }
    }

    func didSubscribe(mid: Int32, granted: Int32) {
        var rejected: String?
        let (ready, waiter) = state.withLock { s -> (ReadyActions?, SubscribeWaiter?) in
            if let filter = s.resubscribeMids.removeValue(forKey: mid) {
                // Noted before the connection is reported ready: what waits for it reads it then.
                if granted >= 0x80 {
                    rejected = filter
                    s.refusedFilters.insert(filter)
                }
                if s.resubscribeMids.isEmpty && s.phase.isSubscribing { return (becomeReady(&s), nil) }
                if s.phase.isSubscribing { s.phase = .subscribing(since: .now) }  // an answer: progress (`pump`)
                return (nil, nil)
            }
            if let w = s.subscribeWaiters.removeValue(forKey: mid) { return (nil, w) }
            // Late, after its `subscribe` returned: a refusal drops the filter it remembered.
            if let filter = s.lateSubscribeMids.removeValue(forKey: mid) {
                if granted >= 0x80 {
                    rejected = filter
                    s.refusedFilters.insert(filter)
                    s.subscriptions.removeAll { $0.filter == filter }
                }
                return (nil, nil)
            }
            // The SUBACK beat `subscribe` to registering its id; keep it for it (bounded, ids are 16-bit).
            if s.earlySubscribeAcks.count > 1024 { s.earlySubscribeAcks.removeAll() }
            s.earlySubscribeAcks[mid] = granted
            return (nil, nil)
        }
        if let rejected {
            logger.error("mqtt broker rejected a subscription", metadata: [
                "mqtt.topic": rejected, "mqtt.user": configuration.username ?? "(none)",
                "hint": "nothing on it reaches this program; check the broker's ACL for this user"])
        }
        if let waiter {
            waiter.continuation.resume(returning: granted >= 0x80 ? .failure(.subscriptionRejected(filter: waiter.filter)) : .success(()))
        }
        if let ready { perform(ready) }
    }

    func didReceive(_ message: MQTTMessage) {
        receivedInboundCount.add(1, ordering: .relaxed)
        guard configuration.batchInbound else {
            if case .dropped = messageSink.yield(message) {
                droppedInboundCount.add(1, ordering: .relaxed)
            }
            return
        }
        inboundTurn.append(message)
        if inboundTurn.count >= MQTTInboundBatches.maxTake { flushInbound() }
    }

    /// Hands the messages of this loop turn over in one step (loop thread only).
    func flushInbound() {
        guard !inboundTurn.isEmpty else { return }
        let batch = inboundTurn
        inboundTurn.removeAll(keepingCapacity: true)
        let dropped = inboundQueue.push(batch)
        if dropped > 0 { droppedInboundCount.add(dropped, ordering: .relaxed) }
    }

    func didPublish(mid: Int32, reason: Int) {
        let (waiters, refused) = state.withLock { $0.confirmPublished(mid: mid, reason: reason) }
        if let refused { didRefuse(topic: refused, reason: reason) }
        for w in waiters { w.resume(returning: true) }
    }

    /// Counts a refused publish and logs, at most once a minute, how many and where.
    func didRefuse(topic: String, reason: Int) {
        let family = refusalFamily(topic)
        let report = refusals.withLock { r -> PublishRefusals.Report? in
            r.record(family: family, reason: reason)
            return r.report(now: ContinuousClock.now.secondsSinceStart)
        }
        guard let report else { return }
        let user = configuration.username.map { "user '\($0)'" } ?? "anonymous clients"
        let hint = switch report.reason {
        case 0x87: "the broker's ACL does not let \(user) publish to these topics; allow them there (Roomcast's: deploy/mosquitto/roomcast.acl)"
        case 0x95: "these messages are larger than the broker takes (mosquitto's message_size_limit); Roomcast's messages need up to 64 KiB"
        default: "the broker refused these messages"
        }
        logger.warning("mqtt broker refused publishes", metadata: [
            "mqtt.refused": "\(report.sinceLast)", "mqtt.refused_total": "\(report.total)", "mqtt.topics": report.families,
            "mqtt.reason": PublishRefusals.describe(reason: report.reason), "mqtt.hint": hint,
        ])
    }

    func didLog(level: Int32, text: UnsafePointer<CChar>) {
        // MOSQ_LOG_INFO 1, NOTICE 2, WARNING 4, ERR 8, DEBUG 16.
        let mapped: Logger.Level = switch level {
        case 8: .error
        case 4: .warning
        case 2: .notice
        case 1: .info
        default: .trace
        }
        let isError = level == 8
        guard isError || mapped >= logger.logLevel else { return }
        let line = String(cString: text)
        if isError && (line.hasPrefix("Error: Unable to load client") || line.contains("certificate/key are inconsistent")) {
            // The client's own certificate and key, found unusable as the connect loads them: no
            // broker will take them, so the attempt fails for good rather than as a handshake.
            let problem = MQTTError.invalidConfiguration(["mqtt.tls: \(line) (the certificate and key must be PEM, belong together, and the key be unencrypted)"])
            state.withLock { s in
                if s.phase.attemptStart != nil && s.attemptError == nil { s.attemptError = problem }
            }
        } else if isError && (line.contains("SSL") || line.contains("TLS")) {
            // A failed handshake is reported only here; keep the first line for the connect error.
            let detail = line.replacingOccurrences(of: "OpenSSL Error[0]: ", with: "")
            state.withLock { s in
                if s.phase.attemptStart != nil && s.attemptTLSDetail == nil { s.attemptTLSDetail = detail }
            }
        }
        // Warnings and errors are paced, each line on its own; the debug lines, asked for, carry
        // message ids (a new key each) and are logged as they come.
        guard mapped >= .warning else { return logger.log(level: mapped, "libmosquitto", metadata: ["mqtt.log": line]) }
        let (say, held) = libraryLog.admit(line, now: ContinuousClock.now.secondsSinceStart)
        guard say else { return }
        var metadata: Logger.Metadata = ["mqtt.log": line]
        if held > 0 { metadata["suppressed"] = "\(held)" }
        logger.log(level: mapped, "libmosquitto", metadata: metadata)
    }
}
