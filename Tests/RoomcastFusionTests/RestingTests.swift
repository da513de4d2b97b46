import Foundation
import Testing
@testable import RoomcastFusion
import Shared

/// Beacons that fall silent when nobody moves them (`beacons[].sleeps_when_still`): a tag that
/// advertises only while moved keeps its room through its rests, still goes away when carried
/// out, and its rests teach no room that beacons leave from.
@Suite struct RestingTests {
    /// A two-room site on a virtual clock, a reading a second from each node.
    struct Home {
        var engine: FusionEngine
        var synth = Synthetic()
        var rng = SeededRandom(seed: 7)
        var t = 0.0
        var published: [PresenceDecision] = []

        /// `Synthetic.tag` sleeps when still, or not; `Synthetic.other` does not.
        init(tagSleeps: Bool = true) {
            var site = Synthetic.twoRooms
            site.beacons = [.init(id: Synthetic.tag, name: "Keys", sleepsWhenStill: tagSleeps), .init(id: Synthetic.other)]
            engine = FusionEngine(site: site, settings: FusionSettings())
        }

        static let levels = ["kitchen": ["n-kitchen": -55.0, "n-office": -80.0],
                             "office": ["n-kitchen": -80.0, "n-office": -55.0]]

        /// Seconds between two readings of each node.
        var every = 1.0

        /// `id` heard still in `room` for `seconds`.
        mutating func still(in room: String, for seconds: Double, id: BeaconID = Synthetic.tag) {
            hear(for: seconds, id: id) { _ in Self.levels[room]! }
        }

        /// `id` carried from `from` to `to` over `seconds`, its levels sliding from one room's to
        /// the other's.
        mutating func walk(from: String, to: String, over seconds: Double, id: BeaconID = Synthetic.tag) {
            let start = t
            hear(for: seconds, id: id) { now in
                let f = min(1, (now - start) / seconds)
                var levels: [String: Double] = [:]
                for (node, a) in Self.levels[from]! { levels[node] = a + f * (Self.levels[to]![node]! - a) }
                return levels
            }
        }

        mutating func hear(for seconds: Double, id: BeaconID, levels: (Double) -> [String: Double]) {
            let end = t + seconds
            while t < end {
                for (node, mean) in levels(t).sorted(by: { $0.key < $1.key }) {
                    engine.ingest(synth.reading(node, rssi: mean + rng.gaussian(sigma: 2), at: t, id: id, interval: every), now: t)
                }
                var tick = t + 0.5
                while tick < t + every { published += engine.tick(now: tick); tick += 0.5 }
                t += every
            }
        }

        /// Nothing heard for `seconds`.
        mutating func silence(for seconds: Double) {
            let end = t + seconds
            while t < end {
                published += engine.tick(now: t)
                t += 1
            }
        }

        func shown(_ id: BeaconID = Synthetic.tag) -> PresenceDecision? { engine.decision(for: id) }

        /// What was published for `id` from `t0` on: (room or "away", reason).
        func changes(since t0: Double, _ id: BeaconID = Synthetic.tag) -> [String] {
            published.filter { $0.id == id && $0.ts >= t0 }.map { "\($0.room ?? "away") \($0.reason ?? "")" }
        }
    }

    /// Put down in the office, the keys keep that room, `resting`, through a two-hour silence,
    /// and are `returned` there when picked up. A tag not declared to sleep goes away.
    @Test func aTagThatSleepsWhenStillKeepsItsRoomWhileItRests() throws {
        for sleeps in [true, false] {
            var home = Home(tagSleeps: sleeps)
            home.still(in: "kitchen", for: 20)
            home.walk(from: "kitchen", to: "office", over: 8)
            home.still(in: "office", for: 30)
            #expect(home.shown()?.room == "office")
            #expect(try #require(home.engine.movingProbability(for: Synthetic.tag)) < 0.5, "the premise: it held still before its silence")
            var mark = home.t
            home.silence(for: 7200)
            guard sleeps else {
                #expect(home.changes(since: mark) == ["away timeout"])
                continue
            }
            #expect(home.changes(since: mark) == ["office resting"])
            let resting = try #require(home.published.last)
            let lastHeard = mark - 1
            #expect(resting.ts - lastHeard > home.engine.settings.awayTimeout && resting.ts - lastHeard < home.engine.settings.awayTimeout + 2,
                    "said resting once it would have gone away: \(resting.ts - lastHeard) s after it was last heard")
            #expect(home.shown()?.room == "office")
            // Picked up: heard where it lay, then carried to the kitchen and followed there.
            mark = home.t
            home.still(in: "office", for: 3)
            home.walk(from: "office", to: "kitchen", over: 8)
            home.still(in: "kitchen", for: 20)
            #expect(home.changes(since: mark) == ["office returned", "kitchen moved_nearest"])
        }
    }

    /// Carried out of the home, a tag that sleeps when still falls silent moving: it goes away
    /// after the away timeout, as any beacon does. Read every 2 s, its evidence stays fresh
    /// for 8 s after its last reading, over which the filter's prediction drifts to still: the
    /// silence is judged by what its last news said.
    @Test(arguments: [1.0, 2.0])
    func aSleepingTagCarriedOutGoesAway(every: Double) throws {
        var home = Home()
        home.every = every
        home.still(in: "office", for: 30)
        home.walk(from: "office", to: "kitchen", over: 8)
        #expect(try #require(home.engine.movingProbability(for: Synthetic.tag)) > 0.5, "the premise: it fell silent moving")
        let mark = home.t
        home.silence(for: 60)
        let away = try #require(home.published.first { $0.ts >= mark && $0.room == nil }, "never away: \(home.changes(since: mark))")
        #expect(away.reason == "timeout" && away.ts - mark < home.engine.settings.awayTimeout + 2, "away at \(away.ts - mark) s")
    }

    /// Its rests say nothing of where people leave from: after three in the kitchen, another
    /// beacon missed there for ten seconds keeps its room; short rests count no returns either.
    @Test func restsTeachNoRoomThatBeaconsLeaveFrom() throws {
        var home = Home()
        for _ in 0..<3 {
            home.still(in: "kitchen", for: 30)
            home.silence(for: 300)
            home.still(in: "kitchen", for: 5)
            home.silence(for: 10)
        }
        home.still(in: "kitchen", for: 30)
        #expect(home.engine.learnedRooms.departures.isEmpty, "\(home.engine.learnedRooms.departures)")
        home.still(in: "kitchen", for: 30, id: Synthetic.other)
        let mark = home.t
        home.silence(for: 10)
        #expect(home.changes(since: mark, Synthetic.other).isEmpty, "let go as if from an entrance")
    }

    /// Resting across a restart it rests on once its node is heard again, and through its node's
    /// outage; picked up, it is `returned`. A tag resumed in a room, not resting, may have been
    /// carried off while nobody listened: its silence is any beacon's.
    @Test func aRestRestsOnAcrossARestartAndANodesOutage() throws {
        var before = Home()
        before.still(in: "office", for: 30)
        before.silence(for: 100)
        var retained = try #require(before.shown())
        #expect(retained.reason == "resting")

        var after = Home()
        after.t = before.t
        after.engine.resume(retained, now: after.t)
        after.still(in: "kitchen", for: 200, id: Synthetic.other)
        #expect(after.shown()?.room == "office" && after.shown()?.reason == "resting", "\(after.changes(since: 0))")
        after.engine.nodeStatus("n-office", online: false, now: after.t)
        after.engine.nodeStatus("n-kitchen", online: false, now: after.t)
        after.silence(for: 100)
        after.engine.nodeStatus("n-office", online: true, now: after.t)
        after.engine.nodeStatus("n-kitchen", online: true, now: after.t)
        after.silence(for: 100)
        #expect(after.changes(since: 0, Synthetic.tag).isEmpty && after.shown()?.reason == "resting", "\(after.changes(since: 0))")
        let mark = after.t
        after.still(in: "office", for: 3)
        #expect(after.changes(since: mark) == ["office returned"])

        retained.reason = "moved_nearest"
        var other = Home()
        other.t = before.t
        other.engine.resume(retained, now: other.t)
        other.still(in: "kitchen", for: 60, id: Synthetic.other)
        #expect(other.shown()?.room == nil && other.shown()?.reason == "timeout", "\(other.changes(since: 0))")
    }
}
