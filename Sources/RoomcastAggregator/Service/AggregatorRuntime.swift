import RoomcastFusion
import Shared

/// Owns the aggregator core (and the standby election) while the service
/// runs: inbound messages and timer ticks both pass through this actor.
/// Outputs are returned to the caller, which publishes them only while this
/// instance is active.
public actor AggregatorRuntime<Engine: PresenceEstimator & Sendable> {
    private var core: AggregatorCore<Engine>
    private var election: LeaseElection?
    private let refreshInterval: Double
    private var nextRefresh: Double = 0
    private var discoveryOnBroker: Set<String> = []
    private var discoveryReconciled = false
    private let startedAt: Double
    /// Retained output read back within this window after start is resumed from.
    private let resumeWindow: Double
    private let rejectLog = RateLimitedLog(interval: 10)
    private let logger: Logger
    private var wasActive = false

    public init(core: AggregatorCore<Engine>, election: LeaseElection?, refreshInterval: Double, startedAt: Double,
                resumeWindow: Double = 3, logger: Logger) {
        self.core = core
        self.election = election
        self.refreshInterval = refreshInterval
        self.startedAt = startedAt
        self.resumeWindow = resumeWindow
        self.logger = logger
    }

    /// An inbound MQTT message at `now`; returns what to publish.
    public func handle(topic: String, payload: [UInt8], now: Double) -> [OutboundMessage] {
        if let discovery = core.discovery, discovery.isOurs(topic) {
            if payload.isEmpty { discoveryOnBroker.remove(topic) } else { discoveryOnBroker.insert(topic) }
            return []
        }
        if topic == core.topics.aggregatorLease {
            election?.observe(payload: payload, now: now)
            return []
        }
        if case .presence = core.topics.parse(topic), now - startedAt > resumeWindow {
            // Our own output echoed back after start-up: nothing to learn.
            return []
        }
        do {
            let (messages, rejection) = try core.handle(topic: topic, payload: payload, now: now)
            if let rejection {
                let (admit, suppressed) = rejectLog.admit(rejection.reason.rawValue, now: now)
                if admit {
                    logger.warning("rejected inbound message", metadata: [
                        "mqtt.topic": String(topic.prefix(200)), "reason": rejection.reason.rawValue,
                        "detail": String(rejection.message.prefix(200)), "suppressed": "\(suppressed)"])
                }
            }
            return messages
        } catch {
            logger.error("could not encode output", metadata: ["error": "\(error)"])
            return []
        }
    }

    /// Timer: fusion ticks, lease renewal, periodic refresh, discovery clean-up.
    public func tick(now: Double) -> [OutboundMessage] {
        var out: [OutboundMessage] = []
        do {
            out += try core.advance(to: now)
            if let lease = election?.tick(now: now) { out.append(lease) }
            let active = isActive
            if active && !wasActive {
                // Just became active (start, or took over): announce and republish everything.
                out += try core.start(now: now)
                out += try core.refresh(now: now)
                nextRefresh = now + refreshInterval
            }
            wasActive = active
            if active && now >= nextRefresh {
                nextRefresh = now + refreshInterval
                out += try core.refresh(now: now)
            }
            if active, !discoveryReconciled, now - startedAt > resumeWindow, let discovery = core.discovery {
                discoveryReconciled = true
                out += discovery.removals(existing: discoveryOnBroker, wanted: try discovery.siteConfigs(core.site))
            }
        } catch {
            logger.error("could not encode output", metadata: ["error": "\(error)"])
        }
        return out
    }

    /// True when this instance publishes (always, without standby).
    public var isActive: Bool { election?.isActive ?? true }

    /// Everything retained again after a (re)connect: a broker restarted without persistence
    /// (or SIGKILLed since its last save) has lost our status, discovery, presence and rooms,
    /// and a first tick that ran before the first connect could not send them at all; both
    /// would otherwise wait for the periodic refresh (status and discovery: forever).
    /// Empty until the first tick has announced this instance (that tick sends them itself).
    public func reconnected(now: Double) -> [OutboundMessage] {
        guard isActive, wasActive else { return [] }
        do {
            nextRefresh = now + refreshInterval
            return try core.start(now: now) + core.refresh(now: now)
        } catch {
            logger.error("could not encode output", metadata: ["error": "\(error)"])
            return []
        }
    }

    public var rejected: [InputIntake.Rejection: UInt64] { core.intake.rejected }
    public var accepted: UInt64 { core.intake.accepted }

    /// Messages for a graceful stop: the offline status (or the lease release under standby).
    public func stopMessages() -> [OutboundMessage] {
        if let election {
            return election.isActive ? [election.releaseMessage] : []
        }
        return [OutboundMessage(topic: core.topics.aggregatorStatus, text: "offline", retain: true, qos: 1)]
    }
}
