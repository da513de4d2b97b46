import Shared
import Testing
@testable import RoomcastAggregator

/// Two instances that start together both take the lease before either has
/// seen the other's: they must settle on one (the lower name) and stay there.
@Suite struct LeaseTieBreakTests {
    @Test(arguments: [false, true]) func simultaneousStartSettlesOnOneInstance(betaPublishesLast: Bool) throws {
        let topics = Topics()
        var alpha = LeaseElection(me: "alpha", topics: topics, duration: 3)
        var beta = LeaseElection(me: "beta", topics: topics, duration: 3)
        var retained: [UInt8] = []
        var activeAt: [Double: Set<String>] = [:]
        var t = 0.0
        while t <= 20 {
            // Both tick before any message of this round reaches them; the broker then
            // delivers every lease published to both, in publish order, and keeps the last.
            var published: [[UInt8]] = []
            let order = betaPublishesLast ? [0, 1] : [1, 0]
            for who in order {
                if who == 0, let m = alpha.tick(now: t) { published.append(m.payload) }
                if who == 1, let m = beta.tick(now: t) { published.append(m.payload) }
            }
            for p in published {
                alpha.observe(payload: p, now: t)
                beta.observe(payload: p, now: t)
                retained = p
            }
            var active: Set<String> = []
            if alpha.isActive { active.insert("alpha") }
            if beta.isActive { active.insert("beta") }
            activeAt[t] = active
            t += 0.5
        }
        #expect(!retained.isEmpty)
        let lease = try WireFormat.decode(LeaseElection.Lease.self, from: retained)
        #expect(lease.holder == "alpha")
        // From the round after the collision on, exactly one is active, always the same.
        let settled = activeAt.filter { $0.key >= 2 }
        #expect(settled.values.allSatisfy { $0 == ["alpha"] }, "\(activeAt.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.sorted())" })")
    }
}
