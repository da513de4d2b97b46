internal import CMosquitto
import Dispatch
import Foundation
import Shared
import RoomcastLogging

extension MQTTClient {
    /// A connection that lasted this long before it ended resets the reconnect backoff.
    static let stableConnection: Duration = .seconds(10)

    /// The loop thread: connect, pump until the connection ends, back off, repeat.
    ///
    /// libmosquitto's own loop (`mosquitto_loop_forever`) gives up on a failed
    /// first connect and on TLS errors, so this drives `mosquitto_connect_async`
    /// and `mosquitto_loop` itself and owns every retry decision.
    func runLoop() {
        let h = handle
        let cfg = configuration
        var wasConnected = false
        var firstAttempt = true
        // A broker that stays down is said at once, then ever further apart, up to hourly
        // (docs/deployment.md); each connection lost starts it over.
        var connectLog = RateLimitedLog(interval: 10)
        while true {
            let proceed = state.withLock { s -> Bool in
                guard !s.stopping else { return false }
                s.phase = .connecting(since: .now)
                s.refusedFilters.removeAll()
                s.attemptError = nil
                s.attemptTLSDetail = nil
                s.inConnectCall = true
                return true
            }
            guard proceed else { break }
            logger.debug("mqtt connecting")

            let failure: MQTTError
            // connect_async stores host, port and keep-alive (and resets in-flight
            // quotas, which publishing threads read); later attempts only need a
            // new socket, which reconnect_async makes from the stored settings.
            let rc = firstAttempt
                ? mosquitto_connect_async(h, cfg.host, Int32(cfg.port), Int32(cfg.keepAlive))
                : mosquitto_reconnect_async(h)
            let err = errno
            // A shutdown during the call has already ended the client: the CONNECT the call
            // queued is not sent (a will registered with it would fire when the socket closes).
            let stoppedDuringCall = state.withLock { s -> Bool in
                s.inConnectCall = false
                return s.exited
            }
            let call = firstAttempt ? "mosquitto_connect_async" : "mosquitto_reconnect_async"
            firstAttempt = false
            if rc != Mosquitto.success {
                failure = classify(rc, err, call: call)
            } else if stoppedDuringCall {
                failure = .shutDown
            } else {
                failure = pump(h)
            }

            let outcome = state.withLock { s -> AttemptOutcome in
                let connected = s.phase == .connected
                s.phase = .idle
                s.resubscribeMids.removeAll()
                s.lateSubscribeMids.removeAll()
                let held = connected && s.connectedAt.map { ContinuousClock.now - $0 >= Self.stableConnection } == true
                var o = AttemptOutcome(wasConnected: connected, held: held)
                o.flushWaiters = s.forgetUnconfirmableAfterDisconnect()
                o.subscribeWaiters = Array(s.subscribeWaiters.values)
                s.subscribeWaiters.removeAll()
                if s.stopping {
                    o.exit = true
                    return o
                }
                // After a connection that held, the first retry waits only the initial delay. One
                // closed soon after it was made counts as a failure: two clients with one client
                // id (a copied config, an old process still alive) displace each other at every
                // connect, and each reset of the backoff made that twice a second, for good.
                s.connectedAt = nil
                if connected { s.shortConnectionsInARow = held ? 0 : s.shortConnectionsInARow + 1 }
                s.consecutiveFailures = held ? 1 : s.consecutiveFailures + 1
                s.lastError = failure
                o.delay = cfg.reconnectBackoff.delay(afterFailures: s.consecutiveFailures,
                                                     random: Double.random(in: 0..<1))
                if !connected && failure.isPermanent {
                    o.connectWaiters = Array(s.connectWaiters.values)
                    s.connectWaiters.removeAll()
                }
                return o
            }
            // A subscription cut short by the disconnect stays remembered and is re-sent.
            for w in outcome.subscribeWaiters { w.continuation.resume(returning: .success(())) }
            for w in outcome.flushWaiters { w.resume(returning: !outcome.exit) }
            if outcome.exit {
                wasConnected = outcome.wasConnected
                break
            }
            for w in outcome.connectWaiters { w.resume(returning: .failure(failure)) }
            let retry = String(format: "%.2f", outcome.delay)
            if outcome.wasConnected {
                connectLog = RateLimitedLog(interval: 10)
                var metadata: Logger.Metadata = ["mqtt.error": "\(failure)", "mqtt.retry_in": retry]
                // One that held is said each time; one that did not is said ever further apart
                // while such connections go on, each line with the count held back.
                let (admit, suppressed) = outcome.held
                    ? (true, 0) : shortConnectionLog.admit("lost", now: ContinuousClock.now.secondsSinceStart)
                if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
                if !outcome.held {
                    // An MQTT 3.1.1 broker closes a displaced connection without a reason.
                    metadata["hint"] = "closed within \(Self.stableConnection.components.seconds) s of being made: is another program connected with this client id (a copied config, a second process)?"
                }
                if admit { logger.warning("mqtt connection lost", metadata: metadata) }
                eventSink.yield(.disconnected(reason: failure))
            } else {
                connectFailureCount.add(1, ordering: .relaxed)
                let (admit, suppressed) = connectLog.admit("\(failure)", now: ContinuousClock.now.secondsSinceStart)
                if admit {
                    var metadata: Logger.Metadata = ["mqtt.error": "\(failure)", "mqtt.retry_in": retry]
                    if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
                    // Retrying with the same settings will not mend a refused password or an untrusted certificate.
                    if failure.isPermanent {
                        logger.error("mqtt connect failed", metadata: metadata)
                    } else {
                        logger.warning("mqtt connect failed", metadata: metadata)
                    }
                }
                eventSink.yield(.connectFailed(failure, retryIn: outcome.delay))
            }
            _ = wakeup.wait(timeout: .now() + outcome.delay)
        }
        finishAfterLoop(wasConnected: wasConnected)
    }

    struct AttemptOutcome {
        var wasConnected: Bool
        /// It was connected for `stableConnection` or longer.
        var held = false
        var exit = false
        var delay = 0.0
        var flushWaiters: [CheckedContinuation<Bool, Never>] = []
        var subscribeWaiters: [SubscribeWaiter] = []
        var connectWaiters: [CheckedContinuation<Result<Void, MQTTError>, Never>] = []
    }

    enum PumpVerdict { case keepGoing, drain, exit, timedOut }

    /// Packets read per loop turn beyond the first, at most: keep-alive and writes get their turn.
    static let drainLimit = 256

    /// libmosquitto reads one QoS 0 packet per `mosquitto_loop` call, each behind a `select`; under
    /// a flood of readings that select was a third of the loop thread's time. Reads on while whole
    /// packets are waiting, until a read would block (libmosquitto leaves EAGAIN in errno then).
    /// Returns the failure when the connection broke.
    func drainReadable(_ h: OpaquePointer) -> MQTTError? {
        for _ in 0..<Self.drainLimit {
            errno = 0
            let rc = mosquitto_loop_read(h, 1)
            let err = errno
            if rc != Mosquitto.success { return classify(rc, err, call: "mosquitto_loop_read") }
            if err == EAGAIN || err == EWOULDBLOCK { return nil }
        }
        return nil
    }

    /// Runs `mosquitto_loop` until the connection fails, the attempt times out
    /// or shutdown asks to stop; returns why it ended.
    func pump(_ h: OpaquePointer) -> MQTTError {
        let timeout = Duration.seconds(configuration.connectTimeout)
        var received = receivedInboundCount.load(ordering: .relaxed)
        while true {
            // 100 ms bounds how late a timeout or shutdown is noticed; publishes
            // wake the select at once through libmosquitto's socket pair.
            let rc = mosquitto_loop(h, 100, 1)
            let err = errno
            flushInbound()
            if rc != Mosquitto.success { return classify(rc, err, call: "mosquitto_loop") }
            let now = ContinuousClock.now
            // A broker answers each SUBSCRIBE after the retained messages of those before it: on
            // a large site the SUBACKs wait behind megabytes. Once it has accepted the CONNECT,
            // the timeout counts its silence, not the transfer.
            let receivedNow = receivedInboundCount.load(ordering: .relaxed)
            let progressed = receivedNow != received
            received = receivedNow
            var holdsAfterShortOnes = 0
            let verdict = state.withLock { s -> PumpVerdict in
                if progressed, s.phase.isSubscribing { s.phase = .subscribing(since: now) }
                if s.shortConnectionsInARow > 0, let at = s.connectedAt, now - at >= Self.stableConnection {
                    holdsAfterShortOnes = s.shortConnectionsInARow
                    s.shortConnectionsInARow = 0
                }
                if s.stopping && !s.drainOnStop { return .exit }
                if let d = s.stopDeadline, now >= d { return .exit }
                if let start = s.phase.attemptStart, now - start > timeout { return .timedOut }
                return s.phase == .connected ? .drain : .keepGoing
            }
            if holdsAfterShortOnes > 0 {
                // Their lines were paced: say that it is over, so the log does not end on a lost one.
                logger.notice("mqtt connection holds", metadata: ["mqtt.short_connections": "\(holdsAfterShortOnes)"])
            }
            switch verdict {
            case .drain:
                let failure = drainReadable(h)
                flushInbound()
                if let failure { return failure }
            case .keepGoing: continue
            case .exit: return .shutDown
            case .timedOut: return .connectTimedOut(endpoint: endpoint, seconds: configuration.connectTimeout)
            }
        }
    }

    /// Turns a failed call into the most telling error: the broker's CONNACK
    /// refusal or a TLS error seen in the log beat the bare return code.
    func classify(_ rc: Int32, _ err: Int32, call: String) -> MQTTError {
        let (refusal, tlsDetail, handshaking) = state.withLock { s in
            (s.attemptError, s.attemptTLSDetail, { if case .connecting = s.phase { true } else { false } }())
        }
        if let refusal { return refusal }
        if let tlsDetail {
            // OpenSSL's "unexpected eof" is the bare close below, seen from inside the handshake.
            guard tlsDetail.lowercased().contains("unexpected eof") else {
                return .tlsHandshakeFailed(endpoint: endpoint, detail: tlsDetail)
            }
            return .connectionLost(endpoint: endpoint, detail: Self.closedDuringHandshake(tlsDetail))
        }
        let base = Mosquitto.error(rc, call: call, errnoValue: err, endpoint: endpoint, host: configuration.host)
        // libmosquitto sets EPROTO for any TLS read or write error: on a session already open
        // that is the connection breaking (a broker killed mid-write), retried, not a handshake
        // that failed over a certificate.
        if !handshaking, case .tlsHandshakeFailed(_, let detail) = base {
            return .connectionLost(endpoint: endpoint, detail: "TLS connection broken (\(detail))")
        }
        guard handshaking, case .connectionLost(_, let detail) = base else { return base }
        if configuration.tls != nil {
            // A bare close says nothing about trust: a broker going down or restarting closes
            // connections mid-handshake too, and a rejected certificate shows up as an OpenSSL
            // alert (`tlsDetail` above). So it is retried like any lost connection.
            return .connectionLost(endpoint: endpoint, detail: Self.closedDuringHandshake(detail))
        }
        // Under MQTT 3.1.1 a broker that refuses retained messages (mosquitto's
        // `retain_available false`) closes without a CONNACK at a retained Last Will, as every
        // Roomcast program's is; MQTT 5 gets a reason.
        let retained = configuration.protocolVersion == .v311 && configuration.lastWill?.retain == true
            ? "; or the broker refuses retained messages (retain_available false), which Roomcast needs" : ""
        return .connectionLost(endpoint: endpoint, detail: "the broker closed the connection before answering CONNECT (\(detail)); if this port expects TLS, configure tls\(retained)")
    }

    static func closedDuringHandshake(_ detail: String) -> String {
        "the broker closed the connection during the TLS handshake (\(detail)); if it keeps doing so, it may require a client certificate or have rejected this one"
    }

    /// Releases the handle and finishes the client; runs once, on the loop thread (or in shutdown
    /// if never started).
    func finishAfterLoop(wasConnected: Bool) {
        handleAlive.withLock { alive in
            if alive {
                mosquitto_destroy(handle)
                alive = false
            }
        }
        flushInbound()
        finishClient(wasConnected: wasConnected)
    }

    /// Ends both streams and wakes everyone still waiting, once: from the loop thread as it ends,
    /// or from `shutdown` while the loop thread is still in its connect call.
    func finishClient(wasConnected: Bool) {
        let finished = state.withLock { s -> ([CheckedContinuation<Result<Void, MQTTError>, Never>], [CheckedContinuation<Bool, Never>],
                                              [SubscribeWaiter], [CheckedContinuation<Void, Never>])? in
            guard !s.exited else { return nil }
            s.exited = true
            s.phase = .idle
            defer {
                s.connectWaiters.removeAll(); s.flushWaiters.removeAll()
                s.subscribeWaiters.removeAll(); s.exitWaiters.removeAll()
            }
            return (Array(s.connectWaiters.values), Array(s.flushWaiters.values),
                    Array(s.subscribeWaiters.values), s.exitWaiters)
        }
        guard let (connectW, flushW, subscribeW, exitW) = finished else { return }
        if wasConnected { eventSink.yield(.disconnected(reason: .shutDown)) }
        eventSink.finish()
        messageSink.finish()
        inboundQueue.finish()
        for w in connectW { w.resume(returning: .failure(.shutDown)) }
        for w in flushW { w.resume(returning: false) }
        for w in subscribeW { w.continuation.resume(returning: .failure(.shutDown)) }
        for w in exitW { w.resume() }
    }
}

extension MQTTClient {
    /// Test hook: cuts the TCP connection without a DISCONNECT, as a crash or a
    /// pulled cable would, so tests can watch the Last Will and the reconnect.
    func abortConnectionForTesting() {
        handleAlive.withLock { alive in
            guard alive else { return }
            let fd = mosquitto_socket(handle)
            if fd >= 0 { _ = Foundation.shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }
}
