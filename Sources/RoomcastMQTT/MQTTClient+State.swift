extension MQTTClient {
    /// One remembered subscription.
    struct Subscription: Sendable, Equatable {
        var filter: String
        var qos: MQTTQoS
    }

    struct SubscribeWaiter {
        var filter: String
        var continuation: CheckedContinuation<Result<Void, MQTTError>, Never>
    }

    /// Where the connection stands.
    enum Phase: Equatable {
        /// Not started, or between attempts.
        case idle
        /// TCP/TLS/CONNECT under way since the instant.
        case connecting(since: ContinuousClock.Instant)
        /// CONNACK accepted; waiting for the re-sent subscriptions' SUBACKs, since the instant of
        /// the broker's latest answer or message.
        case subscribing(since: ContinuousClock.Instant)
        /// Ready: messages flow.
        case connected

        var isSubscribing: Bool { if case .subscribing = self { true } else { false } }

        var attemptStart: ContinuousClock.Instant? {
            switch self {
            case .connecting(let t), .subscribing(let t): t
            default: nil
            }
        }
    }

    /// Everything mutable, behind `MQTTClient.state`.
    struct State {
        var phase: Phase = .idle
        var started = false
        var stopping = false
        /// Shutdown found a live connection: keep pumping until the DISCONNECT is written.
        var drainOnStop = false
        var stopDeadline: ContinuousClock.Instant?
        /// The loop thread is inside libmosquitto's connect call, whose name lookup blocks for as
        /// long as the resolver takes (seconds to minutes when DNS or mDNS does not answer).
        var inConnectCall = false
        /// The client is finished: streams ended, waiters woken (the loop thread may still be in
        /// its connect call, and releases the handle when that returns).
        var exited = false
        var exitWaiters: [CheckedContinuation<Void, Never>] = []

        var subscriptions: [Subscription]
        var consecutiveFailures = 0
        /// When the current connection became ready (nil: not connected).
        var connectedAt: ContinuousClock.Instant?
        var everConnected = false
        /// Connections in a row closed within `stableConnection` of being made (another client
        /// with this client id displacing this one at every connect): while there are any, the
        /// next is said paced, and one that then holds is said (`pump`).
        var shortConnectionsInARow = 0
        var lastError: MQTTError?
        /// What the broker said in a refusing CONNACK during the current attempt.
        var attemptError: MQTTError?
        /// The first TLS error libmosquitto logged during the current attempt (it is only reported through the log).
        var attemptTLSDetail: String?

        var nextID: UInt64 = 0
        var connectWaiters: [UInt64: CheckedContinuation<Result<Void, MQTTError>, Never>] = [:]
        var flushWaiters: [UInt64: CheckedContinuation<Bool, Never>] = [:]

        /// Message ids sent and not yet confirmed by on_publish. libmosquitto may
        /// confirm before `mosquitto_publish` returns the id to us, hence `earlyPublishAcks`.
        var pendingPublishes: [Int32: MQTTQoS] = [:]
        var pendingQoS1 = 0
        var earlyPublishAcks: Set<Int32> = []
        /// Topics of unconfirmed QoS 1 publishes (at most `outboundQueueLimit`), so a refusing
        /// PUBACK can be counted against its topic.
        var pendingTopics: [Int32: String] = [:]
        /// Refusing reason codes of PUBACKs that beat `mosquitto_publish` returning their id.
        var earlyRefusals: [Int32: Int] = [:]
        /// Counts lost connections: a QoS 0 publish made on an earlier connection than the one
        /// current when it is recorded was dropped with it, and would wait for its confirmation
        /// (and hold up every `flush`) for good.
        var connection = 0

        var resubscribeMids: [Int32: String] = [:]
        var subscribeWaiters: [Int32: SubscribeWaiter] = [:]
        var earlySubscribeAcks: [Int32: Int32] = [:]
        /// Subscriptions whose wait for a SUBACK ran out, by id: a SUBACK that comes later is
        /// theirs, not one that beat a later `subscribe` reusing the id (ids are 16-bit).
        var lateSubscribeMids: [Int32: String] = [:]
        /// Filters the broker refused on the current connection (SUBACK ≥ 0x80): an ACL that
        /// denies them. Emptied at each connection attempt, whose subscriptions are answered anew.
        var refusedFilters: Set<String> = []

        init(subscriptions: [Subscription]) { self.subscriptions = subscriptions }

        mutating func allocateID() -> UInt64 {
            nextID += 1
            return nextID
        }

        /// Returns the refusing reason code when the broker's PUBACK for `mid` came first and refused it.
        /// `connection` is the value of `self.connection` when the message was handed to libmosquitto.
        mutating func recordPublished(mid: Int32, qos: MQTTQoS, topic: String, connection sentOn: Int) -> Int? {
            if earlyPublishAcks.remove(mid) != nil { return earlyRefusals.removeValue(forKey: mid) }
            if qos == .atMostOnce && sentOn != connection { return nil }
            if let old = pendingPublishes.updateValue(qos, forKey: mid), old == .atLeastOnce { pendingQoS1 -= 1 }
            if qos == .atLeastOnce {
                pendingQoS1 += 1
                pendingTopics[mid] = topic
            }
            return nil
        }

        /// Marks `mid` confirmed; returns the flush waiters to resume when nothing is pending any more.
        /// `refusedTopic` is the topic of a publish the broker refused (`reason` ≥ 0x80) when known now.
        mutating func confirmPublished(mid: Int32, reason: Int = 0) -> (waiters: [CheckedContinuation<Bool, Never>], refusedTopic: String?) {
            var refused: String?
            if let qos = pendingPublishes.removeValue(forKey: mid) {
                if qos == .atLeastOnce { pendingQoS1 -= 1 }
                let topic = pendingTopics.removeValue(forKey: mid)
                if reason >= 0x80 { refused = topic }
            } else {
                // Bounded: ids are 16-bit; a set this large means ids are never claimed, so forget them.
                if earlyPublishAcks.count > 4096 { earlyPublishAcks.removeAll(); earlyRefusals.removeAll() }
                earlyPublishAcks.insert(mid)
                if reason >= 0x80 { earlyRefusals[mid] = reason }
            }
            return (pendingPublishes.isEmpty ? takeFlushWaiters() : [], refused)
        }

        /// After a lost connection QoS 0 messages will never be confirmed; QoS 1 ones are re-sent by libmosquitto.
        /// Confirmations that came before their publisher recorded them stay: each publisher is
        /// about to claim its own, and one forgotten here would leave its message awaited for good.
        mutating func forgetUnconfirmableAfterDisconnect() -> [CheckedContinuation<Bool, Never>] {
            connection += 1
            pendingPublishes = pendingPublishes.filter { $0.value == .atLeastOnce }
            return pendingPublishes.isEmpty ? takeFlushWaiters() : []
        }

        mutating func takeFlushWaiters() -> [CheckedContinuation<Bool, Never>] {
            let w = Array(flushWaiters.values)
            flushWaiters.removeAll()
            return w
        }
    }
}

extension Duration {
    /// The duration in (fractional) seconds.
    var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }
}

extension ContinuousClock.Instant {
    /// Seconds on a monotonic scale, for `PublishRefusals`' once-a-minute rule.
    var secondsSinceStart: Double { (self - MQTTClient.clockOrigin).seconds }
}

extension MQTTClient {
    static let clockOrigin = ContinuousClock.now
}
