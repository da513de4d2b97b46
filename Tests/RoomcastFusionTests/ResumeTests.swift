import Foundation
import RoomcastFusion
import Shared
import Testing

/// After a restart the aggregator seeds the engine with its own retained decision.
@Suite struct ResumeTests {
    let id = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45")!
    let site = SiteModel(rooms: [.init(name: "kitchen"), .init(name: "office")],
                         nodes: [.init(name: "k", room: "kitchen"), .init(name: "o", room: "office")])

    func reading(_ node: String, _ rssi: Double, _ t: Double) -> BeaconReading {
        var r = BeaconReading(id: id, node: node, ts: t, seq: UInt64(t * 10) + (node == "k" ? 0 : 1), rssi: Int(rssi),
                              rssiFiltered: rssi, power: -59, distance: 2, proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
        r.interval = 1
        return r
    }

    @Test func aResumedBeaconNotHeardYetKeepsItsRoomUntilTheAwayTimeout() throws {
        var engine = FusionEngine(site: site)
        let retained = PresenceDecision(id: id, name: "Cat", room: "kitchen", floor: 0, distance: 2, confidence: 0.9,
                                        node: "k", since: 50, lastSeen: 99, evidence: [], ts: 99)
        engine.resume(retained, now: 100)
        // A slow advertiser is not heard in the first seconds after the restart: no flap.
        for t in stride(from: 100.0, through: 129, by: 1) {
            #expect(engine.tick(now: t).isEmpty, "at \(t)")
        }
        #expect(engine.decision(for: id)?.room == "kitchen")
        // Never heard again: away once the timeout has passed since the resume.
        let away = try #require(engine.tick(now: 131).first)
        #expect(away.room == nil && away.reason == "timeout")
    }

    /// A retained decision's times and confidence come from the broker: one last seen in the
    /// future would keep its beacon from ever being forgotten or evicted (`now - lastSeen`
    /// stays negative), filling the table for good. They are taken as no later than now.
    @Test func aDecisionFromTheFutureIsResumedAsOfNow() throws {
        var settings = FusionSettings()
        settings.forgetAfter = 60
        var engine = FusionEngine(site: site, settings: settings)
        let forged = PresenceDecision(id: id, name: nil, room: nil, floor: nil, distance: nil, confidence: 1e300,
                                      node: nil, since: 1e300, lastSeen: 1e300, evidence: [], ts: 1e300)
        engine.resume(forged, now: 100)
        let resumed = try #require(engine.decision(for: id))
        #expect(resumed.lastSeen == 100 && resumed.since == 100)
        _ = engine.tick(now: 200)
        #expect(engine.decision(for: id) == nil, "forgotten after forget_after like any away beacon")
    }

    @Test func aDecisionForAnotherPartitionsRoomIsNotResumed() {
        var engine = FusionEngine(site: site)
        let upstairs = PresenceDecision(id: id, name: "Cat", room: "attic", floor: 2, distance: 2, confidence: 0.9,
                                        node: "attic-pi", since: 50, lastSeen: 99, evidence: [], ts: 99)
        engine.resume(upstairs, now: 100)
        #expect(engine.decision(for: id) == nil)
        #expect(engine.allDecisions().isEmpty)
    }

    @Test func resumedRoomHoldsAgainstAnEvenSignalAndYieldsToARealMove() {
        var engine = FusionEngine(site: site)
        let retained = PresenceDecision(id: id, name: "Cat", room: "kitchen", floor: 0, distance: 2, confidence: 0.9,
                                        node: "k", since: 50, lastSeen: 99, evidence: [], ts: 99)
        engine.resume(retained, now: 100)
        #expect(engine.decision(for: id)?.room == "kitchen")
        // In force from the resume, and encodable before any evaluation (a refresh
        // right after a restart publishes it).
        #expect(engine.decision(for: id)?.ts == 100)
        #expect(engine.allDecisions().allSatisfy { $0.ts.isFinite })
        // Both nodes hear it about equally for 20 s: no reason to move.
        var changes: [PresenceDecision] = []
        for t in stride(from: 100.0, to: 120, by: 1) {
            engine.ingest(reading("k", -70 + (t.truncatingRemainder(dividingBy: 2) == 0 ? 1 : -1), t), now: t)
            engine.ingest(reading("o", -70, t), now: t)
            changes += engine.tick(now: t + 0.5)
        }
        #expect(changes.allSatisfy { $0.room == "kitchen" }, "a restart is not a move: \(changes.map(\.room))")
        #expect(engine.decision(for: id)?.since == 50)
        // Then it clearly goes to the office.
        for t in stride(from: 120.0, to: 150, by: 1) {
            engine.ingest(reading("k", -85, t), now: t)
            engine.ingest(reading("o", -55, t), now: t)
            changes += engine.tick(now: t + 0.5)
        }
        #expect(engine.decision(for: id)?.room == "office")
    }
}
