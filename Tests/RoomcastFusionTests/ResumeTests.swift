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
        engine.nodeHeard("k", now: 100.5)  // its heartbeat: the kitchen's node is listening
        // A slow advertiser is not heard in the first seconds after the restart: no flap.
        for t in stride(from: 100.0, through: 129, by: 1) {
            #expect(engine.tick(now: t).isEmpty, "at \(t)")
        }
        #expect(engine.decision(for: id)?.room == "kitchen")
        // Never heard again: away once the timeout has passed since the resume.
        let away = try #require(engine.tick(now: 131).first)
        #expect(away.room == nil && away.reason == "timeout")
    }

    /// A power cut: the aggregator is back before the Pis, whose retained statuses still say
    /// `online`. Resumed as in force, every beacon went away 30 s after the restart, and every
    /// person `not_home` ("everyone left" automations firing as the power came back). Its node
    /// not heard yet, the beacon is held (marked once it would have gone away); once the node is
    /// heard, its silence counts from then, and heard again it is in its room.
    @Test(arguments: [true, false])
    func aBeaconWhoseNodeIsNotBackYetAfterAPowerCutIsNotSentAway(heardAgain: Bool) throws {
        var engine = FusionEngine(site: site)
        let retained = PresenceDecision(id: id, name: "Cat", room: "kitchen", floor: 0, distance: 2, confidence: 0.9,
                                        node: "k", since: 50, lastSeen: 99,
                                        evidence: [.init(node: "k", room: "kitchen", rssi: -60, distance: 2, ts: 99)], ts: 99)
        engine.resume(retained, now: 100)
        engine.nodeHeard("o", now: 100.5)  // the office's Pi is up; the kitchen's boots for a minute
        var published: [PresenceDecision] = []
        for t in stride(from: 100.0, through: 160, by: 1) { published += engine.tick(now: t) }
        #expect(!published.contains { $0.room == nil }, "\(published.map { ($0.ts, $0.reason ?? "") })")
        #expect(published.map(\.reason) == ["nodes_offline"], "held once it would have gone away: \(published.map { ($0.ts, $0.reason ?? "") })")
        #expect(published.first.map { $0.ts >= 130 && $0.ts <= 132 } == true)
        // Published again, it names its node: a second restart before the Pi is back holds it too.
        #expect(published.first?.node == "k")
        // The kitchen's Pi is back (its first heartbeat at 161).
        engine.nodeHeard("k", now: 161)
        published = []
        if heardAgain {
            for t in stride(from: 161.5, through: 170, by: 0.5) {
                engine.ingest(reading("k", -60, t), now: t)
                published += engine.tick(now: t)
            }
            #expect(engine.decision(for: id).map { $0.room == "kitchen" && $0.reason == "returned" } == true)
        } else {
            // It left while the power was off: away once the node has listened for the timeout.
            for t in stride(from: 161.0, through: 190, by: 1) { published += engine.tick(now: t) }
            #expect(published.isEmpty, "\(published.map { ($0.ts, $0.reason ?? "") })")
            let away = try #require(engine.tick(now: 192).first)
            #expect(away.room == nil && away.reason == "timeout")
        }
    }

    /// A node never heard after the restart (taken away, or renamed where rooms are named after
    /// nodes): after `forget_after_s` it is taken as gone, and the beacon's silence as a silence.
    @Test func aNodeNeverHeardAfterARestartIsTakenAsGoneAfterTheForgetTime() throws {
        var settings = FusionSettings()
        settings.forgetAfter = 600
        var engine = FusionEngine(site: site, settings: settings)
        let retained = PresenceDecision(id: id, name: "Cat", room: "kitchen", floor: 0, distance: 2, confidence: 0.9,
                                        node: "k", since: 50, lastSeen: 99, evidence: [], ts: 99)
        engine.resume(retained, now: 100)
        var published: [PresenceDecision] = []
        for t in stride(from: 100.0, through: 699, by: 1) { published += engine.tick(now: t) }
        #expect(published.map(\.reason) == ["nodes_offline"])
        for t in stride(from: 700.0, through: 702, by: 1) { published += engine.tick(now: t) }
        #expect(published.last.map { $0.room == nil && $0.reason == "timeout" } == true, "\(published.map { ($0.ts, $0.reason ?? "") })")
    }

    /// A tag that advertises every 8 s, resumed in a room on a site whose departure counts favour
    /// leaving (read back from the state file): not heard in the first seconds after a restart,
    /// it was let go after 4 s (five intervals of an interval not known yet) and came back at its
    /// next advertisement: a leave and an enter for a restart. It waits out the away timeout.
    @Test func aResumedSlowAdvertiserIsNotLetGoEarly() throws {
        var engine = FusionEngine(site: site)
        engine.restore(LearnedRooms(departures: [.init(room: "kitchen", left: 3, returned: 0)]))
        let retained = PresenceDecision(id: id, name: "Cat", room: "kitchen", floor: 0, distance: 2, confidence: 0.9,
                                        node: "k", since: 50, lastSeen: 99, evidence: [], ts: 99)
        engine.resume(retained, now: 100)
        for t in stride(from: 100.0, through: 107, by: 0.5) {
            #expect(engine.tick(now: t).isEmpty, "at \(t)")
        }
        var slow = reading("k", -60, 107.5)
        slow.interval = 8
        engine.ingest(slow, now: 107.5)
        for t in stride(from: 108.0, through: 115, by: 0.5) {
            #expect(!engine.tick(now: t).contains { $0.room == nil }, "at \(t)")
        }
        #expect(engine.decision(for: id)?.room == "kitchen")
    }

    /// A tag that advertises every 10 s, seen for the first time (home after an hour away, or
    /// every agent restarted) on a site whose departure counts favour leaving: its first reading
    /// gives no interval (an agent reports one from the second packet on). It is placed once a
    /// second reading has come, with its interval, and the 10 s between its readings are never
    /// taken for leaving, as "five intervals" of an interval not known would be (4 s).
    @Test func aSlowAdvertiserFirstHeardIsNotLetGoBeforeItsIntervalIsKnown() throws {
        var engine = FusionEngine(site: site)
        engine.restore(LearnedRooms(departures: [.init(room: "kitchen", left: 3, returned: 0)]))
        var published: [PresenceDecision] = []
        for (k, t) in [100.0, 110, 120, 130].enumerated() {
            var r = reading("k", -60, t)
            r.seq = UInt64(k + 1)
            r.interval = k == 0 ? nil : 10
            engine.ingest(r, now: t)
            for tick in stride(from: t, to: t + 10, by: 0.5) { published += engine.tick(now: tick) }
        }
        #expect(published.first?.room == "kitchen", "\(published.map { ($0.ts, $0.room ?? "away", $0.reason ?? "") })")
        #expect(!published.contains { $0.room == nil }, "\(published.map { ($0.ts, $0.room ?? "away", $0.reason ?? "") })")
    }

    /// Held for an offline node when the aggregator restarted (its Wi-Fi down, its Last Will
    /// retained): the beacon stays held, as before the restart, for as long as the node is offline.
    /// Resumed as in force, it went away after the timeout (a leave, a person `not_home`) though
    /// no node that could hear it was listening. Once the node is back, its silence counts from
    /// the return; heard again, it is in its room.
    @Test func aBeaconHeldForAnOfflineNodeStaysHeldAcrossARestart() throws {
        var engine = FusionEngine(site: site)
        var held = PresenceDecision(id: id, name: "Cat", room: "kitchen", floor: 0, distance: 2, confidence: 0,
                                    node: "k", since: 50, lastSeen: 90,
                                    evidence: [.init(node: "k", room: "kitchen", rssi: -60, distance: 2, ts: 90)], ts: 95)
        held.reason = "nodes_offline"
        engine.resume(held, now: 100)
        engine.nodeStatus("k", online: false, now: 100)  // its retained status
        var published: [PresenceDecision] = []
        for t in stride(from: 100.0, through: 300, by: 1) { published += engine.tick(now: t) }
        #expect(published.isEmpty, "\(published.map { ($0.room, $0.reason) })")
        let during = try #require(engine.decision(for: id))
        #expect(during.room == "kitchen" && during.reason == "nodes_offline" && during.confidence == 0)
        // Back, but the beacon not heard: away once the timeout has passed since the return.
        engine.nodeStatus("k", online: true, now: 301)
        for t in stride(from: 301.0, through: 330, by: 1) { published += engine.tick(now: t) }
        #expect(published.isEmpty, "\(published.map { ($0.room, $0.reason) })")
        let away = try #require(engine.tick(now: 332).first)
        #expect(away.room == nil && away.reason == "timeout")
    }

    /// The same, heard again once its node is back: in its room, as having returned.
    @Test func aBeaconHeldAcrossARestartIsPlacedWhenHeardAgain() throws {
        var engine = FusionEngine(site: site)
        var held = PresenceDecision(id: id, name: "Cat", room: "kitchen", floor: 0, distance: 2, confidence: 0,
                                    node: "k", since: 50, lastSeen: 90, evidence: [], ts: 95)
        held.reason = "nodes_offline"
        engine.resume(held, now: 100)
        engine.nodeStatus("k", online: false, now: 100)
        for t in stride(from: 100.0, through: 200, by: 1) { #expect(engine.tick(now: t).isEmpty) }
        engine.nodeStatus("k", online: true, now: 201)
        var published: [PresenceDecision] = []
        for t in stride(from: 201.0, through: 210, by: 1) {
            engine.ingest(reading("k", -55, t), now: t)
            engine.ingest(reading("o", -80, t), now: t)
            published += engine.tick(now: t + 0.5)
        }
        #expect(published.first?.room == "kitchen" && published.first?.reason == "returned", "\(published.map { ($0.room, $0.reason) })")
        #expect(!published.contains { $0.room == nil })
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
