import RoomcastAggregator
import Shared

/// Fuzzes the retained lease (`<prefix>/aggregator/lease`) through `LeaseElection.observe`, the
/// way an aggregator reads it: before its first tick (the retained value at start-up), as a
/// standby, and while active.
///
/// Input: the payload. Checks: a lease that decodes re-encodes to itself; the role after each
/// step is the one the election's rules give for the decoded lease (a payload that does not
/// decode is another holder's, perhaps a newer release's: it keeps a standby off for one
/// duration, and an active instance stands by); what an election publishes is its own lease,
/// retained, for `duration`.
enum LeaseHarness {
    static let me = "agg-m"
    static let duration = 6.0

    static func run(_ input: [UInt8]) {
        let lease = input.isEmpty ? nil : try? WireFormat.decode(LeaseElection.Lease.self, from: input)
        if let lease {
            let again = (try? WireFormat.encode(lease)).flatMap { try? WireFormat.decode(LeaseElection.Lease.self, from: $0) }
            FuzzCheck.require(again == lease, "lease changed in a round trip")
        }
        let t = FuzzSite.start
        let unreadable = !input.isEmpty && (lease.map { !$0.expires.isFinite } ?? true)
        /// Whether `lease`, read at `readAt`, keeps a standby off at `now`: another holder's lease
        /// counts for one duration from when it is read, whatever its `expires` says.
        func holdsOff(readAt: Double, _ now: Double) -> Bool {
            if unreadable { return now < readAt + duration }
            guard let lease else { return false }
            return lease.holder != me && lease.expires.isFinite && now < readAt + duration
        }

        // At start-up, before the first tick: the retained lease (possibly our own from a previous run).
        var early = election()
        early.observe(payload: input, now: t)
        FuzzCheck.require(early.tick(now: t, grace: 1) == nil, "published within the grace period")
        expectRole(early.tick(now: t + 1.5, grace: 1), of: early, active: !holdsOff(readAt: t, t + 1.5), now: t + 1.5, "read at start-up")

        // As a standby: after the first tick, our own lease is an echo and ignored.
        var standby = election()
        FuzzCheck.require(standby.tick(now: t, grace: 1) == nil, "published within the grace period")
        standby.observe(payload: input, now: t + 0.5)
        expectRole(standby.tick(now: t + 1.5, grace: 1), of: standby, active: !holdsOff(readAt: t + 0.5, t + 1.5), now: t + 1.5, "read as standby")

        // While active: another live holder with a lower name wins the tie-break; a higher one
        // is overwritten at the next tick.
        var active = election()
        expectRole(active.tick(now: t, grace: 0), of: active, active: true, now: t, "first tick without grace")
        active.observe(payload: input, now: t + 1)
        let rival = unreadable || lease.map { $0.holder != me && $0.expires.isFinite } ?? false
        let yields = unreadable || rival && lease!.holder < me
        FuzzCheck.require(active.isActive == !yields, "active after \(lease.map { "\($0)" } ?? "no lease"): \(active.isActive)")
        if rival && !yields {
            expectRole(active.tick(now: t + 1.1, grace: 0), of: active, active: true, now: t + 1.1, "renews over a rival at once")
        }
    }

    static func election() -> LeaseElection {
        LeaseElection(me: me, topics: FuzzSite.topics, duration: duration)
    }

    static func expectRole(_ message: OutboundMessage?, of election: LeaseElection, active: Bool, now: Double, _ step: String) {
        FuzzCheck.require(election.isActive == active, "\(step): active \(election.isActive), expected \(active)")
        FuzzCheck.require((message != nil) == active, "\(step): published \(message != nil) while active \(active)")
        guard let message else { return }
        let published = try? WireFormat.decode(LeaseElection.Lease.self, from: message.payload)
        FuzzCheck.require(message.topic == election.topic && message.retain
                              && published == LeaseElection.Lease(holder: me, expires: now + duration),
                          "\(step): published \(String(decoding: message.payload, as: UTF8.self)) on \(message.topic)")
    }
}
