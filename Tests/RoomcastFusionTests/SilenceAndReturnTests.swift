import Foundation
import Testing
@testable import RoomcastFusion
import Shared

/// What silences say, and what they do not: a stranger never placed, a node that comes and
/// goes, the aggregator's own deafness, a link heard again after a long gap, a node far off
/// the plan.
@Suite struct SilenceAndReturnTests {
    /// A stranger (the site lists no beacons) heard once, silent past the away timeout, then
    /// heard once more: still no beacon in a room. Its initial wait starts again; heard for it,
    /// it is placed; silent for `forget_after` without a room, it is forgotten.
    @Test func aStrangerNeverPlacedWaitsAgainWhenHeardAgain() throws {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        var synth = Synthetic()
        engine.ingest(synth.reading("n-kitchen", rssi: -60, at: 10), now: 10)
        for t in stride(from: 10.5, through: 60, by: 0.5) { #expect(engine.tick(now: t).isEmpty) }
        engine.ingest(synth.reading("n-kitchen", rssi: -60, at: 70), now: 70)
        for t in stride(from: 70.5, through: 71.5, by: 0.5) {
            #expect(engine.tick(now: t).isEmpty, "one more advertisement placed a stranger at \(t)")
        }
        #expect(engine.decision(for: Synthetic.tag) == nil)
        // Heard over its initial wait: placed, as any newcomer.
        var placed: [PresenceDecision] = []
        for t in stride(from: 80, through: 84, by: 0.5) {
            engine.ingest(synth.reading("n-kitchen", rssi: -60, at: t), now: t)
            placed += engine.tick(now: t + 0.1)
        }
        #expect(placed.map(\.room) == ["kitchen"] && placed.first?.reason == "initial")

        // Another stranger heard once and never again is forgotten, not kept for good.
        engine.ingest(synth.reading("n-office", rssi: -60, at: 100, id: Synthetic.other), now: 100)
        _ = engine.tick(now: 101)
        #expect(engine.trackedBeacons == 2)
        _ = engine.tick(now: 100 + engine.settings.forgetAfter + 1)
        #expect(engine.trackedBeacons == 1, "the stranger never placed is forgotten")
    }

    /// A node that comes back says something about the beacons it was hearing when it went
    /// down, nothing about one it had not heard for long: a flaky node reconnecting every 20 s
    /// does not keep a beacon that has left at home.
    @Test func aFlakyNodeDoesNotKeepABeaconThatLeftAtHome() throws {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        // In the kitchen, then in the office for a while, heard there only.
        _ = FusionEngineTests.drive(&engine, from: 0, to: 20, sigma: 1, seed: 1) { _ in ["n-kitchen": -60, "n-office": -75] }
        _ = FusionEngineTests.drive(&engine, from: 20, to: 200, sigma: 1, seed: 2) { _ in ["n-office": -60] }
        #expect(engine.decision(for: Synthetic.tag)?.room == "office")
        // It leaves at 200; the kitchen's node drops off and comes back every 20 s.
        var away: PresenceDecision?
        for t in stride(from: 200.5, through: 400, by: 0.5) {
            if t.truncatingRemainder(dividingBy: 20) == 0 { engine.nodeStatus("n-kitchen", online: false, now: t) }
            if t.truncatingRemainder(dividingBy: 20) == 1 { engine.nodeStatus("n-kitchen", online: true, now: t) }
            if let d = engine.tick(now: t).first(where: { $0.room == nil }) { away = d; break }
        }
        let left = try #require(away, "the beacon never went away")
        #expect(left.reason == "timeout" && left.ts < 200 + engine.settings.awayTimeout + 2, "away at \(left.ts)")
    }

    /// The only node that hears a beacon drops out, comes back and drops out again before it
    /// has sent anything: one outage, not a second one that began long after the beacon was
    /// last heard. Back for good, its return counts, and the beacon stays in its room.
    @Test func aNodeDroppingOutTwiceIsOneOutage() throws {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        _ = FusionEngineTests.drive(&engine, from: 0, to: 20, sigma: 1, seed: 6) { _ in ["n-kitchen": -60] }
        engine.nodeStatus("n-kitchen", online: false, now: 20)
        #expect(engine.tick(now: 51).first?.reason == "nodes_offline")
        engine.nodeStatus("n-kitchen", online: true, now: 80)
        engine.nodeStatus("n-kitchen", online: false, now: 82)
        engine.nodeStatus("n-kitchen", online: true, now: 90)
        var synth = Synthetic()
        synth.seq["n-kitchen"] = 10_000
        // Back, and not yet heard from: its silence counts from its return.
        var after = engine.tick(now: 90.1)
        for t in stride(from: 90.5, through: 95, by: 0.5) {
            engine.ingest(synth.reading("n-kitchen", rssi: -60, at: t), now: t)
            after += engine.tick(now: t + 0.1)
        }
        #expect(!after.contains { $0.room == nil }, "\(after.map { ($0.ts, $0.room ?? "away", $0.reason ?? "") })")
        #expect(engine.decision(for: Synthetic.tag)?.room == "kitchen")
    }

    /// The aggregator deaf for 40 s (a broker restart) while a beacon sits in the kitchen: when
    /// it hears again, the gap is its own, not the beacon's; no return to the kitchen is
    /// counted in the departure counts kept in the state file.
    @Test func theAggregatorsDeafnessCountsNoReturn() throws {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        _ = FusionEngineTests.drive(&engine, from: 0, to: 20, sigma: 1, seed: 3) { _ in ["n-kitchen": -60, "n-office": -75] }
        #expect(engine.decision(for: Synthetic.tag)?.room == "kitchen")
        engine.hearingRestored(at: 60)
        let after = FusionEngineTests.drive(&engine, from: 60, to: 70, sigma: 1, seed: 4) { _ in ["n-kitchen": -60, "n-office": -75] }
        #expect(after.isEmpty && engine.decision(for: Synthetic.tag)?.room == "kitchen")
        let kitchen = engine.learnedRooms.departures.first { $0.room == "kitchen" }
        #expect((kitchen?.returned ?? 0) == 0, "\(engine.learnedRooms.departures)")
    }

    /// A link heard again after `max_age` starts over: its averages warm up again, as a link
    /// heard for the first time.
    @Test func aLinkHeardAgainAfterMaxAgeWarmsUpAgain() throws {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        _ = FusionEngineTests.drive(&engine, from: 0, to: 30, sigma: 1, seed: 5) { _ in ["n-kitchen": -60] }
        let b = try #require(engine.beaconIndex[Synthetic.tag])
        let n = try #require(engine.nodes.firstIndex { $0.name == "n-kitchen" })
        #expect(engine.slots[b * engine.nodeStride + n].count > 100)
        var synth = Synthetic()
        synth.seq["n-kitchen"] = 1_000
        engine.ingest(synth.reading("n-kitchen", rssi: -70, at: 30 + engine.settings.maxAge + 5), now: 30 + engine.settings.maxAge + 5)
        #expect(engine.slots[b * engine.nodeStride + n].count == 1)
        // The next reading moves the slow average as a running mean would (halfway), not by
        // the slow time constant's sliver.
        engine.ingest(synth.reading("n-kitchen", rssi: -60, at: 30 + engine.settings.maxAge + 5.2), now: 30 + engine.settings.maxAge + 5.2)
        #expect(abs(engine.slots[b * engine.nodeStride + n].slow - -65) < 0.01)
    }

    /// A node placed far off the plan (positions in millimetres, polygons in metres) costs
    /// the samples over the plan only, not one every few centimetres of kilometres.
    @Test func wallsAreSampledOverThePlanOnly() throws {
        let raster = try DoorwayTests.raster(doorways: [])
        let steps = 200_000  // 6.5 km at the raster's half step
        let span = try #require(raster.samplesOverRaster(fromX: 6_500, fromY: 2, dx: -6_498, dy: 0, steps: steps))
        #expect(span.last - span.first < 300, "\(span)")
        #expect(raster.samplesOverRaster(fromX: 100, fromY: 100, dx: 10, dy: 0, steps: 10) == nil)
        // The same walls as sampling the whole segment.
        #expect(raster.walls(fromX: 6_500, fromY: 2, toX: 2, toY: 2) == 1)
        #expect(raster.walls(fromX: -3_000, fromY: 2, toX: 6, toY: 2) == 1)
        #expect(raster.walls(fromX: 2, fromY: 2, toX: 3, toY: 3) == 0)
    }
}

/// On a site that lists no nodes, each node heard becomes a room. A node taken away leaves its
/// retained `offline` on the broker, read at every start: made into a room on that word alone, it
/// was a room no node hears, for good.
@Suite struct NodeHeardOfOnlyAsOfflineTests {
    static let tag = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1-9")!

    @Test func aNodeHeardOfOnlyAsOfflineIsNoRoom() throws {
        var engine = FusionEngine(site: SiteModel(rooms: [], nodes: []), settings: FusionSettings())
        engine.nodeStatus("old-pi", online: false, now: 0)
        engine.nodeStatus("hall-pi", online: true, now: 0)
        var synth = Synthetic()
        for t in stride(from: 0.0, to: 20, by: 0.2) {
            engine.ingest(synth.reading("hall-pi", rssi: -60, at: t, id: Self.tag), now: t)
            _ = engine.tick(now: t)
        }
        #expect(engine.decision(for: Self.tag)?.room == "hall-pi")
        #expect(engine.roomNames == ["hall-pi"], "\(engine.roomNames)")
        // Heard from after all (it was switched off, not taken away): a room, and a node like any other.
        engine.ingest(synth.reading("old-pi", rssi: -80, at: 20, id: Self.tag), now: 20)
        #expect(engine.roomNames == ["hall-pi", "old-pi"])
    }

    /// A node offline when the aggregator starts (its retained `offline` read before the presence
    /// held for it): the beacon resumed in its room makes it, offline, and stays held there, not
    /// sent away.
    @Test func aBeaconResumedInAnOfflineNodesRoomIsHeld() throws {
        var engine = FusionEngine(site: SiteModel(rooms: [], nodes: []), settings: FusionSettings())
        engine.nodeStatus("den-pi", online: false, now: 100)
        var retained = PresenceDecision(id: Self.tag, name: nil, room: "den-pi", floor: 0, distance: 1, confidence: 0,
                                        node: "den-pi", since: 50, lastSeen: 60, evidence: [], ts: 99)
        retained.reason = "nodes_offline"
        engine.resume(retained, now: 100)
        #expect(engine.roomNames == ["den-pi"])
        var published: [PresenceDecision] = []
        for t in stride(from: 100.0, through: 400, by: 1) { published += engine.tick(now: t) }
        #expect(!published.contains { $0.room == nil }, "\(published.map { ($0.ts, $0.reason ?? "") })")
        #expect(engine.decision(for: Self.tag)?.room == "den-pi")
    }

    /// Names any client can announce fill the list of nodes heard of only as offline: a real
    /// node's `offline` heard after them is still kept, and the node it makes starts offline.
    @Test func namesAnnouncedByAStrangerDoNotLockARealNodesOfflineOut() throws {
        var engine = FusionEngine(site: SiteModel(rooms: [], nodes: []), settings: FusionSettings())
        for i in 0..<(engine.automaticNodeLimit + 10) {
            engine.nodeStatus("forged-\(i)", online: false, now: Double(i) / 1000)
        }
        #expect(engine.offlineBeforeMade.count == engine.automaticNodeLimit)
        engine.nodeStatus("den-pi", online: false, now: 100)
        var retained = PresenceDecision(id: Self.tag, name: nil, room: "den-pi", floor: 0, distance: 1, confidence: 0,
                                        node: "den-pi", since: 50, lastSeen: 60, evidence: [], ts: 99)
        retained.reason = "nodes_offline"
        engine.resume(retained, now: 100)
        let den = try #require(engine.nodes.first { $0.name == "den-pi" })
        #expect(!den.online && den.offlineSince == 100)
        #expect(engine.offlineBeforeMade.count == engine.automaticNodeLimit - 1)
    }
}
