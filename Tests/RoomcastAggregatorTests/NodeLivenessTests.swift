import Foundation
import RoomcastFusion
import RoomcastLogging
import Shared
import Testing
@testable import RoomcastAggregator

/// A node that sends heartbeats and goes quiet is missing, not silent (`NodeLiveness`): its Wi-Fi
/// gone or its power cut, its connection stays open at the broker until the keep-alive gives up
/// (45 s at the default), and its beacons went away after the away timeout meanwhile, though
/// nothing was listening.
@Suite struct NodeLivenessTests {
    static let topics = Topics()

    /// The site's fusion engine, the cat heard by the kitchen's node alone.
    struct Site {
        var core = AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore()
        var seq: UInt64 = 0
        var published: [(t: Double, decision: PresenceDecision)] = []

        /// Every second from `from` to `to`: `heartbeats` from both nodes, and the cat heard by
        /// the kitchen's node when `catHeard`.
        mutating func run(from: Double, to: Double, heartbeats: Bool, catHeard: Bool) throws {
            for t in stride(from: from, to: to, by: 0.5) {
                var out: [OutboundMessage] = []
                if t.truncatingRemainder(dividingBy: 1) == 0 {
                    if heartbeats {
                        for node in ["kitchen-pi", "office-pi"] {
                            out += try core.handle(topic: NodeLivenessTests.topics.nodeHeartbeat(node),
                                                   payload: WireFormat.encode(NodeHeartbeat(ts: t)), now: t).messages
                        }
                    }
                    if catHeard {
                        seq += 1
                        out += try core.handle(topic: NodeLivenessTests.topics.nodeBeacon("kitchen-pi", cat),
                                               payload: WireFormat.encode(reading("kitchen-pi", rssi: -55, ts: t, seq: seq)), now: t).messages
                    }
                }
                out += try core.advance(to: t + 0.25)
                published += out.filter { $0.topic == NodeLivenessTests.topics.presence(cat) }
                    .compactMap { try? WireFormat.decode(PresenceDecision.self, from: $0.payload) }.map { (t, $0) }
            }
        }
    }

    /// The whole site's Wi-Fi goes for a minute: no heartbeat and no reading from any node. The
    /// cat stays in the kitchen; where it would have gone away it is held there, marked
    /// `nodes_offline` (Home Assistant shows it unavailable), never away; heard again, it is back
    /// in the kitchen.
    @Test func aSiteWhoseNodesGoQuietHoldsItsBeacons() throws {
        var s = Site()
        _ = try s.core.start(now: 100)
        try s.run(from: 100, to: 130, heartbeats: true, catHeard: true)
        #expect(s.published.last?.decision.room == "kitchen")
        try s.run(from: 130, to: 190, heartbeats: false, catHeard: false)
        let during = s.published.filter { $0.t >= 130 }
        #expect(!during.contains { $0.decision.room == nil }, "away while nothing listened: \(during.map { ($0.t, $0.decision.reason) })")
        let held = try #require(during.first)
        #expect(held.decision.room == "kitchen" && held.decision.reason == "nodes_offline" && held.t >= 158 && held.t <= 162,
                "held at \(held.t), where the away timeout since the cat was last heard would have sent it away: \(held.decision.reason ?? "")")
        #expect(s.core.offline == ["kitchen-pi", "office-pi"])
        try s.run(from: 190, to: 200, heartbeats: true, catHeard: true)
        #expect(s.published.last.map { $0.decision.room == "kitchen" && $0.decision.reason != "nodes_offline" } == true)
        #expect(s.core.offline.isEmpty)
    }

    /// A node's link stalls for 8 s (Wi-Fi roaming, a busy access point): it is quiet past 3 s,
    /// so offline, but the cat it hears has not been silent for the away timeout. Nothing Home
    /// Assistant shows changes: no `nodes_offline` (unavailable) and no `returned` after it. Also
    /// in a room beacons leave from, where a few seconds of silence from a listening node is leaving.
    @Test(arguments: [false, true])
    func aNodesBriefStallChangesNothingShown(kitchenIsAnEntrance: Bool) throws {
        var s = Site()
        if kitchenIsAnEntrance {
            s.core.engine.restore(LearnedRooms(departures: [.init(room: "kitchen", left: 6, returned: 0)]))
        }
        _ = try s.core.start(now: 100)
        try s.run(from: 100, to: 130, heartbeats: true, catHeard: true)
        #expect(s.published.last?.decision.room == "kitchen")
        try s.run(from: 130, to: 138, heartbeats: false, catHeard: false)
        #expect(s.core.offline == ["kitchen-pi", "office-pi"], "quiet for 8 s: offline")
        try s.run(from: 138, to: 160, heartbeats: true, catHeard: true)
        let changes = s.published.filter { $0.t >= 130 && ($0.decision.room != "kitchen" || ["nodes_offline", "returned"].contains($0.decision.reason)) }
        #expect(changes.isEmpty, "\(changes.map { ($0.t, $0.decision.room ?? "away", $0.decision.reason ?? "") })")
        #expect(s.core.engine.decision(for: cat)?.room == "kitchen")
    }

    /// After a restart the cat is resumed in the kitchen and not heard again. With the kitchen's
    /// node sending heartbeats it is listening, and the cat goes away after the timeout; with
    /// nothing from it (a power cut the Pi has not come back from) the cat is held, not away.
    @Test(arguments: [true, false])
    func aResumedBeaconsSilenceCountsOnlyWhileItsNodeIsHeard(heartbeats: Bool) throws {
        var s = Site()
        _ = try s.core.start(now: 100)
        let retained = PresenceDecision(id: cat, name: "Cat", room: "kitchen", floor: 0, distance: 1, confidence: 0.9,
                                        node: "kitchen-pi", since: 50, lastSeen: 99, evidence: [], ts: 99)
        _ = try s.core.handle(topic: NodeLivenessTests.topics.presence(cat), payload: WireFormat.encode(retained), now: 100.2)
        try s.run(from: 101, to: 170, heartbeats: heartbeats, catHeard: false)
        let away = s.published.first { $0.decision.room == nil }
        if heartbeats {
            #expect(away.map { $0.t >= 129 && $0.t <= 136 } == true, "\(s.published.map { ($0.t, $0.decision.reason ?? "") })")
        } else {
            #expect(away == nil, "\(s.published.map { ($0.t, $0.decision.reason ?? "") })")
            #expect(s.published.last.map { $0.decision.room == "kitchen" && $0.decision.reason == "nodes_offline" } == true)
        }
    }

    /// A beacon that leaves while its node keeps sending heartbeats has left: it goes away after
    /// the away timeout, as before.
    @Test func aBeaconThatLeavesAListeningNodeGoesAway() throws {
        var s = Site()
        _ = try s.core.start(now: 100)
        try s.run(from: 100, to: 130, heartbeats: true, catHeard: true)
        try s.run(from: 130, to: 170, heartbeats: true, catHeard: false)
        let away = try #require(s.published.first { $0.decision.room == nil })
        #expect(away.decision.reason == "timeout" && away.t > 155 && away.t < 165, "away at \(away.t)")
    }

    /// A node that never sent a heartbeat (an older agent, an ESPresense node) promised nothing:
    /// its silence is its beacons', as before, and only its status says it is offline.
    @Test func aNodeWithoutHeartbeatsIsJudgedByItsStatusAlone() throws {
        var s = Site()
        _ = try s.core.start(now: 100)
        try s.run(from: 100, to: 130, heartbeats: false, catHeard: true)
        try s.run(from: 130, to: 170, heartbeats: false, catHeard: false)
        #expect(s.published.contains { $0.decision.room == nil && $0.decision.reason == "timeout" })
        #expect(s.core.offline.isEmpty)
    }

    /// While the aggregator itself could not hear (its broker link down), the nodes' quiet was its
    /// own: once it hears again they are not taken for missing for what came before.
    @Test func theAggregatorsOwnDeafnessIsNoNodesQuiet() throws {
        var s = Site()
        _ = try s.core.start(now: 100)
        try s.run(from: 100, to: 130, heartbeats: true, catHeard: true)
        s.core.lostHearing(at: 130)
        _ = try s.core.advance(to: 160)
        s.core.regainedHearing(at: 160, grace: 3)
        try s.run(from: 160, to: 175, heartbeats: true, catHeard: true)
        #expect(s.core.offline.isEmpty)
        #expect(!s.published.contains { $0.t >= 160 && $0.decision.reason == "nodes_offline" },
                "\(s.published.filter { $0.t >= 160 }.map { ($0.t, $0.decision.reason) })")
    }

    /// A node whose own status says offline (its Last Will) is offline by that; its heartbeats,
    /// once it reconnects, promise again.
    @Test func aStatusOfflineEndsThePromiseUntilTheNextHeartbeat() throws {
        var s = Site()
        _ = try s.core.start(now: 100)
        try s.run(from: 100, to: 110, heartbeats: true, catHeard: true)
        _ = try s.core.handle(topic: Self.topics.nodeStatus("office-pi"), payload: Array("offline".utf8), now: 110)
        #expect(s.core.offline.contains("office-pi"))
        #expect(s.core.liveness.quiet["office-pi"] == nil, "offline by its status, not quiet")
        _ = try s.core.advance(to: 114)
        #expect(s.core.liveness.quiet["office-pi"] == nil, "no promise while offline by its status")
        _ = try s.core.handle(topic: Self.topics.nodeStatus("office-pi"), payload: Array("online".utf8), now: 115)
        #expect(!s.core.offline.contains("office-pi"))
        _ = try s.core.handle(topic: Self.topics.nodeHeartbeat("office-pi"), payload: WireFormat.encode(NodeHeartbeat(ts: 116)), now: 116)
        _ = try s.core.advance(to: 121)
        #expect(s.core.liveness.quiet["office-pi"] == 116, "quiet after its heartbeat promised again")
        #expect(s.core.offline.contains("office-pi"))
    }

    /// The aggregator's own stall shorter than a pause (an fsync on an SD card, a clock stepped a
    /// few seconds forward) outlasts the heartbeats: the first message handled after it took every
    /// node for missing, and beacons flapped to `nodes_offline` and back. The quiet was the
    /// aggregator's. A node that does go quiet, and whose Last Will then comes, is not logged as
    /// heard again.
    @Test func theAggregatorsOwnStallIsNoNodesQuiet() async throws {
        let records = InMemoryLogHandler()
        let runtime = AggregatorRuntime(core: AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore(), election: nil,
                                        refreshInterval: .infinity, startedAt: 0, logger: Logger(label: "test", level: .info, handler: records))
        await runtime.brokerConnected(now: 0)
        func beat(_ node: String, at t: Double) async throws {
            _ = await runtime.handle(topic: Self.topics.nodeHeartbeat(node), payload: try WireFormat.encode(NodeHeartbeat(ts: t)), now: t)
        }
        for t in stride(from: 0.5, through: 20, by: 0.5) {
            if t.truncatingRemainder(dividingBy: 1) == 0 { for node in ["kitchen-pi", "office-pi"] { try await beat(node, at: t) } }
            _ = await runtime.tickAnswered(now: t)
        }
        #expect(await runtime.core.offline.isEmpty)
        let revision = await runtime.core.livenessRevision
        // Nothing runs for 4 s; then the queued heartbeats are handled.
        for node in ["kitchen-pi", "office-pi"] { try await beat(node, at: 24) }
        _ = await runtime.tickAnswered(now: 24)
        #expect(await runtime.core.livenessRevision == revision, "the stall was the aggregator's: no node went quiet, even for a moment")
        // The office's node does go quiet, long enough to be said; its Last Will follows.
        for t in stride(from: 24.5, through: 60, by: 0.5) {
            if t.truncatingRemainder(dividingBy: 1) == 0 { try await beat("kitchen-pi", at: t) }
            _ = await runtime.tickAnswered(now: t)
        }
        #expect(await runtime.core.offline == ["office-pi"])
        _ = await runtime.handle(topic: Self.topics.nodeStatus("office-pi"), payload: Array("offline".utf8), now: 60.2)
        _ = await runtime.tickAnswered(now: 60.5)
        let lines = records.records.map(\.message)
        #expect(lines.filter { $0.hasPrefix("nodes quiet") }.count == 1, "\(lines)")
        #expect(!lines.contains("nodes heard again"), "its Last Will is no hearing again: \(lines)")
    }

    /// A node quiet for a few seconds (Wi-Fi power saving, a roam) is handled by fusion, and
    /// changes nothing shown (`aNodesBriefStallChangesNothingShown`): it was logged as a warning
    /// and a notice at every stall, up to a hundred lines a day on an ordinary home's Wi-Fi. Only
    /// a quiet that lasts as long as the away timeout is said, and its end.
    @Test func onlyAQuietThatLastsIsLogged() async throws {
        let records = InMemoryLogHandler()
        let runtime = AggregatorRuntime(core: AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore(), election: nil,
                                        refreshInterval: .infinity, startedAt: 0, logger: Logger(label: "test", level: .info, handler: records))
        await runtime.brokerConnected(now: 0)
        var sawOffline = false
        // The office's node stalls for 8 s at 20 s, and for 40 s at 100 s.
        for t in stride(from: 0.5, through: 200, by: 0.5) {
            if t.truncatingRemainder(dividingBy: 1) == 0 {
                for node in ["kitchen-pi", "office-pi"] where node == "kitchen-pi" || !((20..<28).contains(t) || (100..<140).contains(t)) {
                    _ = await runtime.handle(topic: Self.topics.nodeHeartbeat(node), payload: try WireFormat.encode(NodeHeartbeat(ts: t)), now: t)
                }
            }
            _ = await runtime.tickAnswered(now: t)
            if t == 27 { sawOffline = await runtime.core.offline == ["office-pi"] }
            if t == 90 { #expect(records.records(atLeast: .notice).isEmpty, "\(records.records(atLeast: .notice).map(\.message))") }
        }
        #expect(sawOffline, "the short stall was handled all the same")
        let said = records.records(atLeast: .notice).map(\.message)
        #expect(said.count == 2 && said[0].hasPrefix("nodes quiet") && said[1] == "nodes heard again", "\(said)")
    }

    /// A node that flaps (quiet, heard, quiet again within its line's limit) and then stays quiet:
    /// the log's last word on it must be that it is quiet, said once its limit allows, not the
    /// "heard again" of the flap.
    @Test func aChangeHeldBackIsSaidOnceItsLimitAllows() async throws {
        let records = InMemoryLogHandler()
        let runtime = AggregatorRuntime(core: AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore(), election: nil,
                                        refreshInterval: .infinity, startedAt: 0, logger: Logger(label: "test", level: .info, handler: records))
        await runtime.brokerConnected(now: 0)
        // The kitchen's node beats all along; the office's beats, but not from 10 to 50 s nor after 60 s.
        for t in stride(from: 0.5, through: 200, by: 0.5) {
            if t.truncatingRemainder(dividingBy: 1) == 0 {
                for node in ["kitchen-pi", "office-pi"] where node == "kitchen-pi" || t < 10 || (t >= 50 && t < 60) {
                    _ = await runtime.handle(topic: Self.topics.nodeHeartbeat(node), payload: try WireFormat.encode(NodeHeartbeat(ts: t)), now: t)
                }
            }
            _ = await runtime.tickAnswered(now: t)
        }
        let said = records.records.compactMap { r -> String? in
            r.message.hasPrefix("nodes quiet") ? "quiet" : r.message == "nodes heard again" ? "back" : nil
        }
        #expect(said == ["quiet", "back", "quiet"], "\(said)")
        #expect(await runtime.core.offline == ["office-pi"])
    }

    /// Under `partition:` every partition hears every node's topics: another partition's nodes,
    /// now sending a heartbeat a second, are theirs: counted as `other_partition` (the runtime
    /// does not log it), not refused as unknown with advice to list them here.
    @Test func anotherPartitionsNodesAreTheirs() throws {
        var config = AggregatorConfig(site: site, discovery: .init(enabled: false))
        config.partition = .init(rooms: ["kitchen"])
        config.inputs.espresense = true
        var core = config.makeCore()
        _ = try core.start(now: 100)
        let beat = try core.handle(topic: Self.topics.nodeHeartbeat("office-pi"), payload: WireFormat.encode(NodeHeartbeat(ts: 101)), now: 101)
        let heard = try core.handle(topic: Self.topics.nodeBeacon("office-pi", cat),
                                    payload: WireFormat.encode(reading("office-pi", rssi: -60, ts: 101)), now: 101)
        let esp = try core.handle(topic: "espresense/devices/iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-7/office-pi",
                                  payload: Array(#"{"id":"iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-7","rssi@1m":-72,"rssi":-60,"distance":2}"#.utf8),
                                  now: 101)
        #expect([beat, heard, esp].allSatisfy { $0.rejection?.reason == .otherPartition }, "\([beat, heard, esp].map(\.rejection))")
        #expect(core.intake.rejected[.unknownNode, default: 0] == 0)
        let stranger = try core.handle(topic: Self.topics.nodeHeartbeat("garage-pi"), payload: WireFormat.encode(NodeHeartbeat(ts: 101)), now: 101)
        #expect(stranger.rejection?.reason == .unknownNode && stranger.rejection?.node == "garage-pi")
        _ = try core.advance(to: 110)
        #expect(core.offline.isEmpty, "another partition's node promises nothing here")
    }

    /// A heartbeat that is not one is refused with a reason, and proves nothing.
    @Test func aBadHeartbeatIsRefused() throws {
        var core = AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore()
        _ = try core.start(now: 100)
        let bad = try core.handle(topic: Self.topics.nodeHeartbeat("kitchen-pi"), payload: Array("beat".utf8), now: 101).rejection
        #expect(bad?.reason == .badPayload)
        let stranger = try core.handle(topic: Self.topics.nodeHeartbeat("garage-pi"), payload: WireFormat.encode(NodeHeartbeat(ts: 1)), now: 101)
        #expect(stranger.rejection?.reason == .unknownNode)
        _ = try core.advance(to: 110)
        #expect(core.offline.isEmpty, "no promise from a refused heartbeat")
    }
}
