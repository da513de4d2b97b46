import Foundation
import Testing
@testable import RoomcastFusion
import RoomcastSimulation
import Shared

@Suite struct FusionEngineTests {
    /// Feeds both nodes at 5 Hz with gaussian noise around per-node means given by
    /// `means(t)`; ticks every 0.1 s. Returns every decision change with its time.
    static func drive<E: PresenceEstimator>(_ engine: inout E, from t0: Double, to t1: Double, sigma: Double,
                                            seed: UInt64, means: (Double) -> [String: Double]) -> [(Double, PresenceDecision)] {
        var rng = SeededRandom(seed: seed)
        var synth = Synthetic()
        var out: [(Double, PresenceDecision)] = []
        var t = t0
        var step = 0
        while t < t1 {
            if step % 2 == 0 {
                for (node, mean) in means(t).sorted(by: { $0.key < $1.key }) {
                    engine.ingest(synth.reading(node, rssi: mean + rng.gaussian(sigma: sigma), at: t), now: t + 0.05)
                }
            }
            for d in engine.tick(now: t + 0.05) { out.append((t + 0.05, d)) }
            step += 1
            t = t0 + Double(step) * 0.1
        }
        return out
    }

    @Test(arguments: [3.0, 5.0])
    func stillBeaconBetweenTwoNodesDoesNotFlap(sigma: Double) {
        // A beacon a little nearer the kitchen node (3 dB) with noisy packets, for an hour.
        let means: (Double) -> [String: Double] = { _ in ["n-kitchen": -72, "n-office": -75] }
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        let changes = Self.drive(&engine, from: 1000, to: 4600, sigma: sigma, seed: 1, means: means)
        // The first reading may mislead (one packet each); after that, no change at all.
        #expect(changes.filter { $0.0 > 1010 }.isEmpty)
        #expect(engine.decision(for: Synthetic.tag)?.room == "kitchen")

        // The same data through a nearest-node rule without hysteresis flaps: the test has teeth.
        var naive = NearestNoHysteresis()
        let naiveChanges = Self.drive(&naive, from: 1000, to: 4600, sigma: sigma, seed: 1, means: means)
        #expect(naiveChanges.count > 100)
    }

    /// On a site that lists no nodes, any client may announce nodes, each a room. `max_beacons`
    /// and `max_nodes` each bounded a table, but the evidence is their product: 512 such nodes
    /// and a full beacon table made 655 MB. Automatic nodes stop at the slot budget.
    @Test func automaticNodesStayWithinTheEvidenceBudget() {
        var engine = FusionEngine(site: SiteModel())
        var synth = Synthetic()
        for n in 0..<300 { engine.ingest(synth.reading("pi-\(n)", rssi: -60, at: 10), now: 10) }
        #expect(engine.nodes.count == 104, "2097152 slots ÷ 20000 beacons: \(engine.nodes.count) nodes")
        #expect(engine.automaticNodeLimit * engine.settings.maxBeacons <= FusionEngine.automaticSlotBudget)
        // The slots per beacon grow by doubling, but stop at the limit.
        #expect(engine.nodeStride * engine.settings.maxBeacons <= FusionEngine.automaticSlotBudget, "stride \(engine.nodeStride)")
    }

    @Test func exactTieFlapsRarely() {
        // Exactly between the nodes, 5 dB noise: no rule can know the room; the
        // filter should still hold each choice for minutes, not seconds.
        let means: (Double) -> [String: Double] = { _ in ["n-kitchen": -72, "n-office": -72] }
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        let changes = Self.drive(&engine, from: 1000, to: 4600, sigma: 5, seed: 7, means: means)
        var naive = NearestNoHysteresis()
        let naiveChanges = Self.drive(&naive, from: 1000, to: 4600, sigma: 5, seed: 7, means: means)
        #expect(changes.count <= 90, "\(changes.count) changes in an hour")
        #expect(changes.count * 50 < naiveChanges.count)
    }

    @Test func realMoveSwitchesWithinSeconds() throws {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        let changes = Self.drive(&engine, from: 0, to: 300, sigma: 5, seed: 2) { t in
            t < 150 ? ["n-kitchen": -60, "n-office": -78] : ["n-kitchen": -78, "n-office": -60]
        }
        #expect(rooms(changes.map(\.1)) == ["kitchen", "office"])
        let move = try #require(changes.last)
        // Both nodes' fast averages part from their slow ones: the model sees the beacon moving,
        // and the room follows at the moving pace.
        #expect(move.0 > 150 && move.0 < 153, "switched \(move.0 - 150) s after the move")
        #expect(move.1.reason == "moved_nearest")
        #expect(move.1.since == move.0)
    }

    @Test func anOfflineNodeIsMissingNotSilent() throws {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        let before = Self.drive(&engine, from: 0, to: 20, sigma: 1, seed: 3) { _ in ["n-kitchen": -60, "n-office": -70] }
        #expect(rooms(before.map(\.1)) == ["kitchen"])
        // The kitchen's node restarts while the beacon sits in the kitchen: the office still
        // hears it as from the kitchen, so it stays there, longer than the away timeout.
        engine.nodeStatus("n-kitchen", online: false, now: 20.01)
        #expect(engine.tick(now: 20.01).isEmpty)
        // Its in-flight readings no longer count.
        var synth = Synthetic()
        synth.seq["n-kitchen"] = 10_000
        engine.ingest(synth.reading("n-kitchen", rssi: -50, at: 20.02), now: 20.03)
        #expect(engine.counters.rejected(.nodeOffline) == 1)
        let sitting = Self.drive(&engine, from: 20.1, to: 80, sigma: 1, seed: 4) { _ in ["n-office": -70] }
        #expect(sitting.isEmpty, "\(sitting.map { ($0.0, $0.1.room ?? "away") })")
        let held = try #require(engine.decision(for: Synthetic.tag))
        #expect(held.room == "kitchen")
        #expect(!held.evidence.contains { $0.node == "n-kitchen" })
        // It walks to the office while the kitchen's node is still down: followed.
        let walked = Self.drive(&engine, from: 80, to: 100, sigma: 1, seed: 5) { _ in ["n-office": -55] }
        let move = try #require(walked.last)
        #expect(rooms(walked.map(\.1)) == ["office"])
        #expect(move.1.reason == "moved_nearest")
        #expect(move.0 < 85, "followed \(move.0 - 80) s after the move")
        // Last node gone too (a Wi-Fi outage takes them all): no evidence is not away. Until the
        // beacon would have gone away nothing changes; from then it holds its room, marked as
        // held, however long the nodes stay down.
        engine.nodeStatus("n-office", online: false, now: 100.1)
        #expect(engine.tick(now: 100.1).isEmpty, "a node gone a moment ago changes nothing shown")
        #expect(engine.tick(now: 125).isEmpty)
        let outage = try #require(engine.tick(now: 131).first)
        #expect(outage.room == "office" && outage.reason == "nodes_offline" && outage.confidence == 0)
        #expect(engine.tick(now: 200).isEmpty, "no away while the nodes that heard it are down")
        // The office node is back and hears it: held no more.
        engine.nodeStatus("n-office", online: true, now: 300)
        engine.ingest(synth.reading("n-office", rssi: -60, at: 300.5), now: 300.5)
        let back = try #require(engine.tick(now: 301).first)
        #expect(back.room == "office" && back.reason == "returned")
        // Up but not hearing it: away after the away timeout, counted from the reading.
        #expect(engine.tick(now: 320).isEmpty)
        let away = try #require(engine.tick(now: 331).first)
        #expect(away.room == nil && away.reason == "timeout")
    }

    @Test func whatAnOfflineNodeHeardEndsWhenTheBeaconGoesAway() throws {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        _ = Self.drive(&engine, from: 0, to: 20, sigma: 1, seed: 7) { _ in ["n-kitchen": -55, "n-office": -75] }
        #expect(engine.decision(for: Synthetic.tag)?.room == "kitchen")
        // The kitchen's node goes down for good, and the beacon leaves the house.
        engine.nodeStatus("n-kitchen", online: false, now: 20.01)
        _ = Self.drive(&engine, from: 20.1, to: 25, sigma: 1, seed: 8) { _ in ["n-office": -75] }
        let left = engine.tick(now: 70)
        #expect(left.last?.room == nil && left.last?.reason == "timeout")
        // Back hours later in the office, heard by the office's node less loudly than the kitchen's
        // heard it before it went down: the office, not a room on the word of a node long gone.
        let back = Self.drive(&engine, from: 7200, to: 7210, sigma: 1, seed: 9) { _ in ["n-office": -62] }
        #expect(back.map(\.1.room) == ["office"], "\(back.map { ($0.0, $0.1.room ?? "away") })")
    }

    @Test func aSwitchSaysWhenItsEvidenceBeganToLead() throws {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        _ = Self.drive(&engine, from: 0, to: 30, sigma: 1, seed: 5) { _ in ["n-kitchen": -60, "n-office": -72] }
        #expect(engine.switchEvidenceSince(for: Synthetic.tag) == nil, "no switch yet")
        let moved = Self.drive(&engine, from: 30, to: 60, sigma: 1, seed: 6) { _ in ["n-kitchen": -72, "n-office": -60] }
        let change = try #require(moved.map(\.1).first { $0.room == "office" })
        let lead = try #require(engine.switchEvidenceSince(for: Synthetic.tag))
        #expect(lead >= 30 && lead <= change.since, "the lead began after the move (30 s) and before the switch (\(change.since)): \(lead)")
    }

    @Test func aNodeBackFromOfflineCountsSilenceFromItsReturn() throws {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        _ = Self.drive(&engine, from: 0, to: 20, sigma: 1, seed: 4) { _ in ["n-kitchen": -60] }
        engine.nodeStatus("n-kitchen", online: false, now: 20)
        #expect(engine.tick(now: 20.5).isEmpty)
        #expect(engine.tick(now: 51).first?.reason == "nodes_offline")
        // Back after ten minutes, and the beacon has left meanwhile: away once the node has
        // listened for the away timeout, not at once for the ten minutes it was down.
        engine.nodeStatus("n-kitchen", online: true, now: 620)
        #expect(engine.tick(now: 621).isEmpty)
        #expect(engine.tick(now: 645).isEmpty)
        let away = try #require(engine.tick(now: 651).first)
        #expect(away.room == nil && away.reason == "timeout")
    }

    @Test func awayAfterTimeoutAndAdaptiveToSlowAdvertisers() throws {
        var settings = FusionSettings()
        settings.awayTimeout = 30
        // A fast beacon (0.2 s) goes away 30 s after its last reading.
        var fast = FusionEngine(site: Synthetic.twoRooms, settings: settings)
        _ = Self.drive(&fast, from: 0, to: 10, sigma: 1, seed: 4) { _ in ["n-kitchen": -60] }
        let last = try #require(fast.decision(for: Synthetic.tag)?.lastSeen)
        #expect(fast.tick(now: last + 29).isEmpty)
        #expect(fast.decision(for: Synthetic.tag)?.room == "kitchen")
        let away = try #require(fast.tick(now: last + 30.5).first)
        #expect(away.room == nil && away.reason == "timeout")
        #expect(fast.tick(now: last + 40).isEmpty)  // notified once

        // A beacon heard every 10 s stays put between readings and goes away after 5 × 10 s.
        var slow = FusionEngine(site: Synthetic.twoRooms, settings: settings)
        var synth = Synthetic()
        var decisions: [PresenceDecision] = []
        for t in stride(from: 0.0, through: 300, by: 10) {
            slow.ingest(synth.reading("n-kitchen", rssi: -65, at: t, interval: 10), now: t + 0.1)
            for k in 1...10 { decisions += slow.tick(now: t + Double(k)) }
        }
        #expect(rooms(decisions) == ["kitchen"])
        #expect(slow.tick(now: 345).isEmpty)
        #expect(slow.decision(for: Synthetic.tag)?.room == "kitchen")
        let slowAway = try #require(slow.tick(now: 351).first)
        #expect(slowAway.room == nil)
    }

    @Test func returnsAfterAway() throws {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        var synth = Synthetic()
        engine.ingest(synth.reading("n-office", rssi: -60, at: 0), now: 0)
        // A first room waits `initial_wait` (2 s) for every node to report, and for a beacon
        // the site does not list, for readings that span it.
        #expect(engine.tick(now: 0.1).isEmpty)
        #expect(engine.tick(now: 2.1).isEmpty)
        for t in [1.0, 2.0] { engine.ingest(synth.reading("n-office", rssi: -60, at: t), now: t) }
        #expect(engine.tick(now: 3.1).first?.room == "office")
        #expect(engine.tick(now: 33).first?.room == nil)
        engine.ingest(synth.reading("n-kitchen", rssi: -60, at: 100), now: 100)
        let back = try #require(engine.tick(now: 100.1).first)
        #expect(back.room == "kitchen" && back.reason == "returned" && back.since == 100.1)
    }

    @Test("a first room waits for every node to report: the one that happened to report first does not take it")
    func firstRoomWaitsForTheNodes() {
        // The office node reports a faint reading at 0 s; the kitchen node, beside the
        // beacon, reports at 1 s (agents publish once a second, each on its own phase).
        func firstRooms(_ settings: FusionSettings) -> [String?] {
            var engine = FusionEngine(site: Synthetic.twoRooms, settings: settings)
            var synth = Synthetic()
            var rooms: [String?] = []
            for t in stride(from: 0.0, through: 30, by: 1) {
                engine.ingest(synth.reading("n-office", rssi: -78, at: t), now: t)
                if t >= 1 { engine.ingest(synth.reading("n-kitchen", rssi: -58, at: t), now: t) }
                rooms += engine.tick(now: t + 0.5).map(\.room)
            }
            return rooms
        }
        var eager = FusionSettings()
        eager.initialWait = 0
        #expect(firstRooms(eager).first == "office")
        #expect(firstRooms(FusionSettings()) == ["kitchen"])
    }

    @Test func skewedFutureDuplicateAndOutOfOrderReadings() throws {
        var site = Synthetic.twoRooms
        site.beacons = [.init(id: Synthetic.tag, name: "keys")]
        var engine = FusionEngine(site: site, settings: FusionSettings())
        var synth = Synthetic()
        let now = 1000.0
        // Slightly ahead (node clock skew within the bound): used, clamped silently.
        engine.ingest(synth.reading("n-kitchen", rssi: -60, at: now + 1), now: now)
        #expect(engine.counters.accepted == 1 && engine.counters.clampedSkew == 0)
        // Beyond the skew bound but not absurd: clamped to now and counted.
        engine.ingest(synth.reading("n-office", rssi: -70, at: now + 10), now: now)
        #expect(engine.counters.accepted == 2 && engine.counters.clampedSkew == 1)
        _ = engine.tick(now: now + 2)
        let d = try #require(engine.decision(for: Synthetic.tag))
        #expect(d.lastSeen == now)
        #expect(d.name == "keys")
        // Far future and far past: rejected.
        engine.ingest(synth.reading("n-kitchen", rssi: -60, at: now + 3600), now: now)
        engine.ingest(synth.reading("n-kitchen", rssi: -60, at: now - 3600), now: now)
        #expect(engine.counters.rejected(.tooFarFuture) == 1)
        #expect(engine.counters.rejected(.tooOld) == 1)
        // Duplicate: same node, same sequence number.
        var dup = synth.reading("n-kitchen", rssi: -60, at: now + 0.5)
        engine.ingest(dup, now: now + 0.5)
        engine.ingest(dup, now: now + 0.6)
        #expect(engine.counters.rejected(.duplicate) == 1)
        // Out of order: an older sequence number from an older capture time.
        dup.seq -= 3
        dup.ts = now + 0.2
        engine.ingest(dup, now: now + 0.7)
        #expect(engine.counters.rejected(.outOfOrder) == 1)
        // A lower sequence number with a newer capture time is an agent restart: accepted.
        dup.seq = 1
        dup.ts = now + 2
        let accepted = engine.counters.accepted
        engine.ingest(dup, now: now + 2)
        #expect(engine.counters.accepted == accepted + 1)
        // Garbage and strangers.
        engine.ingest(synth.reading("n-kitchen", rssi: .nan, at: .nan), now: now + 3)
        engine.ingest(synth.reading("n-kitchen", rssi: -60, at: now + 3, id: Synthetic.other), now: now + 3)
        #expect(engine.counters.rejected(.invalid) == 1)
        #expect(engine.counters.rejected(.unknownBeacon) == 1)
        #expect(engine.counters.rejectedTotal == 6)
    }

    @Test func decisionExplainsItself() throws {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        _ = Self.drive(&engine, from: 0, to: 10, sigma: 1, seed: 5) { _ in ["n-kitchen": -60, "n-office": -70] }
        let d = try #require(engine.decision(for: Synthetic.tag))
        #expect(d.room == "kitchen" && d.runnerUp == "office" && d.node == "n-kitchen")
        #expect(d.floor == 0)
        #expect(d.confidence > 0.9 && d.confidence <= 1)
        #expect(try #require(d.margin) > 0.8)
        #expect(d.evidence.map(\.node) == ["n-kitchen", "n-office"])
        #expect(d.evidence.allSatisfy { $0.ts <= 10 && $0.ts > 9 })
        #expect(d.position == nil)
        #expect(engine.allDecisions() == [d])
    }

    @Test func unconfiguredNodesBecomeRooms() throws {
        var engine = FusionEngine(site: SiteModel(), settings: FusionSettings())
        var synth = Synthetic()
        for t in [0.0, 1.0, 2.0] {
            engine.ingest(synth.reading("garage", rssi: -60, at: t), now: t)
            engine.ingest(synth.reading("hall", rssi: -75, at: t), now: t)
        }
        let d = try #require(engine.tick(now: 2.1).first)
        #expect(d.room == "garage" && d.runnerUp == "hall")

        var strict = FusionSettings()
        strict.autoNodes = false
        var closed = FusionEngine(site: Synthetic.twoRooms, settings: strict)
        closed.ingest(synth.reading("garage", rssi: -60, at: 0), now: 0)
        #expect(closed.counters.rejected(.unknownNode) == 1)
    }

    @Test func capacityAndForgetting() {
        var settings = FusionSettings()
        settings.maxBeacons = 1
        settings.forgetAfter = 100
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: settings)
        var synth = Synthetic()
        for t in stride(from: 0.0, through: 3, by: 1) { engine.ingest(synth.reading("n-kitchen", rssi: -60, at: t), now: t) }
        #expect(engine.tick(now: 3.1).first?.room == "kitchen")
        // The table is full of a beacon in a room that is being heard: a newcomer is refused.
        engine.ingest(synth.reading("n-kitchen", rssi: -60, at: 3.2, id: Synthetic.other), now: 3.2)
        #expect(engine.counters.rejected(.capacity) == 1)
        var away = engine.tick(now: 40).first     // away
        #expect(away?.room == nil)
        away?.ts = 200
        _ = engine.tick(now: 200)    // forgotten: its slot is free again
        #expect(engine.trackedBeacons == 0 && engine.counters.forgotten == 1)
        // It goes with the away in force, which the aggregator refreshes for a listed beacon.
        #expect(engine.takeDropped() == [DroppedBeacon(id: Synthetic.tag, reason: .forgotten, lastSeen: 3, decision: away)])
        #expect(engine.decision(for: Synthetic.tag) == nil)
        for t in stride(from: 200.0, through: 203, by: 1) {
            engine.ingest(synth.reading("n-kitchen", rssi: -60, at: t, id: Synthetic.other), now: t)
        }
        #expect(engine.tick(now: 203.1).first?.id == Synthetic.other)
    }

    @Test func aStrangerNeverInARoomMakesWayForANewcomer() {
        var settings = FusionSettings()
        settings.maxBeacons = 1
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: settings)
        var synth = Synthetic()
        engine.ingest(synth.reading("n-kitchen", rssi: -60, at: 0), now: 0)
        // One advertisement is no beacon in a room: it is not placed, and gives way.
        #expect(engine.tick(now: 3).isEmpty)
        engine.ingest(synth.reading("n-office", rssi: -60, at: 3.1, id: Synthetic.other), now: 3.1)
        #expect(engine.counters.evicted == 1 && engine.counters.rejected(.capacity) == 0)
        #expect(engine.takeDropped() == [DroppedBeacon(id: Synthetic.tag, reason: .evictedStranger, lastSeen: 0)])
        for t in stride(from: 4.0, through: 6, by: 1) {
            engine.ingest(synth.reading("n-office", rssi: -60, at: t, id: Synthetic.other), now: t)
        }
        let placed = engine.tick(now: 6.1)
        #expect(placed.map(\.id) == [Synthetic.other] && placed.first?.room == "office")
    }
}

/// Latest reading wins: the strongest node's room, re-decided on every tick.
struct NearestNoHysteresis: PresenceEstimator {
    var latest: [String: Double] = [:]
    var room: String?
    mutating func ingest(_ reading: BeaconReading, now: Double) { latest[reading.node] = reading.rssiFiltered }
    mutating func nodeStatus(_ node: String, online: Bool, now: Double) {}
    mutating func tick(now: Double) -> [PresenceDecision] {
        guard let best = latest.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }) else { return [] }
        let r = best.key == "n-kitchen" ? "kitchen" : "office"
        guard r != room else { return [] }
        room = r
        return [PresenceDecision(id: Synthetic.tag, name: nil, room: r, floor: 0, distance: nil, confidence: 1,
                                 node: best.key, since: now, lastSeen: now, evidence: [], ts: now)]
    }
    func decision(for id: BeaconID) -> PresenceDecision? { nil }
}
