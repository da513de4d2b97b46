import Foundation
import Shared

/// Active/standby between aggregators with the same config, through one
/// retained lease topic (`<prefix>/aggregator/lease`) plus each one's Last Will.
///
/// The active one renews `{"holder","expires"}` every `duration / 3`; a
/// standby takes over when the lease has expired, or at once when the holder
/// is gone: its Last Will sets its instance topic `offline` (`observeInstance`);
/// an empty lease (a graceful stop, or the will of an older version) releases it too. Both consume the
/// same input, so a standby's state is warm; only the active one publishes.
/// Pure: driven by `now` and the lease messages it reads back.
public struct LeaseElection: Sendable {
    public struct Lease: Codable, Sendable, Equatable {
        public var v: Int = WireFormat.version
        public var holder: String
        public var expires: Double
        /// The holder's process: two processes started with one instance name (Pis cloned from
        /// one image keep one host name) are told apart by it. Nil from a holder that sends none.
        public var token: String?
        /// A digest of what the holder decides with (`AggregatorConfig.decisionDigest`): a
        /// standby with another config would undo the holder's Home Assistant devices when it
        /// takes over, and the holder its own when it takes back. Nil from a holder that sends none.
        public var config: String?
        /// The holder's release: digests are compared within one release only, since a release
        /// that adds a setting digests its default too (a rolling upgrade is no other config).
        public var release: String?

        public init(holder: String, expires: Double, token: String? = nil, config: String? = nil, release: String? = nil) {
            self.holder = holder
            self.expires = expires
            self.token = token
            self.config = config
            self.release = release
        }
    }

    public enum Role: String, Sendable { case standby, active }

    public let me: String
    /// This process's `Lease.token`.
    public let token: String
    public let duration: Double
    public let topic: String
    public private(set) var role: Role = .standby
    public private(set) var seen: Lease?
    /// When this instance first observed the lease topic (the retained value
    /// arrives at once on subscribe; before that we must not grab the lease).
    private var startedAt: Double?
    private var lastRenewal: Double = -.infinity
    /// Set when a lease of another process under this instance's name was read: the two would
    /// otherwise each take the other's renewals for their own echo, and both stay active.
    public private(set) var sameNameSeen = false
    /// This instance's `Lease.config`.
    public let configDigest: String?
    /// The newest holder seen deciding with another config, and its digest.
    public private(set) var otherConfig: (holder: String, config: String)?
    /// How many leases were read that this release cannot decode (`unreadableHolder`).
    public private(set) var unreadableLeases: UInt64 = 0

    /// The holder of a lease this release cannot read: most likely a newer release's, in a
    /// rolling upgrade of a hot-standby pair. It holds the lease for a term from when it is read,
    /// as any other holder's, so this instance stands by while it renews, and takes over once
    /// it stops; taken as no lease, both would be active, each undoing the other's output.
    public static let unreadableHolder = "(a lease this release cannot read)"

    /// `scope` names a partition: partitions elect independently, each on
    /// `<prefix>/aggregator/lease/<scope>`; nil uses the site's one lease topic.
    public init(me: String, topics: Topics, duration: Double = 6, scope: String? = nil, configDigest: String? = nil) {
        self.me = me
        self.configDigest = configDigest
        self.token = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        self.duration = duration
        self.topic = scope.map { "\(topics.aggregatorLease)/\($0)" } ?? topics.aggregatorLease
    }

    /// The retained lease as read from the broker (empty payload = released).
    public mutating func observe(payload: [UInt8], now: Double) {
        // Decoded once: a holder renews every `duration / 3`, and every instance reads each renewal.
        let decoded = payload.isEmpty ? nil : (try? WireFormat.decode(Lease.self, from: payload)).flatMap { $0.expires.isFinite ? $0 : nil }
        if payload.isEmpty {
            seen = nil
        } else if decoded == nil {
            unreadableLeases &+= 1
            seen = Lease(holder: Self.unreadableHolder, expires: now + duration)
            // Active, this instance stands by: the holder may read our lease no better, and the
            // rule for two active instances needs both names.
            if role == .active { role = .standby }
        } else if var lease = decoded {
            // Our name with another process's token, once running: another process started with
            // this name, a holder like any other. Read at start-up (before the first tick), it is
            // the lease of our own previous run, taken back at once.
            let ours = lease.holder == me && (startedAt == nil || isOurs(lease))
            if lease.holder == me && !ours { sameNameSeen = true }
            if !ours, let theirs = lease.config, let mine = configDigest, lease.release == RoomcastVersion.current {
                otherConfig = theirs != mine ? (lease.holder, theirs) : nil
            }
            if ours { lease.token = token }
            // Another holder's lease is timed on this clock, from when it is read: the holder
            // renews every `duration / 3`, and its own `expires` is on its clock, which on a Pi
            // without a real-time clock can be seconds or minutes off ours. Judged by it, a
            // holder behind would look expired at every renewal (both active), and one ahead
            // (or a forged lease) would keep every standby out.
            if !ours { lease.expires = now + duration }
            lease.expires = min(lease.expires, now + duration)
            if ours && role == .standby && startedAt != nil {
                // The echo of a lease we published before stepping down. Only the retained
                // lease read at start-up (before the first tick) may be our own from a
                // previous run, which we take back at once.
                return
            }
            seen = lease
            if !ours && lease.expires > now && role == .active {
                // Two active at once (both started together, or a split brain after a
                // partition): both see both leases, so a rule both apply picks one. The
                // lower name keeps the lease and renews at once to overwrite the other's;
                // between two processes of one name, the lower token.
                if (lease.holder, lease.token ?? "") < (me, token) {
                    role = .standby
                } else {
                    lastRenewal = -.infinity
                }
            }
        }
    }

    /// Another instance's liveness (`<prefix>/aggregator/instances/<name>`, offline by its Last Will):
    /// an offline holder has released the lease, so a standby takes over at its next tick.
    public mutating func observeInstance(_ name: String, online: Bool) {
        if !online, name != me, seen?.holder == name { seen = nil }
    }

    /// Advances to `now`; returns the lease message to publish, if any.
    /// `grace` is how long to wait after start for the retained lease to arrive.
    public mutating func tick(now: Double, grace: Double = 1.0) -> OutboundMessage? {
        if startedAt == nil { startedAt = now }
        switch role {
        case .active:
            return now - lastRenewal >= duration / 3 ? renew(now: now) : nil
        case .standby:
            guard now - (startedAt ?? now) >= grace else { return nil }
            if let held = seen, !isOurs(held), held.expires > now { return nil }
            role = .active
            return renew(now: now)
        }
    }

    /// Whether `lease` is this process's own.
    private func isOurs(_ lease: Lease) -> Bool { lease.holder == me && (lease.token == nil || lease.token == token) }

    /// The Last Will to register: an empty retained lease releases it at once
    /// when this instance dies, so the standby need not wait for expiry.
    public var releaseMessage: OutboundMessage { OutboundMessage(topic: topic, payload: [], retain: true, qos: 1) }

    private mutating func renew(now: Double) -> OutboundMessage {
        lastRenewal = now
        let lease = Lease(holder: me, expires: now + duration, token: token, config: configDigest,
                          release: configDigest == nil ? nil : RoomcastVersion.current)
        seen = lease
        // Encoding a struct of finite numbers and strings cannot fail.
        return (try? OutboundMessage(topic: topic, json: lease, retain: true, qos: 1))
            ?? OutboundMessage(topic: topic, payload: [], retain: true, qos: 1)
    }

    /// The wall clock stepped back by `seconds`: the lease's expiry and the last renewal move
    /// back by as much, or the holder would not renew (and lose the lease) and a standby would
    /// not take over until the clock caught up.
    public mutating func clockSteppedBack(by seconds: Double) {
        guard seconds.isFinite, seconds > 0 else { return }
        if startedAt != nil { startedAt! -= seconds }
        lastRenewal -= seconds
        seen?.expires -= seconds
    }

    /// Nothing was read for a while (this process paused, or the wall clock stepped forward):
    /// another holder's lease runs a full term from `now`, as if just read, rather than look
    /// expired for renewals this instance could not have read. Its renewals in the backlog, or
    /// its Last Will, tell the rest.
    public mutating func nothingReadUntil(_ now: Double) {
        guard let held = seen, !isOurs(held) else { return }
        seen?.expires = max(held.expires, now + duration)
    }

    public var isActive: Bool { role == .active }

    /// Whether the lease this instance last wrote is still valid at `now` (nil when it holds none).
    public func holdsUnexpiredLease(now: Double) -> Bool? {
        guard role == .active, let seen, isOurs(seen) else { return nil }
        return seen.expires > now
    }

    /// Gives up the active role without releasing the lease (it has expired, or another holds
    /// it): the next `tick` takes it again only if no other holder is seen by then.
    public mutating func stepDown() {
        role = .standby
        if let held = seen, isOurs(held) { seen = nil }
        lastRenewal = -.infinity
    }
}
