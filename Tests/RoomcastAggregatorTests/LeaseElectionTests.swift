import Shared
import Testing
@testable import RoomcastAggregator

/// Two elections exchanging lease messages the way the broker would (retained, to both).
@Suite struct LeaseElectionTests {
    @Test func oneActiveStandbyTakesOverWhenActiveDiesAndNeverBoth() throws {
        let topics = Topics()
        var a = LeaseElection(me: "agg-a", topics: topics, duration: 6)
        var b = LeaseElection(me: "agg-b", topics: topics, duration: 6)
        var retained: [UInt8] = []
        var aAlive = true
        var activeAt: [Double: Set<String>] = [:]
        var t = 0.0
        while t <= 40 {
            // Broker delivers the retained lease to both before they tick.
            if aAlive { a.observe(payload: retained, now: t) }
            b.observe(payload: retained, now: t)
            if aAlive, let m = a.tick(now: t) { retained = m.payload; b.observe(payload: retained, now: t) }
            if let m = b.tick(now: t) { retained = m.payload; if aAlive { a.observe(payload: retained, now: t) } }
            var active: Set<String> = []
            if aAlive && a.isActive { active.insert("a") }
            if b.isActive { active.insert("b") }
            activeAt[t] = active
            if t == 20 { aAlive = false }  // SIGKILL: no release, lease must expire
            t += 0.5
        }
        #expect(activeAt.values.allSatisfy { $0.count <= 1 }, "never two active at once")
        #expect(activeAt[10] == ["a"])
        let takeover = activeAt.filter { $0.value == ["b"] }.keys.min()!
        #expect(takeover > 20 && takeover <= 20 + 6 + 0.5, "standby takes over once the lease expires: \(takeover)")
    }

    @Test func releasedLeaseIsTakenAtOnce() {
        let topics = Topics()
        var a = LeaseElection(me: "a", topics: topics, duration: 30)
        var b = LeaseElection(me: "b", topics: topics, duration: 30)
        let lease = a.tick(now: 0, grace: 0)!
        b.observe(payload: lease.payload, now: 0)
        #expect(b.tick(now: 5) == nil)
        b.observe(payload: a.releaseMessage.payload, now: 6)  // a's Last Will
        #expect(b.tick(now: 6) != nil)
        #expect(b.isActive)
    }
}
