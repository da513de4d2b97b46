import Foundation
@testable import RoomcastFusion
import Shared
import Testing
@testable import RoomcastAggregator

/// A scripted estimator: the strongest latest rssi_filtered wins, away after 10 s.
/// A fake at the estimator seam, so these tests check the core's plumbing only.
struct StrongestLatest: PresenceEstimator, Sendable {
    var latest: [BeaconID: [String: BeaconReading]] = [:]
    var offline: Set<String> = []
    var current: [BeaconID: PresenceDecision] = [:]
    let roomOfNode: [String: String]

    mutating func ingest(_ r: BeaconReading, now: Double) { latest[r.id, default: [:]][r.node] = r }
    mutating func nodeStatus(_ node: String, online: Bool, now: Double) {
        if online { offline.remove(node) } else { offline.insert(node) }
    }
    mutating func tick(now: Double) -> [PresenceDecision] {
        var changed: [PresenceDecision] = []
        for (id, byNode) in latest.sorted(by: { $0.key < $1.key }) {
            let fresh = byNode.values.filter { now - $0.ts <= 10 && !offline.contains($0.node) }
            let best = fresh.max { $0.rssiFiltered < $1.rssiFiltered }
            let room = best.flatMap { roomOfNode[$0.node] }
            if current[id]?.room != room || current[id] == nil {
                let d = PresenceDecision(id: id, name: nil, room: room, floor: 0, distance: best?.distance, confidence: 1,
                                         node: best?.node, since: now, lastSeen: best?.ts, evidence: [], ts: now)
                current[id] = d
                changed.append(d)
            }
        }
        return changed
    }
    func decision(for id: BeaconID) -> PresenceDecision? { current[id] }
}

let cat = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45")!
let site = SiteModel(
    rooms: [.init(name: "kitchen"), .init(name: "office", floor: 1)],
    nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "office-pi", room: "office")],
    beacons: [.init(id: cat, name: "Cat", power: -59)])

/// `site` drawn: each room a polygon, each node a position and a beacon of its own (and a third
/// node, so each hears two others), so the engine's geometry is in use and every node's receiver
/// offset can be learned (and is resumed only then).
let placedSite = SiteModel(
    rooms: [.init(name: "kitchen", polygon: [[0, 0], [4, 0], [4, 4], [0, 4]]),
            .init(name: "office", floor: 1, polygon: [[0, 0], [4, 0], [4, 4], [0, 4]])],
    nodes: [.init(name: "kitchen-pi", room: "kitchen", position: [1, 1, 1], beacon: BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-9-1")!),
            .init(name: "office-pi", room: "office", position: [1, 1, 4], beacon: BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-9-2")!),
            .init(name: "pantry-pi", room: "kitchen", position: [3, 3, 1], beacon: BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-9-5")!)],
    beacons: site.beacons)

func reading(_ node: String, rssi: Double, ts: Double, seq: UInt64 = 1) -> BeaconReading {
    BeaconReading(id: cat, node: node, ts: ts, seq: seq, rssi: Int(rssi), rssiFiltered: rssi, power: -59,
                  distance: 1, proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
}

/// The cat heard at `node` at -55 dBm every half second from 100 s, `count` times, as the
/// node publishes it; returns what the core published.
func hearCat<Engine>(_ core: inout AggregatorCore<Engine>, at node: String, count: Int) throws -> [OutboundMessage] {
    var out: [OutboundMessage] = []
    for k in 0..<count {
        let t = 100 + 0.5 * Double(k)
        out += try core.handle(topic: Topics().nodeBeacon(node, cat),
                               payload: WireFormat.encode(reading(node, rssi: -55, ts: t, seq: UInt64(k + 1))), now: t).messages
    }
    return out
}

func makeCore(discovery: Bool = true) -> AggregatorCore<StrongestLatest> {
    let topics = Topics()
    return AggregatorCore(engine: StrongestLatest(roomOfNode: ["kitchen-pi": "kitchen", "office-pi": "office"]),
                          site: site, topics: topics,
                          discovery: discovery ? HomeAssistantDiscovery(topics: topics) : nil)
}

@Suite struct AggregatorCoreTests {
    /// A retained presence read at a start changes the engine in place. Cast to a protocol to
    /// resume it, the engine was copied into a box sharing its storage, and the change copied
    /// every beacon's state: per message, so a start with many retained topics stalled.
    @Test func resumingDoesNotCopyTheEngine() throws {
        var core = AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore()
        _ = try core.start(now: 100)
        let topics = Topics()
        // Heard once: tracked, not yet decided.
        _ = try core.handle(topic: topics.nodeBeacon("kitchen-pi", cat), payload: WireFormat.encode(reading("kitchen-pi", rssi: -60, ts: 100.1)),
                            now: 100.1)
        let address = { (core: AggregatorCore<FusionEngine>) in core.engine.beacons.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } }
        let before = address(core)
        let id = cat
        let retained = PresenceDecision(id: id, name: nil, room: "kitchen", floor: 0, distance: 1, confidence: 0.9, node: "kitchen-pi",
                                        since: 50, lastSeen: 99, evidence: [], ts: 99)
        _ = try core.handle(topic: topics.presence(id), payload: WireFormat.encode(retained), now: 100.2)
        #expect(core.engine.decision(for: id)?.room == "kitchen", "resumed")
        #expect(address(core) == before, "the beacon table was copied to resume one beacon")
    }

    /// A retained presence's name goes into every presence and Home Assistant config of its
    /// beacon once resumed: as long as a reading's may be (248 bytes), or refused.
    @Test func aRetainedPresenceWithAnOverlongNameIsRefused() throws {
        var core = AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore()
        var d = PresenceDecision(id: cat, name: String(repeating: "n", count: 249), room: "kitchen", floor: 0, distance: 1,
                                 confidence: 0.9, node: "kitchen-pi", since: 50, lastSeen: 99, evidence: [], ts: 99)
        let refused = try core.handle(topic: Topics().presence(cat), payload: WireFormat.encode(d), now: 100).rejection
        #expect(refused?.reason == .outOfRange)
        d.name = String(repeating: "n", count: 248)
        #expect(try core.handle(topic: Topics().presence(cat), payload: WireFormat.encode(d), now: 100).rejection == nil)
    }

    @Test func theEngineRunsWithTheConfigsFusionSettings() {
        var config = AggregatorConfig()
        config.fusion.awayTimeout = 45
        config.fusion.fingerprints = false
        config.fusion.wallLoss = 7
        let core = config.makeCore()
        #expect(core.engine.settings == config.fusion)
        #expect(core.engine.model == FusionModel.standard)
    }

    @Test func theRetainedCalibrationSeedsTheEngineAtStartUp() throws {
        // The aggregator's own retained report, read back after a restart: what it learned
        // before is where it starts, not 0.
        let topics = Topics()
        var core = AggregatorCore(engine: FusionEngine(site: placedSite), site: placedSite, topics: topics, discovery: nil)
        _ = try core.start(now: 100)
        let report = ReceiverCalibrationReport(ts: 50, nodes: [.init(node: "kitchen-pi", offsetDb: 3.5, source: .beacons),
                                                               .init(node: "attic-pi", offsetDb: -2, source: .beacons)])
        #expect(try core.handle(topic: topics.aggregatorCalibration, payload: WireFormat.encode(report), now: 100).rejection == nil)
        #expect(core.engine.learnedOffset(of: "kitchen-pi") == 3.5)
        #expect(core.engine.learnedOffset(of: "office-pi") == 0)
        // A broken one is rejected and changes nothing; a cleared one is no news.
        let broken = try core.handle(topic: topics.aggregatorCalibration, payload: Array("{\"v\":1,\"nodes\":7}".utf8), now: 101)
        #expect(broken.rejection?.reason == .badPayload)
        #expect(try core.handle(topic: topics.aggregatorCalibration, payload: [], now: 101).rejection == nil)
        #expect(core.engine.learnedOffset(of: "kitchen-pi") == 3.5)
        // Without positions, or without node beacons, nothing in this run could learn an offset
        // again: one read back (from a run with them since removed, or forged) would bias that
        // node's rooms for good.
        var silent = placedSite
        silent.nodes = silent.nodes.map { var n = $0; n.beacon = nil; return n }
        // One other transmitter is one link: the solver needs two.
        var oneOther = placedSite
        oneOther.nodes = oneOther.nodes.map { var n = $0; if n.name == "pantry-pi" { n.beacon = nil }; return n }
        for unlearnable in [site, silent, oneOther] {
            var core = AggregatorCore(engine: FusionEngine(site: unlearnable), site: unlearnable, topics: topics, discovery: nil)
            _ = try core.start(now: 100)
            #expect(try core.handle(topic: topics.aggregatorCalibration, payload: WireFormat.encode(report), now: 100).rejection == nil)
            #expect(core.engine.learnedOffset(of: "kitchen-pi") == 0)
        }
    }

    /// Partitions share the retained calibration's topic, each learning only its own nodes'
    /// offsets: each publishes its nodes with the others' as heard there, and again when a
    /// report published after its own lacks its nodes. Delivered in a broker's order, two
    /// partitions publishing at once converge on one report of every node, and stop; a report
    /// naming a node of no partition adds nothing.
    @Test func partitionsPublishOneCalibrationOfEveryNode() throws {
        let topics = Topics()
        // Drawn, so the upstairs partition's two nodes learn (and resume) offsets.
        let square = [[0.0, 0], [4, 0], [4, 4], [0, 4]]
        let site = SiteModel(rooms: [.init(name: "kitchen", polygon: square), .init(name: "bedroom", floor: 1, polygon: square),
                                     .init(name: "bath", floor: 1, polygon: [[4, 0], [8, 0], [8, 4], [4, 4]])],
                             nodes: [.init(name: "kitchen-pi", room: "kitchen", position: [2, 2, 1]),
                                     .init(name: "bedroom-pi", room: "bedroom", position: [2, 2, 4],
                                           beacon: BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-9-3")!),
                                     .init(name: "bath-pi", room: "bath", position: [6, 2, 4],
                                           beacon: BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-9-4")!),
                                     .init(name: "landing-pi", room: "bath", position: [7, 3, 4],
                                           beacon: BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-9-6")!)])
        var cores = [AggregatorConfig(site: site, partition: .init(floors: [0])).makeCore(),
                     AggregatorConfig(site: site, partition: .init(floors: [1])).makeCore()]
        var broker = SharedTopicBroker(topics.aggregatorCalibration, of: ReceiverCalibrationReport.self)
        func deliver(_ published: [OutboundMessage], at t: Double) throws { try broker.deliver(published, to: &cores, at: t) }
        func offsets() -> [String] { (broker.retained?.nodes ?? []).map { "\($0.node) \($0.offsetDb)" }.sorted() }
        try deliver([try cores[0].calibrationReport([.init(node: "kitchen-pi", offsetDb: 2.5, source: .nodeBeacons)], now: 100),
                     try cores[1].calibrationReport([.init(node: "bedroom-pi", offsetDb: -1.5, source: .nodeBeacons)], now: 100)], at: 100)
        #expect(offsets() == ["bedroom-pi -1.5", "kitchen-pi 2.5"])
        // One partition's offset moves: the other's stays in the report.
        try deliver([try cores[1].calibrationReport([.init(node: "bedroom-pi", offsetDb: -3, source: .nodeBeacons)], now: 700)], at: 700)
        #expect(offsets() == ["bedroom-pi -3.0", "kitchen-pi 2.5"])
        // A report naming a node of no partition: kept by nobody.
        let stranger = ReceiverCalibrationReport(ts: 800, nodes: [.init(node: "kitchen-pi", offsetDb: 2.5, source: .nodeBeacons),
                                                                  .init(node: "bedroom-pi", offsetDb: -3, source: .nodeBeacons),
                                                                  .init(node: "attic-pi", offsetDb: 9, source: .beacons)])
        try deliver([OutboundMessage(topic: topics.aggregatorCalibration, payload: try WireFormat.encode(stranger), retain: true, qos: 1)], at: 800)
        try deliver([try cores[0].calibrationReport([.init(node: "kitchen-pi", offsetDb: 2, source: .nodeBeacons)], now: 900)], at: 900)
        #expect(offsets() == ["bedroom-pi -3.0", "kitchen-pi 2.0"])
        // A partition restarted after the other published starts its nodes from their offsets.
        var restarted = AggregatorConfig(site: site, partition: .init(floors: [1])).makeCore()
        _ = try restarted.start(now: 1000)
        _ = try restarted.handle(topic: topics.aggregatorCalibration, payload: try WireFormat.encode(try #require(broker.retained)), now: 1000)
        #expect(restarted.engine.learnedOffset(of: "bedroom-pi") == -3)
        // A client that writes the topic over and over without a partition's nodes is answered
        // at a pace (`PacedAnswer`), the last answer held back going out at a tick.
        let without = try WireFormat.encode(ReceiverCalibrationReport(ts: 1100, nodes: []))
        var answers = 0
        for i in 0..<100 {
            answers += try cores[0].handle(topic: topics.aggregatorCalibration, payload: without, now: 1100 + Double(i) * 0.01)
                .messages.count { $0.topic == topics.aggregatorCalibration }
        }
        #expect(answers == LearnSession.commandsPerWindow)
        let held = try cores[0].advance(to: 1110).filter { $0.topic == topics.aggregatorCalibration }
        #expect(try held.map { try WireFormat.decode(ReceiverCalibrationReport.self, from: $0.payload).nodes.map(\.node) }
                == [["kitchen-pi"]], "its own node: the others, as last heard, are none")
    }

    /// A beacon that walks from this partition's rooms into another's: the other partition
    /// places it, and this one, no longer hearing it, would decide it away on the shared
    /// presence topic. It hands it over instead: the beacon leaves this partition's room (its
    /// occupancy and a leave event) and its person's place here, while its presence and person
    /// topics stay the other partition's, also at a refresh. Heard here again, it is published
    /// here again; and where the other partition has not heard it since this one did, this one
    /// publishes away as before.
    /// The partition of `floor` of a kitchen (floor 0) and bedroom (floor 1) home, where Alice
    /// carries the cat's tag, having heard the cat at `node` from 100 s to 109.5 s.
    static func partitionThatHeardTheCat(floor: Int, at node: String) throws -> AggregatorCore<FusionEngine> {
        let site = SiteModel(rooms: [.init(name: "kitchen"), .init(name: "bedroom", floor: 1)],
                             nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "bedroom-pi", room: "bedroom")],
                             beacons: [.init(id: cat, name: "Cat")], people: [.init(name: "Alice", beacons: [cat])])
        var core = AggregatorConfig(site: site, partition: .init(floors: [floor])).makeCore()
        _ = try core.start(now: 100)
        for k in 0..<20 {
            let t = 100 + 0.5 * Double(k)
            _ = try core.handle(topic: Topics().nodeBeacon(node, cat),
                                payload: WireFormat.encode(reading(node, rssi: -55, ts: t, seq: UInt64(k + 1))), now: t)
        }
        _ = try core.advance(to: 110)
        return core
    }

    /// Across the border the partition left behind hears the beacon a little longer than the one
    /// that placed it last said, so its away, later, overwrites the room on the shared topic. The
    /// partition that has the beacon, having heard it since, puts its room and person back at
    /// once; its own refresh (a minute by default) left the away standing that long. An away it
    /// has not heard the beacon since is left alone, and so is its own away echoed back.
    @Test func aPartitionStillHearingABeaconAnswersAnotherPartitionsOlderAway() throws {
        let topics = Topics()
        var downstairs = try Self.partitionThatHeardTheCat(floor: 0, at: "kitchen-pi")
        #expect(downstairs.engine.decision(for: cat)?.room == "kitchen")
        func away(lastSeen: Double) throws -> [UInt8] {
            var d = PresenceDecision(id: cat, name: "Cat", room: nil, floor: nil, distance: nil, confidence: 0, node: nil,
                                     since: lastSeen + 30, lastSeen: lastSeen, evidence: [], ts: lastSeen + 30)
            d.reason = "timeout"
            return try WireFormat.encode(d)
        }
        // Upstairs last heard it at 105; downstairs at 109.5: its room and Alice go out again.
        let answer = try downstairs.otherPartitionsPresence(away(lastSeen: 105), id: cat, now: 135)
        let rooms = answer.filter { $0.topic == topics.presence(cat) }.compactMap { try? WireFormat.decode(PresenceDecision.self, from: $0.payload).room }
        #expect(rooms == ["kitchen"])
        #expect(answer.contains { $0.topic == topics.presenceRoom(cat) && String(decoding: $0.payload, as: UTF8.self) == "kitchen" })
        #expect(answer.contains { $0.topic == topics.person("alice") && String(decoding: $0.payload, as: UTF8.self).contains("\"kitchen\"") })
        // An away from after downstairs last heard it is that partition's word: no answer.
        #expect(try downstairs.otherPartitionsPresence(away(lastSeen: 200), id: cat, now: 230).isEmpty)
    }

    /// A claim is capped at the time it arrives: one from the future (a peer's clock ahead, or
    /// a forged presence) kept this partition from saying away, and from placing the person,
    /// until that time came.
    @Test func aClaimFromTheFutureDoesNotSilenceThisPartition() throws {
        let topics = Topics()
        var upstairs = try Self.partitionThatHeardTheCat(floor: 1, at: "bedroom-pi")
        let future = PresenceDecision(id: cat, name: "Cat", room: "kitchen", floor: 0, distance: 1, confidence: 0.9,
                                      node: "kitchen-pi", since: 1e9, lastSeen: 2e9, evidence: [], ts: 2e9)
        _ = try upstairs.otherPartitionsPresence(WireFormat.encode(future), id: cat, now: 108)
        // Heard upstairs after the claim arrived, then silent: away is this partition's to say.
        let out = try upstairs.advance(to: 160)
        let rooms: [String?] = out.filter { $0.topic == topics.presence(cat) }.compactMap { try? WireFormat.decode(PresenceDecision.self, from: $0.payload).room }
        #expect(rooms == [nil], "\(rooms)")
    }

    @Test func aBeaconThatWalksIntoAnotherPartitionIsHandedOverNotDeclaredAway() throws {
        let topics = Topics()
        let site = SiteModel(rooms: [.init(name: "kitchen"), .init(name: "bedroom", floor: 1)],
                             nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "bedroom-pi", room: "bedroom")],
                             beacons: [.init(id: cat, name: "Cat")], people: [.init(name: "Alice", beacons: [cat])])
        func upstairs() throws -> AggregatorCore<FusionEngine> {
            var core = AggregatorConfig(site: site, partition: .init(floors: [1])).makeCore()
            _ = try core.start(now: 100)
            return core
        }
        var seq: UInt64 = 0
        func heard(_ core: inout AggregatorCore<FusionEngine>, from: Double, to: Double) throws -> [OutboundMessage] {
            var out: [OutboundMessage] = []
            var t = from
            while t < to {
                seq += 1
                out += try core.handle(topic: topics.nodeBeacon("bedroom-pi", cat),
                                       payload: WireFormat.encode(reading("bedroom-pi", rssi: -60, ts: t, seq: seq)), now: t).messages
                t += 0.5
            }
            return out
        }
        func downstairs(lastSeen: Double) -> PresenceDecision {
            PresenceDecision(id: cat, name: "Cat", room: "kitchen", floor: 0, distance: 1, confidence: 0.9,
                             node: "kitchen-pi", since: lastSeen - 2, lastSeen: lastSeen, evidence: [], ts: lastSeen + 0.5)
        }
        func presence(_ out: [OutboundMessage]) -> [String?] {
            out.filter { $0.topic == topics.presence(cat) }.compactMap { try? WireFormat.decode(PresenceDecision.self, from: $0.payload).room }
        }
        func occupants(_ out: [OutboundMessage], _ room: String) -> [BeaconID]? {
            out.last { $0.topic == topics.room(room) }.flatMap { try? WireFormat.decode(RoomOccupancy.self, from: $0.payload).beacons }
        }

        var core = try upstairs()
        #expect(presence(try heard(&core, from: 100, to: 110)).last == "bedroom")
        // Downstairs places it in the kitchen, having heard it after upstairs last did.
        _ = try core.otherPartitionsPresence(try WireFormat.encode(downstairs(lastSeen: 113)), id: cat, now: 113.5)
        var out = try core.advance(to: 150)
        #expect(core.engine.decision(for: cat)?.room == nil)
        #expect(presence(out).isEmpty)
        #expect(!out.contains { $0.topic == topics.presenceRoom(cat) || $0.topic == topics.person("alice") })
        #expect(occupants(out, "bedroom") == [])
        #expect(out.contains { $0.topic == topics.events && String(decoding: $0.payload, as: UTF8.self).contains("\"leave\"") })
        let refreshed = try core.refresh(now: 151)
        #expect(presence(refreshed).isEmpty && !refreshed.contains { $0.topic == topics.person("alice") })
        #expect(try core.republish(cat).isEmpty)
        // Not away in this partition's dashboard and metrics: not there at all.
        #expect(core.currentDecisions().isEmpty)
        #expect((core.presenceStats.aways, core.presenceStats.handovers) == (0, 1))
        // Back upstairs: published here again.
        out = try heard(&core, from: 160, to: 170)
        #expect(presence(out).last == "bedroom")
        #expect(core.currentDecisions().map(\.room) == ["bedroom"])
        #expect(out.contains { $0.topic == topics.person("alice") })
        // Back from the other partition: not a return home.
        #expect((core.presenceStats.returns, core.presenceStats.handovers) == (0, 2))

        // Downstairs last heard it before upstairs did: away is this partition's to say.
        var other = try upstairs()
        _ = try heard(&other, from: 100, to: 110)
        _ = try other.otherPartitionsPresence(try WireFormat.encode(downstairs(lastSeen: 105)), id: cat, now: 110)
        out = try other.advance(to: 150)
        #expect(presence(out) == [nil])
        #expect(out.contains { $0.topic == topics.person("alice") })
        #expect((other.presenceStats.aways, other.presenceStats.handovers) == (1, 0))

        // Handed over, and then gone from downstairs too (its away, heard after its claim): back
        // upstairs later is a return, not a hand-back.
        var third = try upstairs()
        _ = try heard(&third, from: 100, to: 110)
        _ = try third.otherPartitionsPresence(try WireFormat.encode(downstairs(lastSeen: 113)), id: cat, now: 113.5)
        _ = try third.advance(to: 150)
        var gone = downstairs(lastSeen: 120)
        (gone.room, gone.floor, gone.ts) = (nil, nil, 150)
        _ = try third.otherPartitionsPresence(try WireFormat.encode(gone), id: cat, now: 150)
        #expect(presence(try heard(&third, from: 200, to: 210)).last == "bedroom")
        #expect((third.presenceStats.returns, third.presenceStats.handovers) == (1, 1))
    }

    /// Alice has a phone and a tag; her tag was left away (at work) and her phone is downstairs,
    /// in the other partition. Upstairs resumed her tag's away decision, and as her phone was
    /// never heard upstairs (so no handover applied), it published her `not_home` at every
    /// refresh while downstairs published her home: her person flipped. A person another
    /// partition has heard since any beacon of theirs here is that partition's to place.
    @Test func aPersonAnotherPartitionHasIsNotPublishedAwayHere() throws {
        let topics = Topics()
        let phone = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-46")!
        let site = SiteModel(rooms: [.init(name: "kitchen"), .init(name: "bedroom", floor: 1)],
                             nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "bedroom-pi", room: "bedroom")],
                             beacons: [.init(id: cat, name: "Tag"), .init(id: phone, name: "Phone")],
                             people: [.init(name: "Alice", beacons: [cat, phone])])
        var core = AggregatorConfig(site: site, partition: .init(floors: [1])).makeCore()
        _ = try core.start(now: 100)
        let tagAway = PresenceDecision(id: cat, name: "Tag", room: nil, floor: nil, distance: nil, confidence: 0,
                                       node: nil, since: 20, lastSeen: 10, evidence: [], ts: 99)
        _ = try core.handle(topic: topics.presence(cat), payload: WireFormat.encode(tagAway), now: 100)
        let phoneDownstairs = PresenceDecision(id: phone, name: "Phone", room: "kitchen", floor: 0, distance: 1, confidence: 0.9,
                                               node: "kitchen-pi", since: 90, lastSeen: 101, evidence: [], ts: 101)
        _ = try core.otherPartitionsPresence(try WireFormat.encode(phoneDownstairs), id: phone, now: 101)
        var out = try core.advance(to: 110)
        out += try core.refresh(now: 111)
        #expect(!out.contains { $0.topic == topics.person("alice") }, "upstairs published Alice")
        #expect(core.publisher.people.current["alice"] == nil)
    }

    /// Alice's home in two partitions: her phone heard downstairs (partition 0, the kitchen), her
    /// tag upstairs (partition 1, the bedroom). What each partition publishes reaches both, as
    /// the broker delivers it, and their answers go round too. `clockAhead`: how far each
    /// aggregator's clock is ahead of the nodes'.
    struct AliceOnTwoFloors {
        let topics = Topics()
        static let phone = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-46")!
        var partitions: [AggregatorCore<FusionEngine>]
        let clockAhead: [Double]
        /// Alice's person as each partition last published it (nil: not since `forgetPublished`).
        var published: [PersonPresence?] = [nil, nil]
        var seq: UInt64 = 0

        init(clockAhead: [Double] = [0, 0]) throws {
            let site = SiteModel(rooms: [.init(name: "kitchen"), .init(name: "bedroom", floor: 1)],
                                 nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "bedroom-pi", room: "bedroom")],
                                 beacons: [.init(id: cat, name: "Tag"), .init(id: Self.phone, name: "Phone")],
                                 people: [.init(name: "Alice", beacons: [cat, Self.phone])])
            partitions = [AggregatorConfig(site: site, partition: .init(floors: [0])).makeCore(),
                          AggregatorConfig(site: site, partition: .init(floors: [1])).makeCore()]
            self.clockAhead = clockAhead
            for p in partitions.indices { _ = try partitions[p].start(now: 100 + clockAhead[p]) }
        }

        /// Where each partition places Alice now (nil: it does not place her).
        var placedBy: [String?] { partitions.map { $0.publisher.people.current["alice"]?.room } }

        mutating func forgetPublished() { published = [nil, nil] }

        mutating func deliver(_ out: [OutboundMessage], from: Int, at t: Double) throws {
            var queue = [(out, from)]
            while let (messages, sender) = queue.popLast() {
                for m in messages {
                    if m.topic == topics.person("alice") { published[sender] = try WireFormat.decode(PersonPresence.self, from: m.payload) }
                    for id in [cat, Self.phone] where m.topic == topics.presence(id) {
                        for p in partitions.indices {
                            let answer = try partitions[p].otherPartitionsPresence(m.payload, id: id, now: t + clockAhead[p])
                            if !answer.isEmpty { queue.append((answer, p)) }
                        }
                    }
                }
            }
        }

        /// Node time `from` to `to`: the phone heard downstairs from `phone.lowerBound`, the tag
        /// upstairs over `tag`, every half second.
        mutating func run(from: Double, to: Double, phone: Range<Double> = 100..<Double.infinity,
                          tag: Range<Double>) throws {
            var t = from
            while t < to {
                seq += 1
                if phone.contains(t) {
                    var r = reading("kitchen-pi", rssi: -55, ts: t, seq: seq)
                    r.id = Self.phone
                    try deliver(try partitions[0].handle(topic: topics.nodeBeacon("kitchen-pi", Self.phone),
                                                         payload: WireFormat.encode(r), now: t + clockAhead[0]).messages, from: 0, at: t)
                }
                if tag.contains(t) {
                    try deliver(try partitions[1].handle(topic: topics.nodeBeacon("bedroom-pi", cat),
                                                         payload: WireFormat.encode(reading("bedroom-pi", rssi: -55, ts: t, seq: seq)),
                                                         now: t + clockAhead[1]).messages, from: 1, at: t)
                }
                for p in partitions.indices { try deliver(try partitions[p].advance(to: t + clockAhead[p]), from: p, at: t) }
                t += 0.5
            }
        }

        mutating func refresh(at t: Double) throws {
            for p in partitions.indices { try deliver(try partitions[p].refresh(now: t + clockAhead[p]), from: p, at: t) }
        }
    }

    /// Alice's phone is downstairs and her tag upstairs. Both partitions placed her, each at its
    /// changes and refreshes, so her person flipped between the floors. The partition whose
    /// beacon of hers arrived in its room last places her; the other publishes nothing for her,
    /// at a change or a refresh. When that beacon goes away, the other places her.
    @Test func aPersonWithBeaconsInTwoPartitionsIsPlacedByOne() throws {
        var home = try AliceOnTwoFloors()
        try home.run(from: 100, to: 118, tag: 120..<Double.infinity)
        #expect(home.published[0]?.room == "kitchen" && home.published[1] == nil)
        // The tag arrives upstairs after the phone arrived in the kitchen: upstairs places her.
        try home.run(from: 118, to: 140, tag: 120..<Double.infinity)
        #expect(home.published[1]?.room == "bedroom")
        #expect(home.placedBy == [nil, "bedroom"])
        // Refreshes: only upstairs speaks for her.
        home.forgetPublished()
        try home.refresh(at: 140)
        #expect(home.published[0] == nil && home.published[1]?.room == "bedroom")
        // The tag is gone from 150 s: once upstairs says it away, downstairs places her again, and
        // upstairs does not say she left.
        home.forgetPublished()
        try home.run(from: 140, to: 200, tag: 120..<150)
        #expect(home.partitions[1].engine.decision(for: cat)?.room == nil)
        #expect(home.published[0]?.room == "kitchen" && home.published[1] == nil)
        #expect(home.placedBy == ["kitchen", nil])
    }

    /// The two partitions' clocks differ (each aggregator's own, and both from the nodes'), and
    /// the two beacons arrive within that difference of each other: still one places Alice, and
    /// only that one speaks for her at a refresh.
    @Test(arguments: [[1.5, 0], [0, 1.5]])
    func aPersonIsPlacedByOnePartitionWhateverTheirClocks(_ clockAhead: [Double]) throws {
        var home = try AliceOnTwoFloors(clockAhead: clockAhead)
        try home.run(from: 100, to: 130, tag: 100.5..<Double.infinity)
        #expect(home.placedBy.compactMap { $0 }.count == 1, "\(home.placedBy)")
        home.forgetPublished()
        try home.refresh(at: 130)
        #expect(home.published.compactMap { $0?.room }.count == 1, "\(home.published)")
    }

    /// The tag was heard upstairs only briefly, and its room there dates from after its last
    /// reading (that aggregator's clock is ahead of the nodes'). Its away, last heard before the
    /// room's date, still ends its placement there: downstairs places Alice again.
    @Test func anAwayLastHeardBeforeItsRoomsDateEndsThePlacementThere() throws {
        var home = try AliceOnTwoFloors(clockAhead: [0, 1.5])
        try home.run(from: 100, to: 140, tag: 120..<122)
        #expect(home.placedBy == [nil, "bedroom"])
        try home.run(from: 140, to: 200, tag: 120..<122)
        #expect(home.partitions[1].engine.decision(for: cat)?.room == nil)
        #expect(home.placedBy == ["kitchen", nil])
    }

    /// A beacon a node hears only without an RSSI (HCI's 127) is reported at the floor with
    /// proximity unknown: heard, no measurement. Fusion took the floor as a level: it placed the
    /// beacon by it, and each such reading pulled the node's hearing floor down.
    @Test func aReadingWithoutALevelDecidesNothing() throws {
        var core = AggregatorConfig(site: SiteModel()).makeCore()
        _ = try core.start(now: 0)
        let unheard = BeaconID("mac:a4c138aabbcc")!
        for t in stride(from: 1.0, through: 20, by: 1) {
            var r = BeaconReading(id: unheard, node: "hall-pi", ts: t, seq: UInt64(t), rssi: -127, rssiFiltered: -127, power: -59,
                                  distance: 100, proximity: .unknown, kind: .device, mac: "a4:c1:38:aa:bb:cc")
            r.samples = 1
            _ = try core.handle(topic: Topics().nodeBeacon("hall-pi", unheard), payload: WireFormat.encode(r), now: t)
            _ = try core.advance(to: t)
        }
        #expect(!core.engine.isTracking(unheard))
        // A level the node's filter made, even with this advertisement's RSSI missing, is one.
        var r = BeaconReading(id: unheard, node: "hall-pi", ts: 21, seq: 21, rssi: -127, rssiFiltered: -70, power: -59,
                              distance: 4, proximity: .unknown, kind: .device, mac: "a4:c1:38:aa:bb:cc")
        r.samples = 1
        _ = try core.handle(topic: Topics().nodeBeacon("hall-pi", unheard), payload: WireFormat.encode(r), now: 21)
        #expect(core.engine.isTracking(unheard))
    }

    /// A site that lists no beacons announces each as it is placed. Resumed from the retained
    /// presence after a restart, a beacon is announced and refreshed again, and the clean-up
    /// after the start keeps its config; an aggregator that becomes active again (a standby
    /// taking over) publishes the configs of the beacons it has announced.
    @Test func unlistedBeaconsAreAnnouncedKeptAndRefreshedAfterARestart() throws {
        let topics = Topics()
        var unlisted = site
        unlisted.beacons = []
        let config = "homeassistant/device/roomcast_beacon_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45/config"
        func fresh() throws -> AggregatorCore<FusionEngine> {
            var core = AggregatorCore(engine: FusionEngine(site: unlisted), site: unlisted, topics: topics,
                                      discovery: HomeAssistantDiscovery(topics: topics, site: unlisted))
            #expect(try !core.start(now: 100).contains { $0.topic == config })
            return core
        }
        var first = try fresh()
        let out = try hearCat(&first, at: "kitchen-pi", count: 8)
        #expect(out.contains { $0.topic == config })
        let retained = try #require(out.last { $0.topic == topics.presence(cat) })

        var restarted = try fresh()
        #expect(try !restarted.wantedDiscovery().contains { $0.topic == config })
        let resumed = try restarted.handle(topic: retained.topic, payload: retained.payload, now: 200).messages
        #expect(resumed.contains { $0.topic == config })
        #expect(try restarted.wantedDiscovery().contains { $0.topic == config })
        #expect(try restarted.refresh(now: 201).contains { $0.topic == topics.presence(cat) })
        #expect(try restarted.start(now: 202).contains { $0.topic == config })
    }

    /// A beacon forgotten in this run (away past `forget_after_s`): the broker sends its retained
    /// presence again at every reconnect, and each time it was tracked anew, announced to Home
    /// Assistant again, and gave its person the retained message's old time. It stays forgotten.
    @Test func aBeaconForgottenInThisRunIsNotResumedAtAReconnect() throws {
        let topics = Topics()
        var core = Self.unlistedCore(awayTimeout: 5, forgetAfter: 10)
        _ = try core.start(now: 100)
        var out = try hearCat(&core, at: "kitchen-pi", count: 10)
        for t in stride(from: 105.0, through: 140, by: 0.5) { out += try core.advance(to: t) }
        let retained = try #require(out.last { $0.topic == topics.presence(cat) })
        #expect(try WireFormat.decode(PresenceDecision.self, from: retained.payload).room == nil, "away")
        #expect(core.engine.decision(for: cat) == nil, "forgotten")
        let again = try core.handle(topic: retained.topic, payload: retained.payload, now: 141).messages + core.advance(to: 142)
        #expect(core.engine.decision(for: cat) == nil && again.isEmpty, "\(again.map(\.topic))")
    }

    /// A listed beacon forgotten while away keeps its away refreshed, but not under `partition:`:
    /// another partition may have placed it since, and the refresh would publish away over its
    /// room (as a never-heard beacon's away is not published there either).
    @Test(arguments: [false, true])
    func aForgottenListedBeaconIsRefreshedAwayOutsideAPartition(partitioned: Bool) throws {
        var config = AggregatorConfig(site: site, partition: partitioned ? .init(floors: [0]) : .init())
        config.fusion.awayTimeout = 5
        config.fusion.forgetAfter = 10
        config.fusion.learnCalibration = false
        var core = config.makeCore()
        _ = try core.start(now: 100)
        var out = try hearCat(&core, at: "kitchen-pi", count: 10)
        for t in stride(from: 105.0, through: 140, by: 0.5) { out += try core.advance(to: t) }
        let away = try #require(out.last { $0.topic == Topics().presence(cat) })
        #expect(try WireFormat.decode(PresenceDecision.self, from: away.payload).room == nil, "away")
        #expect(core.engine.decision(for: cat) == nil, "forgotten")
        let refreshed = try core.refresh(now: 141).filter { $0.topic == Topics().presence(cat) }
        #expect(refreshed.count == (partitioned ? 0 : 1), "\(refreshed.map { String(decoding: $0.payload, as: UTF8.self) })")
    }

    /// A core with Home Assistant discovery on the test site without its `beacons:` list.
    static func unlistedCore(awayTimeout: Double? = nil, forgetAfter: Double) -> AggregatorCore<FusionEngine> {
        let topics = Topics()
        var unlisted = site
        unlisted.beacons = []
        var settings = FusionSettings()
        if let awayTimeout { settings.awayTimeout = awayTimeout }
        settings.forgetAfter = forgetAfter
        return AggregatorCore(engine: FusionEngine(site: unlisted, settings: settings), site: unlisted, topics: topics,
                              discovery: HomeAssistantDiscovery(topics: topics, site: unlisted))
    }

    /// A beacon the site does not list, away for longer than `forget_after_s` when the aggregator
    /// restarts: its retained away is resumed and its device announced again, then the engine
    /// forgets it. It was then no longer wanted, and the start's clean-up removed its device from
    /// Home Assistant (or not, as the tick and the clean-up fell), though within a run a forgotten
    /// beacon keeps its device. It stays wanted.
    @Test func aBeaconForgottenAfterARestartKeepsItsDevice() throws {
        let topics = Topics()
        var core = Self.unlistedCore(forgetAfter: 10)
        let device = "homeassistant/device/roomcast_beacon_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45/config"
        let away = PresenceDecision(id: cat, name: nil, room: nil, floor: nil, distance: nil, confidence: 0.9, node: nil,
                                    since: 0, lastSeen: 0, evidence: [], ts: 0)
        _ = try core.handle(topic: topics.presence(cat), payload: try WireFormat.encode(away), now: 100)
        #expect(try core.start(now: 100).contains { $0.topic == device }, "announced again with the start")
        for t in stride(from: 100.5, through: 110, by: 0.5) { _ = try core.advance(to: t) }
        #expect(core.engine.decision(for: cat) == nil, "forgotten")
        #expect(try core.wantedDiscovery().contains { $0.topic == device }, "its device stays wanted")
    }

    /// A beacon the site does not list, with per-entity configs from an `entity`-mode run, is
    /// migrated when it is announced: without it, Home Assistant refused its device's entities
    /// (their unique ids still held) until it restarted, and the clean-up then removed the old ones.
    @Test func anUnlistedBeaconsPerEntityConfigsAreMigratedWhenItIsAnnounced() throws {
        let topics = Topics()
        var unlisted = site
        unlisted.beacons = []
        let old = try HomeAssistantDiscovery(topics: topics, mode: .entity, site: unlisted).beaconConfigs(id: cat, name: nil).map(\.topic)
        let device = "homeassistant/device/roomcast_beacon_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45/config"
        var core = AggregatorCore(engine: FusionEngine(site: unlisted), site: unlisted, topics: topics,
                                  discovery: HomeAssistantDiscovery(topics: topics, site: unlisted))
        #expect(try !core.start(now: 100, existing: Set(old)).contains { old.contains($0.topic) })
        let out = try hearCat(&core, at: "kitchen-pi", count: 8)
        let at = try #require(out.firstIndex { $0.topic == device })
        #expect(old.count == 4)
        for topic in old {
            let migrate = try #require(out.firstIndex { $0.topic == topic && $0.payload == Array(#"{"migrate_discovery":true}"#.utf8) }, "\(topic)")
            let cleared = try #require(out.firstIndex { $0.topic == topic && $0.payload.isEmpty }, "\(topic)")
            #expect(migrate < at && at < cleared, "\(topic)")
        }
        #expect(core.migratedTopics == Set(old))

        // Resumed before the start (its retained presence read while draining), it goes out with
        // the start's configs, migrated, not ahead of them.
        let retained = try #require(out.last { $0.topic == topics.presence(cat) })
        var restarted = AggregatorCore(engine: FusionEngine(site: unlisted), site: unlisted, topics: topics,
                                       discovery: HomeAssistantDiscovery(topics: topics, site: unlisted))
        #expect(try restarted.handle(topic: retained.topic, payload: retained.payload, now: 200).messages.isEmpty)
        let started = try restarted.start(now: 201, existing: Set(old))
        let device2 = try #require(started.firstIndex { $0.topic == device })
        #expect(started.firstIndex { old.contains($0.topic) && !$0.payload.isEmpty }.map { $0 < device2 } == true)
    }

    /// On a site that lists no beacons, a partition starting keeps the Home Assistant device of a
    /// beacon another partition has (its retained presence in that partition's rooms, or away):
    /// that partition announces each beacon once per run, so a config cleared here stayed gone
    /// until it restarted. A config with no presence behind it is still stale.
    @Test func aPartitionKeepsTheDevicesOfAnotherPartitionsUnlistedBeacons() throws {
        let topics = Topics()
        let site = SiteModel(rooms: [.init(name: "kitchen"), .init(name: "bedroom", floor: 1)],
                             nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "bedroom-pi", room: "bedroom")])
        let dog = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-46")!, owl = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-47")!
        func config(_ id: BeaconID) -> String {
            "homeassistant/device/roomcast_beacon_\(id.rawValue.map { $0.isLetter || $0.isNumber ? $0 : "_" }.map(String.init).joined())/config"
        }
        var upstairs = AggregatorConfig(site: site, partition: .init(floors: [1])).makeCore()
        _ = try upstairs.start(now: 100)
        let out = try hearCat(&upstairs, at: "bedroom-pi", count: 8)
        #expect(out.contains { $0.topic == config(cat) })
        let catPresence = try #require(out.last { $0.topic == topics.presence(cat) })
        #expect(try WireFormat.decode(PresenceDecision.self, from: catPresence.payload).room == "bedroom")
        let away = PresenceDecision(id: owl, name: nil, room: nil, floor: nil, distance: nil, confidence: 0, node: nil,
                                    since: 90, lastSeen: 60, evidence: [], ts: 90)

        var ground = AggregatorConfig(site: site, partition: .init(floors: [0])).makeCore()
        _ = try ground.start(now: 200)
        _ = try ground.handle(topic: catPresence.topic, payload: catPresence.payload, now: 200)
        _ = try ground.handle(topic: topics.presence(owl), payload: WireFormat.encode(away), now: 200)
        let wanted = Set(try ground.wantedDiscovery().map(\.topic))
        #expect(wanted.contains(config(cat)), "placed upstairs")
        #expect(wanted.contains(config(owl)), "away, last published by either")
        #expect(!wanted.contains(config(dog)), "no presence behind it: stale")
        let discovery = try #require(ground.discovery)
        let cleared = discovery.removals(existing: [config(cat), config(owl), config(dog)], wanted: try ground.wantedDiscovery())
        #expect(cleared.map(\.topic) == [config(dog)])
    }

    /// A retained away decision the engine does not take (here a node's own beacon, on a site
    /// that lists its beacons) is not resumed: its absence from the engine matched the away, so
    /// it was announced to Home Assistant as a beacon of the site.
    @Test func anAwayDecisionTheEngineRefusesIsNotResumed() throws {
        let nodeBeacon = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-900-1")!
        var calibrated = site
        calibrated.nodes = [.init(name: "kitchen-pi", room: "kitchen", beacon: nodeBeacon), .init(name: "office-pi", room: "office")]
        let topics = Topics()
        var core = AggregatorCore(engine: FusionEngine(site: calibrated), site: calibrated, topics: topics,
                                  discovery: HomeAssistantDiscovery(topics: topics, site: calibrated))
        _ = try core.start(now: 100)
        let away = PresenceDecision(id: nodeBeacon, name: nil, room: nil, floor: nil, distance: nil, confidence: 0, node: nil,
                                    since: 50, lastSeen: 40, evidence: [], ts: 90)
        let out = try core.handle(topic: topics.presence(nodeBeacon), payload: WireFormat.encode(away), now: 100).messages
        #expect(!out.contains { $0.topic.contains("900_1") }, "\(out.map(\.topic))")
        #expect(try !core.wantedDiscovery().contains { $0.topic.contains("900_1") })
        #expect(try !core.refresh(now: 101).contains { $0.topic == topics.presence(nodeBeacon) })
    }

    /// On a site that lists no beacons, a node's advertisement was tracked and placed before the
    /// user named it the node's own (`nodes[].beacon`): its retained presence is not resumed
    /// (no device, no occupant, no leave 30 s later), and it is cleared with the leftovers.
    @Test func aNodesOwnBeaconPlacedBeforeItWasNamedIsNotResumed() throws {
        let nodeBeacon = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-900-1")!
        var open = site
        open.beacons = []
        open.nodes = [.init(name: "kitchen-pi", room: "kitchen", beacon: nodeBeacon), .init(name: "office-pi", room: "office")]
        let topics = Topics()
        var core = AggregatorCore(engine: FusionEngine(site: open), site: open, topics: topics,
                                  discovery: HomeAssistantDiscovery(topics: topics, site: open))
        _ = try core.start(now: 100)
        let placed = PresenceDecision(id: nodeBeacon, name: nil, room: "kitchen", floor: 0, distance: 1, confidence: 0.9,
                                      node: "kitchen-pi", since: 50, lastSeen: 90, evidence: [], ts: 90)
        var out = try core.handle(topic: topics.presence(nodeBeacon), payload: WireFormat.encode(placed), now: 100).messages
        out += try core.advance(to: 140)
        out += try core.refresh(now: 140)
        #expect(!out.contains { $0.topic.contains("900_1") || $0.topic == topics.presence(nodeBeacon) }, "\(out.map(\.topic))")
        #expect(!out.contains { $0.topic == topics.room("kitchen") && String(decoding: $0.payload, as: UTF8.self).contains("900-1") })
        #expect(try !core.wantedDiscovery().contains { $0.topic.contains("900_1") })
        var leftovers = RetainedLeftovers(site: open, topics: topics)
        leftovers.observe(topic: topics.presence(nodeBeacon), payload: try WireFormat.encode(placed), retained: true)
        #expect(leftovers.take().map(\.topic) == [topics.presence(nodeBeacon), topics.presenceRoom(nodeBeacon)])
    }

    /// Time that jumps far ahead (a replay line with a stray timestamp, a clock set wrong) is
    /// ticked through for its first day and then once at its end: ticking every second of it stalled, and past
    /// 2^53 s a tick no longer moved the clock and never ended. After a jump the core goes on
    /// deciding (readings are accepted up to the year 2100).
    @Test(.timeLimit(.minutes(1)), arguments: [100_000.0, 1e12, 1e300])
    func aJumpFarAheadIsTickedThroughForItsFirstDayOnly(to jump: Double) throws {
        var core = AggregatorCore(engine: FusionEngine(site: site), site: site, topics: Topics(), discovery: nil)
        _ = try core.start(now: 100)
        _ = try core.handle(topic: Topics().nodeBeacon("kitchen-pi", cat),
                            payload: WireFormat.encode(reading("kitchen-pi", rssi: -55, ts: 100)), now: 100)
        let during = try core.advance(to: jump)
        let away = try #require(during.compactMap { try? WireFormat.decode(PresenceDecision.self, from: $0.payload) }
            .first { $0.id == cat && $0.room == nil }, "away within the gap")
        #expect(away.ts < 200, "at the away timeout after the last reading, not at the gap's end: \(away.ts)")
        _ = try core.advance(to: jump + 0.5)
        let refusedBefore = core.intake.rejected[.outOfRange, default: 0]
        for k in 0..<10 {
            let t = jump + 1 + 0.5 * Double(k)
            _ = try core.handle(topic: Topics().nodeBeacon("office-pi", cat),
                                payload: WireFormat.encode(reading("office-pi", rssi: -50, ts: t, seq: UInt64(k + 2))), now: t)
        }
        if jump < 4_102_444_800 {
            #expect(core.engine.decision(for: cat)?.room == "office", "still deciding after the jump")
        } else {
            // Past 2100 a reading's time is out of range: each is refused and counted, and none decides.
            #expect(core.intake.rejected[.outOfRange, default: 0] - refusedBefore == 10)
            #expect(core.engine.decision(for: cat)?.room == nil)
        }
    }

    @Test func theNodesOwnBeaconsReachTheEngineButAreNeverPublished() throws {
        // A site that lists its beacons: readings of anything else are dropped, except the
        // nodes' own beacons, which the engine needs for calibration.
        let kitchenBeacon = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-900-1")!
        let officeBeacon = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-900-2")!
        let stranger = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-7")!
        var calibrated = site
        calibrated.nodes = [.init(name: "kitchen-pi", room: "kitchen", position: [1, 1, 1], beacon: kitchenBeacon),
                            .init(name: "office-pi", room: "office", position: [1, 1, 4], beacon: officeBeacon)]
        let topics = Topics()
        var core = AggregatorCore(engine: FusionEngine(site: calibrated), site: calibrated, topics: topics, discovery: nil)
        _ = try core.start(now: 100)
        var out: [OutboundMessage] = []
        for (k, (node, id)) in [("office-pi", kitchenBeacon), ("kitchen-pi", officeBeacon), ("kitchen-pi", stranger)].enumerated() {
            var r = reading(node, rssi: -70, ts: 100 + Double(k))
            r.id = id
            out += try core.handle(topic: topics.nodeBeacon(node, id), payload: WireFormat.encode(r), now: 100 + Double(k)).messages
        }
        out += try core.handle(topic: topics.nodeBeacon("kitchen-pi", cat), payload: WireFormat.encode(reading("kitchen-pi", rssi: -60, ts: 104)), now: 104).messages
        out += try core.advance(to: 106)
        #expect(core.engine.counters.calibrationReadings == 2)
        #expect(core.engine.counters.accepted == 1)
        #expect(core.engine.trackedBeacons == 1)
        let presence = out.filter { $0.topic.hasPrefix("roomcast/presence/") }.map(\.topic)
        #expect(presence.contains { $0.contains(cat.rawValue) })
        #expect(!presence.contains { $0.contains(kitchenBeacon.rawValue) || $0.contains(officeBeacon.rawValue) || $0.contains(stranger.rawValue) })
    }

    @Test func publishesPresenceRoomsAndEventsOnChangeOnly() throws {
        var core = makeCore(discovery: false)
        let topics = Topics()
        _ = try core.start(now: 100)
        var out: [OutboundMessage] = []
        out += try core.handle(topic: topics.nodeBeacon("kitchen-pi", cat), payload: WireFormat.encode(reading("kitchen-pi", rssi: -60, ts: 100)), now: 100).messages
        out += try core.advance(to: 101.5)
        let presence = out.filter { $0.topic == topics.presence(cat) }
        #expect(presence.count == 1)
        #expect(presence.allSatisfy { $0.retain })
        let decision = try WireFormat.decode(PresenceDecision.self, from: presence[0].payload)
        #expect(decision.room == "kitchen")
        #expect(decision.name == "Cat")
        let events = try out.filter { $0.topic == topics.events }.map { try WireFormat.decode(RoomEvent.self, from: $0.payload) }
        #expect(events.map(\.event) == [.enter])
        let room = try #require(out.first { $0.topic == topics.room("kitchen") })
        let occupancy = try WireFormat.decode(RoomOccupancy.self, from: room.payload)
        #expect(occupancy.occupied && occupancy.count == 1 && occupancy.beacons == [cat])

        // Same room again: nothing new.
        var again = try core.handle(topic: topics.nodeBeacon("kitchen-pi", cat), payload: WireFormat.encode(reading("kitchen-pi", rssi: -61, ts: 102, seq: 2)), now: 102).messages
        again += try core.advance(to: 103.5)
        #expect(again.isEmpty)

        // Moves to the office: leave + enter, both rooms republished.
        var moved = try core.handle(topic: topics.nodeBeacon("office-pi", cat), payload: WireFormat.encode(reading("office-pi", rssi: -50, ts: 104)), now: 104).messages
        moved += try core.advance(to: 105.5)
        let moveEvents = try moved.filter { $0.topic == topics.events }.map { try WireFormat.decode(RoomEvent.self, from: $0.payload) }
        #expect(moveEvents.map(\.event) == [.leave, .enter])
        #expect(moveEvents[0].room == "kitchen" && moveEvents[0].other == "office")
        #expect(Set(moved.map(\.topic)).isSuperset(of: [topics.room("kitchen"), topics.room("office")]))
    }

    @Test func offlineNodeDropsOutAtOnce() throws {
        var core = makeCore(discovery: false)
        let topics = Topics()
        _ = try core.start(now: 0)
        _ = try core.handle(topic: topics.nodeBeacon("kitchen-pi", cat), payload: WireFormat.encode(reading("kitchen-pi", rssi: -60, ts: 0)), now: 0)
        _ = try core.advance(to: 1.5)
        #expect(core.engine.decision(for: cat)?.room == "kitchen")
        let out = try core.handle(topic: topics.nodeStatus("kitchen-pi"), payload: Array("offline".utf8), now: 2).messages
        let d = try WireFormat.decode(PresenceDecision.self, from: try #require(out.first { $0.topic == topics.presence(cat) }).payload)
        #expect(d.room == nil)
    }

    @Test func rejectsHostileInputWithCounters() throws {
        var core = makeCore(discovery: false)
        let topics = Topics()
        let good = try WireFormat.encode(reading("kitchen-pi", rssi: -60, ts: 10))
        var longName = reading("kitchen-pi", rssi: -60, ts: 10)
        longName.name = String(repeating: "n", count: 60_000)
        var escapeName = reading("kitchen-pi", rssi: -60, ts: 10)
        escapeName.name = "\u{1B}]0;pwned\u{07}\u{1B}[2J"  // retitles and clears a terminal running `aggregator watch`
        var lineName = reading("kitchen-pi", rssi: -60, ts: 10)
        lineName.name = "Cat\nAWAY: everyone"
        let cases: [(String, [UInt8], InputIntake.Rejection)] = [
            // Found by the intake fuzzer from a seed near the size limit: the name went out again
            // in presence, past the limit every consumer applies.
            (topics.nodeBeacon("kitchen-pi", cat), try WireFormat.encode(longName), .outOfRange),
            (topics.nodeBeacon("kitchen-pi", cat), try WireFormat.encode(escapeName), .outOfRange),
            (topics.nodeBeacon("kitchen-pi", cat), try WireFormat.encode(lineName), .outOfRange),
            (topics.nodeBeacon("office-pi", cat), good, .nodeMismatch),
            (topics.nodeBeacon("attic-pi", cat), good, .unknownNode),
            (topics.nodeBeacon("kitchen-pi", cat), Array(#"{"v":2}"#.utf8), .badVersion),
            (topics.nodeBeacon("kitchen-pi", cat), [0xff, 0xfe, 0x00], .badPayload),
            (topics.nodeBeacon("kitchen-pi", cat), Array(#"{"v":1,"id":1}"#.utf8), .badPayload),
            (topics.nodeBeacon("kitchen-pi", cat), [UInt8](repeating: 0x20, count: 1 << 20), .tooLarge),
            (topics.nodeBeacon("kitchen-pi", cat), Array(String(decoding: good, as: UTF8.self).replacingOccurrences(of: "\"rssi\":-60", with: "\"rssi\":1e300").utf8), .badPayload),
            (topics.nodeBeacon("kitchen-pi", cat), Array(String(decoding: good, as: UTF8.self).replacingOccurrences(of: "\"distance\":1", with: "\"distance\":-5").utf8), .outOfRange),
            // A level known to no spread would count infinitely.
            (topics.nodeBeacon("kitchen-pi", cat), Array(String(decoding: good, as: UTF8.self).replacingOccurrences(of: "\"rssi\":-60", with: "\"rssi\":-60,\"rssi_sd\":0").utf8), .outOfRange),
            (topics.nodeBeacon("kitchen-pi", cat), Array(String(decoding: good, as: UTF8.self).replacingOccurrences(of: "\"rssi\":-60", with: "\"rssi\":-60,\"rssi_sd\":1e300").utf8), .outOfRange),
            ("roomcast/nodes/kitchen-pi/beacons/not-an-id", good, .foreignTopic),
            (topics.nodeStatus("kitchen-pi"), Array("maybe".utf8), .badPayload),
            // Partitions read one another's part of the learn state from it.
            (topics.aggregatorLearnState, Array(#"{"v":1,"ts":1,"active":"none"}"#.utf8), .badPayload),
        ]
        for (topic, payload, reason) in cases {
            let r = try core.handle(topic: topic, payload: payload, now: 10).rejection
            #expect(r?.reason == reason, "\(topic): \(String(describing: r))")
        }
        #expect(core.intake.rejectedTotal == UInt64(cases.count))
        // Good input still flows.
        #expect(try core.handle(topic: topics.nodeBeacon("kitchen-pi", cat), payload: good, now: 10).rejection == nil)
        _ = try core.advance(to: 12)
        #expect(core.engine.decision(for: cat)?.room == "kitchen")
    }

    /// On a site that lists no nodes a status message makes a node, as a reading does: a name
    /// no reading could carry (control characters, past 128 bytes) is refused the same way.
    @Test func aStatusFromANodeNamedAsNoNodeMayBeIsRefused() throws {
        let open = SiteModel(rooms: [], nodes: [])
        var core = AggregatorCore(engine: FusionEngine(site: open), site: open, topics: Topics(), discovery: nil)
        for name in ["bad\u{7}pi", String(repeating: "n", count: 200)] {
            let r = try core.handle(topic: "roomcast/nodes/\(name)/status", payload: Array("online".utf8), now: 1).rejection
            #expect(r?.reason == .outOfRange, "\(String(describing: r))")
        }
        #expect(try core.handle(topic: Topics().nodeStatus("hall-pi"), payload: Array("online".utf8), now: 1).rejection == nil)
    }

    @Test func resumeFromRetainedPresencePublishesNoEvents() throws {
        var core = makeCore(discovery: false)
        let topics = Topics()
        let retained = PresenceDecision(id: cat, name: "Cat", room: "kitchen", floor: 0, distance: 1, confidence: 1,
                                        node: "kitchen-pi", since: 50, lastSeen: 99, evidence: [], ts: 99)
        _ = try core.handle(topic: topics.presence(cat), payload: WireFormat.encode(retained), now: 100)
        var out = try core.handle(topic: topics.nodeBeacon("kitchen-pi", cat), payload: WireFormat.encode(reading("kitchen-pi", rssi: -60, ts: 100)), now: 100).messages
        out += try core.advance(to: 102)
        #expect(!out.contains { $0.topic == topics.events }, "a restart must not look like a leave and enter")
    }

    /// On a site that lists no nodes, rooms are made as nodes are first heard from. An ESPresense
    /// node sends no status, so at a start its room did not exist yet when its beacons'
    /// retained decisions were read, and they were not resumed.
    @Test func aBeaconInTheRoomOfANodeThatSendsNoStatusIsResumed() throws {
        let topics = Topics()
        var core = AggregatorCore(engine: FusionEngine(site: SiteModel()), site: SiteModel(), topics: topics, discovery: nil)
        core.acceptsESPresense = true
        _ = try core.start(now: 100)
        let retained = PresenceDecision(id: cat, name: "Cat", room: "hall-esp", floor: 0, distance: 1, confidence: 1,
                                        node: "hall-esp", since: 50, lastSeen: 99, evidence: [], ts: 99)
        _ = try core.handle(topic: topics.presence(cat), payload: WireFormat.encode(retained), now: 100)
        #expect(core.engine.decision(for: cat)?.room == "hall-esp")
        #expect(core.engine.decision(for: cat)?.reason == "resumed")
        // A decision in a room no node is named after makes no room.
        let dog = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-46")!
        let elsewhere = PresenceDecision(id: dog, name: nil, room: "attic", floor: 0, distance: 1, confidence: 1,
                                         node: "hall-esp", since: 50, lastSeen: 99, evidence: [], ts: 99)
        _ = try core.handle(topic: topics.presence(dog), payload: WireFormat.encode(elsewhere), now: 100)
        #expect(core.engine.decision(for: dog)?.room == nil)
    }

    /// Partitions share the presence topics, so an aggregator reads back other partitions'
    /// retained decisions too. One in a room it does not have is not its to resume: when the
    /// beacon is then placed in one of its own rooms, it publishes that room's occupancy and
    /// none for the other partition's room (resumed, the change published it as left).
    @Test func anotherPartitionsRetainedPresenceIsNotResumed() throws {
        let topics = Topics()
        let site = SiteModel(rooms: [.init(name: "kitchen"), .init(name: "bedroom", floor: 1)],
                             nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "bedroom-pi", room: "bedroom")],
                             beacons: [.init(id: cat, name: "Cat")])
        var core = AggregatorConfig(site: site, partition: .init(floors: [1])).makeCore()
        var out = try core.start(now: 100)
        let theirs = PresenceDecision(id: cat, name: "Cat", room: "kitchen", floor: 0, distance: 1, confidence: 1,
                                      node: "kitchen-pi", since: 50, lastSeen: 99, evidence: [], ts: 99)
        out += try core.handle(topic: topics.presence(cat), payload: WireFormat.encode(theirs), now: 100).messages
        for k in 0..<12 {
            let t = 100 + 0.5 * Double(k)
            out += try core.handle(topic: topics.nodeBeacon("bedroom-pi", cat),
                                   payload: WireFormat.encode(reading("bedroom-pi", rssi: -60, ts: t, seq: UInt64(k + 1))), now: t).messages
        }
        #expect(core.engine.decision(for: cat)?.room == "bedroom")
        #expect(out.contains { $0.topic == topics.room("bedroom") })
        #expect(!out.contains { $0.topic == topics.room("kitchen") })
        #expect(!out.contains { $0.topic == topics.events && String(decoding: $0.payload, as: UTF8.self).contains("kitchen") })
    }
}

@Suite struct ESPresenseInputTests {
    @Test func espresenseNodesFuseWithRoomcastNodes() throws {
        let topics = Topics()
        var core = makeCore(discovery: false)
        core.acceptsESPresense = true
        _ = try core.start(now: 0)
        // An ESPresense node named after its room ("office-pi" here, as configured) reports the cat close by.
        let payload = Array(#"{"id":"iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45","rssi@1m":-59,"rssi":-52.5,"raw":0.6,"distance":0.7,"mac":"aabbccddeeff","interval":100}"#.utf8)
        #expect(try core.handle(topic: "espresense/devices/iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45/office-pi",
                                payload: payload, now: 10).rejection == nil)
        _ = try core.handle(topic: topics.nodeBeacon("kitchen-pi", cat), payload: WireFormat.encode(reading("kitchen-pi", rssi: -80, ts: 10)), now: 10)
        _ = try core.advance(to: 12)
        #expect(core.engine.decision(for: cat)?.room == "office")
        // Garbage and unknown ESPresense nodes are rejected, never trapped on.
        #expect(try core.handle(topic: "espresense/devices/x/office-pi", payload: [0xff], now: 12).rejection?.reason == .badPayload)
        #expect(try core.handle(topic: "espresense/devices/x/garage", payload: payload, now: 12).rejection?.reason == .unknownNode)
        #expect(try core.handle(topic: "espresense/devices/x/office-pi", payload: Array(#"{"rssi":1e9}"#.utf8), now: 12).rejection?.reason == .outOfRange)
        // Counted as `/metrics` and the replay summary show them.
        #expect(core.intake.rejected == [.badPayload: 1, .unknownNode: 1, .outOfRange: 1])
        #expect(core.intake.accepted == 2)
    }

    /// ESPresense's `rssi@1m` carries the node's own adjustment. It overwrote the beacon's power
    /// from the Roomcast nodes' readings at every ESPresense message, so in a mixed fleet the
    /// power flipped, and every level the model compares moved with it.
    @Test func aRoomcastNodesPowerForTheBeaconBeatsAnESPresenseReference() throws {
        let topics = Topics()
        // No beacon listed: a listed one's power comes from the config, whatever nodes say.
        let open = SiteModel(rooms: site.rooms, nodes: site.nodes)
        var core = AggregatorCore(engine: FusionEngine(site: open), site: open, topics: topics, discovery: nil)
        core.acceptsESPresense = true
        _ = try core.start(now: 0)
        let unlisted = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-7")!
        func power() -> Double? { core.engine.beaconIndex[unlisted].map { core.engine.beacons[$0].power } }
        let esp = Array(#"{"id":"iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-7","rssi@1m":-72,"rssi":-60,"distance":2}"#.utf8)
        let espTopic = "espresense/devices/iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-7/office-pi"
        // Heard by the ESPresense node alone, its reference is all there is.
        #expect(try core.handle(topic: espTopic, payload: esp, now: 1).rejection == nil)
        #expect(power() == -72)
        var seq: UInt64 = 0
        for t in stride(from: 2.0, through: 10, by: 1) {
            seq += 1
            var r = reading("kitchen-pi", rssi: -70, ts: t, seq: seq)
            r.id = unlisted
            r.power = -61
            _ = try core.handle(topic: topics.nodeBeacon("kitchen-pi", unlisted), payload: WireFormat.encode(r), now: t)
            #expect(power() == -61)
            #expect(try core.handle(topic: espTopic, payload: esp, now: t + 0.5).rejection == nil)
            #expect(power() == -61, "an ESPresense message at \(t + 0.5) s set the power")
        }
    }

    /// An agent with `outputs.espresense` publishes each reading on its own topic and as
    /// ESPresense; an aggregator with `inputs.espresense` counted such a reading twice.
    @Test func anAgentsOwnESPresenseOutputIsNotCountedTwice() throws {
        var core = makeCore(discovery: false)
        core.acceptsESPresense = true
        _ = try core.start(now: 0)
        // As the agent's output writes it (`CompatibilityOutputsTests` checks the agent's side).
        let echo = Array(#"{"id":"ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45","rssi@1m":-59,"rssi":-60,"raw":1,"distance":1,"mac":"aabbccddeeff","int":1000,"roomcast_node":"office-pi"}"#.utf8)
        let outcome = try core.handle(topic: "espresense/devices/ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45/office-pi",
                                      payload: echo, now: 5)
        #expect(outcome.rejection?.reason == .echo)
        #expect(outcome.rejection?.message.contains("office-pi") == true)
        #expect(core.intake.rejected[.echo] == 1)
        let r = reading("office-pi", rssi: -60, ts: 5)
        // The same reading on the agent's own topic is taken.
        #expect(try core.handle(topic: Topics().nodeBeacon("office-pi", cat), payload: WireFormat.encode(r), now: 5).rejection == nil)
    }

    @Test func idsMapOntoOursOrAFingerprint() {
        #expect(ESPresenseInput.beaconID("iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45") == cat)
        #expect(ESPresenseInput.beaconID("altBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-8")?.rawValue
                == "altbeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-8")
        #expect(ESPresenseInput.beaconID("name:johns-watch")?.rawValue == "fp:espresense-name-johns-watch")
        #expect(ESPresenseInput.beaconID("tile:f155906529dc")?.rawValue == "fp:espresense-tile-f155906529dc")
        #expect(ESPresenseInput.beaconID("eddy:edd1ebeac04e5defa017-0bdb87539b67")?.rawValue == "eddystone:edd1ebeac04e5defa017-0bdb87539b67")
        // ESPresense's firmware writes the namespace's fifth byte twice: the beacon's id without it.
        #expect(ESPresenseInput.beaconID("eddy:edd1ebeac0c04e5defa017-0bdb87539b67")?.rawValue == "eddystone:edd1ebeac04e5defa017-0bdb87539b67")
        // A public or static address, bare or known: the id a Roomcast agent gives a device listed by it.
        #expect(ESPresenseInput.beaconID("f155906529dc")?.rawValue == "mac:f155906529dc")
        #expect(ESPresenseInput.beaconID("known:F155906529DC")?.rawValue == "mac:f155906529dc")
        // Twelve characters that are not six bytes (the separators Hex skips) are no address: a
        // `mac:` id of fewer bytes has a presence topic that never parses back.
        for id in ["aa-bb-cc-dd-", "::::::::::::", "aabbccddee  "] {
            let made = ESPresenseInput.beaconID(id)
            #expect(made?.scheme == "fp" && made.map { Topics().parse(Topics().presence($0)) == .presence(id: $0) } == true, "\(id): \(made?.rawValue ?? "nil")")
        }
        // A kind of device, shared by every such device near the node: no beacon.
        for kind in ["apple:1005:9-26", "apple:findmy", "exp:20", "md:0118:26", "sd:0000fe9f", "ad:0000fd6f-20",
                     "msft:cdp:0102", "smarttag:13", "node:kitchen"] {
            #expect(ESPresenseInput.beaconID(kind) == nil, "\(kind)")
        }
        // ESPresense names a phone by its key's hex; passed through, it was a second id for a
        // phone Roomcast's agents name by the key's name.
        #expect(ESPresenseInput.beaconID("irk:9b7d0f1e2a3b4c5d6e7f8091a2b3c4d5")?.rawValue == "fp:espresense-irk-9b7d0f1e2a3b4c5d6e7f8091a2b3c4d5")
    }

    /// ESPresense leaves `distance` out when it is not a number: read as 0 m, the reading was
    /// `immediate`. From the levels instead: -79 dBm against -59 at 1 m is about 6 m, far.
    @Test func aReadingWithoutADistanceIsRangedFromItsLevels() throws {
        var input = ESPresenseInput()
        let topic = "espresense/devices/iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45/office-pi"
        let payload = Array(#"{"id":"iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45","rssi@1m":-59,"rssi":-79.25}"#.utf8)
        let r = try input.reading(topic: topic, payload: payload, now: 10).get()
        #expect(r.proximity == .far)
        #expect(abs(r.distance - 6.3) < 0.2, "\(r.distance)")
    }

    /// ESPresense nodes send no heartbeat. After a restart the cat is resumed in the office and
    /// not heard again; the office's ESPresense node reports other devices, which the site does
    /// not place: it is listening all the same, and the cat goes away after the timeout, not held.
    /// A forged (or cleared) `offline` for it does not silence it either: its next reading is life,
    /// and the cat's silence counts from that return.
    @Test func anESPresenseNodeIsHeardByItsReadingsOfAnything() throws {
        var core = AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore()
        core.acceptsESPresense = true
        _ = try core.start(now: 100)
        let retained = PresenceDecision(id: cat, name: "Cat", room: "office", floor: 0, distance: 1, confidence: 0.9,
                                        node: "office-pi", since: 50, lastSeen: 99, evidence: [], ts: 99)
        _ = try core.handle(topic: Topics().presence(cat), payload: WireFormat.encode(retained), now: 100.2)
        let other = "iBeacon:11111111-2222-3333-4444-555555555555-1-1"
        let payload = Array(#"{"id":"\#(other)","rssi@1m":-59,"rssi":-70,"distance":3}"#.utf8)
        var away: Double?
        for t in stride(from: 101.0, through: 170, by: 1) {
            if t == 120 {
                _ = try core.handle(topic: "espresense/rooms/office-pi/status", payload: [], now: t)
                #expect(core.offline.contains("office-pi"))
            }
            let outcome = try core.handle(topic: "espresense/devices/\(other)/office-pi", payload: payload, now: t + 0.5)
            if t == 120 { #expect(outcome.rejection?.reason == .nodeBackOnline) }
            let decisions = try (outcome.messages + core.advance(to: t + 0.9)).filter { $0.topic == Topics().presence(cat) }
                .map { try WireFormat.decode(PresenceDecision.self, from: $0.payload) }
            if away == nil, decisions.contains(where: { $0.room == nil }) { away = t }
        }
        #expect(!core.offline.contains("office-pi"))
        // Its silence counted from the node's return at 120.5 (a node back from offline counts it from then).
        #expect(away.map { $0 >= 149 && $0 <= 156 } == true, "away at \(String(describing: away)); \(String(describing: core.engine.decision(for: cat)))")
    }

    /// Many iPhones near an ESPresense node share `apple:1005:9-26`: fused as one beacon they
    /// placed a phantom wherever iPhones were. Refused, counted as `not_one_device`.
    @Test func aKindOfDeviceIsNotPlaced() throws {
        var core = makeCore(discovery: false)
        core.acceptsESPresense = true
        _ = try core.start(now: 0)
        let payload = Array(#"{"id":"apple:1005:9-26","rssi@1m":-59,"rssi":-60,"distance":1,"mac":"4a1b2c3d4e5f"}"#.utf8)
        for t in stride(from: 1.0, through: 20, by: 1) {
            let outcome = try core.handle(topic: "espresense/devices/apple:1005:9-26/office-pi", payload: payload, now: t)
            #expect(outcome.rejection?.reason == .notOneDevice)
        }
        #expect(core.intake.rejected[.notOneDevice] == 20)
        #expect(core.currentDecisions().isEmpty)
    }

    /// An ESPresense node's Last Will (`espresense/rooms/<room>/status: offline`) was never read:
    /// a beacon only it heard went away when it lost power. It is an offline node now, and its
    /// beacon is held where it was; `online` brings it back.
    @Test func anESPresenseNodesLastWillMakesItOffline() throws {
        var core = AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore()
        core.acceptsESPresense = true
        _ = try core.start(now: 0)
        let topic = "espresense/devices/iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45/office-pi"
        let payload = Array(#"{"id":"iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45","rssi@1m":-59,"rssi":-55,"distance":0.6,"int":1000}"#.utf8)
        _ = try core.handle(topic: "espresense/rooms/office-pi/status", payload: Array("online".utf8), now: 0.5)
        for t in stride(from: 1.0, through: 20, by: 1) { _ = try core.handle(topic: topic, payload: payload, now: t) }
        #expect(core.engine.decision(for: cat)?.room == "office")
        let will = try core.handle(topic: "espresense/rooms/office-pi/status", payload: Array("offline".utf8), now: 20.5)
        #expect(will.rejection == nil)
        #expect(core.offline.contains("office-pi"))
        var published: [PresenceDecision] = []
        for t in stride(from: 21.0, through: 120, by: 1) {
            published += try core.advance(to: t).filter { $0.topic == Topics().presence(cat) }
                .map { try WireFormat.decode(PresenceDecision.self, from: $0.payload) }
        }
        #expect(!published.contains { $0.room == nil }, "away while its only node was offline: \(published.map { $0.reason ?? "" })")
        #expect(published.last?.room == "office" && published.last?.reason == "nodes_offline")
        _ = try core.handle(topic: "espresense/rooms/office-pi/status", payload: Array("online".utf8), now: 121)
        #expect(!core.offline.contains("office-pi"))
        #expect(try core.handle(topic: "espresense/rooms/garage/status", payload: Array("offline".utf8), now: 122).rejection?.reason == .unknownNode)
        #expect(try core.handle(topic: "espresense/rooms/office-pi/status", payload: Array("sleepy".utf8), now: 123).rejection?.reason == .badPayload)
    }

    /// Real ESPresense sends the mean advertising interval as `int` (ms); it was read from
    /// `interval`, which only Roomcast's own ESPresense output wrote, so it was never read.
    @Test func theIntervalIsReadFromESPresensesField() throws {
        var input = ESPresenseInput()
        let topic = "espresense/devices/iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45/office-pi"
        let esp = Array(#"{"id":"iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45","rssi@1m":-59,"rssi":-60,"raw":1.1,"distance":1.2,"int":1000}"#.utf8)
        #expect(try input.reading(topic: topic, payload: esp, now: 10).get().interval == 1)
        let older = Array(#"{"id":"iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45","rssi@1m":-59,"rssi":-60,"raw":1.1,"distance":1.2,"interval":250}"#.utf8)
        #expect(try input.reading(topic: topic, payload: older, now: 10).get().interval == 0.25)
    }

    /// An ESPresense name is whatever the device advertises: one with control characters is
    /// left out, and the device is still followed.
    @Test func anESPresenseNameWithControlCharactersIsLeftOutNotTheReading() throws {
        var input = ESPresenseInput()
        let topic = "espresense/devices/iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45/office-pi"
        let esp = Array(#"{"id":"iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45","name":"tag\u001b[2J","rssi@1m":-59,"rssi":-60,"distance":1.2}"#.utf8)
        let r = try input.reading(topic: topic, payload: esp, now: 10).get()
        #expect(r.name == nil && r.rssi == -60)
        // A name longer than a reading's may be: the name goes, not the reading.
        let long = Array(#"{"id":"iBeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45","name":"\#(String(repeating: "x", count: InputIntake.maximumNameBytes + 1))","rssi":-61,"distance":1.2}"#.utf8)
        let kept = try input.reading(topic: topic, payload: long, now: 11).get()
        #expect(kept.name == nil && kept.rssi == -61)
    }
}

@Suite struct DecisionHoldTests {
    @Test func nobodyGoesAwayWhileTheAggregatorIsDeafAndDecidingResumesAfter() throws {
        var core = makeCore(discovery: false)
        let topics = Topics()
        _ = try core.start(now: 0)
        _ = try core.handle(topic: topics.nodeBeacon("kitchen-pi", cat), payload: WireFormat.encode(reading("kitchen-pi", rssi: -60, ts: 0)), now: 0)
        _ = try core.advance(to: 2)
        #expect(core.engine.decision(for: cat)?.room == "kitchen")
        // The broker is gone for 40 s (longer than the 10 s the fake engine waits before "away").
        core.lostHearing(at: 2)
        #expect(try core.advance(to: 42).isEmpty)
        // Back at 42 with a 3 s grace: the node's first fresh reading arrives at 43.
        core.regainedHearing(at: 42, grace: 3)
        _ = try core.handle(topic: topics.nodeBeacon("kitchen-pi", cat), payload: WireFormat.encode(reading("kitchen-pi", rssi: -60, ts: 43, seq: 2)), now: 43)
        let after = try core.advance(to: 50)
        #expect(!after.contains { $0.topic == topics.presence(cat) }, "no away, no re-enter")
        #expect(core.engine.decision(for: cat)?.room == "kitchen")
        // Deciding has resumed: the cat is heard louder in the office and is followed.
        _ = try core.handle(topic: topics.nodeBeacon("office-pi", cat), payload: WireFormat.encode(reading("office-pi", rssi: -50, ts: 51, seq: 3)), now: 51)
        let moved = try core.advance(to: 53)
        #expect(moved.contains { $0.topic == topics.presence(cat) })
        #expect(core.engine.decision(for: cat)?.room == "office")
    }
}

@Suite struct ClockSkewTests {
    static let topics = Topics()

    /// Feeds a reading of `node` captured `lag` seconds before `now`; returns the core's note.
    static func feed(_ core: inout AggregatorCore<StrongestLatest>, _ node: String, captured: Double, now: Double,
                     seq: UInt64) throws -> InputIntake.RejectionDetail? {
        try core.handle(topic: topics.nodeBeacon(node, cat), payload: WireFormat.encode(reading(node, rssi: -60, ts: captured, seq: seq)),
                        now: now).rejection
    }

    /// Named from a lag that leaves its readings stale, or nearly, for fusion, which counts a
    /// reading 4 s from its capture: 30 s behind, and 6 s (a Pi without a clock battery that lost
    /// NTP for a couple of days). A node 0.3 s behind, the network's delay, is not named.
    @Test(arguments: [30.0, 6])
    func aNodeWhoseClockIsOffIsNamedOnceAWindowAgrees(_ behind: Double) throws {
        var core = makeCore(discovery: false)
        _ = try core.start(now: 100)
        var notes: [InputIntake.RejectionDetail] = []
        for i in 0..<25 {
            let t = 100 + Double(i)
            if let n = try Self.feed(&core, "kitchen-pi", captured: t - behind, now: t, seq: UInt64(i + 1)) { notes.append(n) }
            if let n = try Self.feed(&core, "office-pi", captured: t - 0.2, now: t + 0.1, seq: UInt64(i + 1)) { notes.append(n) }
        }
        #expect(notes.map(\.reason) == [.clockSkew, .clockSkew], "one verdict per closed window: \(notes)")
        #expect(notes.allSatisfy { $0.message.contains("'kitchen-pi': its clock is \(Int(behind)) s behind: its readings are counted as of their arrival") })
        #expect(core.skewedNodes == ["kitchen-pi": behind])
        #expect(core.intake.rejected[.clockSkew] == 2, "each verdict counted on /metrics")
    }

    /// When every node's clock is off by the same amount, the clock that is off is most likely
    /// the aggregator's own: the warning says so, rather than sending the user to check each
    /// node's. One node off among nodes that agree with the aggregator is named as before.
    @Test(arguments: [600.0, -600])
    func everyNodeOffAlikeBlamesTheAggregatorsClock(_ behind: Double) throws {
        var core = makeCore(discovery: false)
        let start = 1_700_000_000.0
        _ = try core.start(now: start)
        var notes: [InputIntake.RejectionDetail] = []
        for i in 0..<25 {
            let t = start + Double(i)
            for (k, node) in ["kitchen-pi", "office-pi"].enumerated() {
                let now = t + 0.1 * Double(k)
                if let n = try Self.feed(&core, node, captured: now - behind - 0.2, now: now, seq: UInt64(i + 1)) { notes.append(n) }
            }
        }
        let direction = behind > 0 ? "ahead" : "behind"
        let blamed = notes.filter { $0.message.contains("most likely this aggregator's clock is 600 s \(direction); check its clock (NTP)") }
        // The first node judged has no other to agree with yet; from the second verdict on, each says so.
        #expect(notes.count == 4 && blamed.count == 3, "\(notes.map(\.message))")
        // One condition, the aggregator's, not one per node: its log line is keyed by no node, so a
        // site of 50 nodes says it once rather than 50 times.
        #expect(blamed.allSatisfy { $0.node == nil } && notes.filter { !blamed.contains($0) }.allSatisfy { $0.node != nil })
        #expect(core.skewedNodes.keys.sorted() == ["kitchen-pi", "office-pi"], "both still put on the aggregator's clock")
    }

    /// A Pi without a clock battery or NTP is minutes or hours out after a reboot. Its readings
    /// were all too old (or too far ahead) for fusion, so its room emptied: a beacon beside it
    /// was shown in the next room, or away. Once a window agrees on the offset, its readings are
    /// put on the aggregator's clock and count; a clock put right is followed the same way.
    @Test(arguments: [600.0, -600])
    func aNodeWhoseClockIsOffStillCounts(_ behind: Double) throws {
        var core = AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore()
        let start = 1_700_000_000.0
        _ = try core.start(now: start)
        var seq: UInt64 = 0
        func second(_ t: Double, kitchenClock: Double) throws {
            seq += 1
            for (node, rssi, clock) in [("kitchen-pi", -50.0, kitchenClock), ("office-pi", -80, 0)] {
                _ = try core.handle(topic: Self.topics.nodeBeacon(node, cat),
                                    payload: WireFormat.encode(reading(node, rssi: rssi, ts: t - clock, seq: seq)), now: t + 0.05)
            }
            _ = try core.advance(to: t + 0.5)
        }
        for t in stride(from: start + 1, through: start + 30, by: 1) { try second(t, kitchenClock: behind) }
        #expect(core.skewedNodes.keys.sorted() == ["kitchen-pi"])
        #expect(core.engine.decision(for: cat)?.room == "kitchen", "\(String(describing: core.engine.decision(for: cat)))")
        // A forged `offline` for it: its next reading, captured after the status on this clock,
        // brings it back (judged by its own clock it was captured long before).
        try second(start + 31, kitchenClock: behind)
        _ = try core.handle(topic: Self.topics.nodeStatus("kitchen-pi"), payload: Array("offline".utf8), now: start + 31.6)
        try second(start + 32, kitchenClock: behind)
        #expect(core.intake.rejected[.nodeBackOnline] == 1, "\(core.intake.rejected)")
        #expect(core.engine.decision(for: cat)?.room == "kitchen")
        // NTP puts the kitchen's clock right: the next window says so, and its readings count on.
        for t in stride(from: start + 33, through: start + 60, by: 1) { try second(t, kitchenClock: 0) }
        #expect(core.skewedNodes.isEmpty)
        #expect(core.engine.decision(for: cat)?.room == "kitchen")
    }

    @Test func oneForgedTimestampBlamesNobody() throws {
        var core = makeCore(discovery: false)
        _ = try core.start(now: 100)
        var notes: [InputIntake.RejectionDetail] = []
        for i in 0..<25 {
            let t = 100 + Double(i)
            // Reading 7 of the kitchen node carries ts=0 (forged, or a broken RTC for one packet).
            let captured = i == 7 ? 0 : t - 0.1
            if let n = try Self.feed(&core, "kitchen-pi", captured: captured, now: t, seq: UInt64(i + 1)) { notes.append(n) }
        }
        #expect(notes.isEmpty, "\(notes)")
        #expect(core.skewedNodes.isEmpty)
    }

    @Test func aBacklogReadWhileDeafBlamesNobody() throws {
        var core = makeCore(discovery: false)
        _ = try core.start(now: 0)
        var seq: UInt64 = 0
        func feed(captured: Double, now: Double) throws -> InputIntake.RejectionDetail? {
            seq += 1
            return try Self.feed(&core, "kitchen-pi", captured: captured, now: now, seq: seq)
        }
        for t in stride(from: 1.0, to: 20, by: 1) { #expect(try feed(captured: t - 0.1, now: t) == nil) }
        // The aggregator was stopped from 20 to 60: it reads 40 s of readings at once on waking.
        core.lostHearing(at: 20)
        for t in stride(from: 20.0, to: 60, by: 1) { #expect(try feed(captured: t, now: 60) == nil) }
        core.regainedHearing(at: 60, grace: 3)
        for t in stride(from: 60.0, to: 90, by: 1) { let note = try feed(captured: t - 0.1, now: t); #expect(note == nil, "\(t): \(String(describing: note))") }
        #expect(core.skewedNodes.isEmpty)
    }
}

@Suite struct NodeStatusFromTrafficTests {
    @Test func aForgedOfflineDoesNotSilenceALiveNode() throws {
        var core = makeCore(discovery: false)
        let topics = Topics()
        _ = try core.start(now: 0)
        var seq: UInt64 = 0
        func feed(_ node: String, _ rssi: Double, at t: Double) throws -> InputIntake.RejectionDetail? {
            seq += 1
            return try core.handle(topic: topics.nodeBeacon(node, cat), payload: WireFormat.encode(reading(node, rssi: rssi, ts: t, seq: seq)), now: t).rejection
        }
        _ = try feed("kitchen-pi", -60, at: 0)
        _ = try feed("office-pi", -75, at: 0)
        _ = try core.advance(to: 2)
        #expect(core.engine.decision(for: cat)?.room == "kitchen")
        // Someone publishes a non-retained `offline` for the kitchen node, which is alive.
        _ = try core.handle(topic: topics.nodeStatus("kitchen-pi"), payload: Array("offline".utf8), now: 2.5)
        _ = try core.advance(to: 3)
        #expect(core.engine.decision(for: cat)?.room == "office", "an offline node's evidence drops out at once")
        // A reading captured before the status arrived was in flight: it proves nothing.
        #expect(try feed("kitchen-pi", -60, at: 2.4) == nil)
        _ = try core.advance(to: 3)
        #expect(core.engine.decision(for: cat)?.room == "office")
        // Its next reading shows it is alive: it counts again, and says so once.
        let note = try feed("kitchen-pi", -60, at: 3.2)
        #expect(note?.reason == .nodeBackOnline)
        #expect(try feed("kitchen-pi", -60, at: 3.4) == nil, "said once, not per reading")
        #expect(core.intake.rejected[.nodeBackOnline] == 1)
        _ = try core.advance(to: 5)
        #expect(core.engine.decision(for: cat)?.room == "kitchen", "the live node's readings decide again")
    }
}

/// Node names come from the network: the clock verdicts are bounded like the windows, which
/// start afresh each time the aggregator stops listening (names rotated across such restarts
/// added verdicts without end).
@Suite struct NodeClockWatchTests {
    /// A link where readings queue (a saturated Wi-Fi: their delay grows from 2 to 18 s) is as
    /// late as a clock 10 s behind, on the median; only the clock's lag is the same for every
    /// reading. Taken for a clock, the queue's stale readings would have counted as fresh.
    @Test func aQueueIsNoClockOffset() {
        var watch = NodeClockWatch()
        var now = 1000.0
        for i in 0..<40 {
            now += 0.5
            _ = watch.observe(node: "queued", captured: now - (2 + Double(i % 20) * 0.8), now: now)
            _ = watch.observe(node: "behind", captured: now - 10 - (i % 2 == 0 ? 0.3 : 0), now: now)
        }
        #expect(watch.offNodes["queued"] != nil && watch.offNodes["behind"] != nil, "both named: \(watch.offNodes)")
        #expect(watch.offsets.keys.sorted() == ["behind"], "only the clock is corrected: \(watch.offsets)")
    }

    /// A node heard once a second gives ten readings a window: one of them held up (or forged)
    /// is no reason to take its clock's offset for a queue's.
    @Test func oneOddReadingInASmallWindowLeavesTheClockSteady() {
        var watch = NodeClockWatch()
        var now = 1000.0
        for i in 0..<30 {
            now += 1
            _ = watch.observe(node: "behind", captured: now - 30 - (i % 10 == 4 ? 9 : 0), now: now)
        }
        #expect(watch.offsets["behind"] == 30, "\(watch.offsets)")
    }

    @Test func verdictsStayBoundedAcrossRestartedWindows() {
        var watch = NodeClockWatch(maximumNodes: 8)
        var now = 1000.0
        for round in 0..<5 {
            for k in 0..<8 {
                let node = "n\(round)-\(k)"
                for step in 0...6 { _ = watch.observe(node: node, captured: now + Double(step) * 2 - 30, now: now + Double(step) * 2) }
            }
            now += 20
            watch.restartWindows()
        }
        #expect(watch.offNodes.count == 8)
        // A node already named is still judged: its clock put right, it is dropped.
        let named = watch.offNodes.keys.sorted()[0]
        for step in 0...12 { _ = watch.observe(node: named, captured: now + Double(step), now: now + Double(step)) }
        #expect(watch.offNodes[named] == nil)
    }
}
