import Foundation
import RoomcastFusion
import Shared
import Testing
@testable import RoomcastAggregator

/// Learn commands through the aggregator core, as the live service and `aggregator replay`
/// run them: results, the retained learn state, refusals, and replays that teach.
@Suite struct AggregatorLearningTests {
    /// A kitchen downstairs and a bedroom upstairs, a node each: a partition per floor.
    static let twoFloors = SiteModel(
        rooms: [.init(name: "kitchen"), .init(name: "bedroom", floor: 1)],
        nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "bedroom-pi", room: "bedroom")],
        beacons: [.init(id: tag, name: "Tag")])

    static let tag = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-1")!
    static let site = SiteModel(
        rooms: [.init(name: "kitchen"), .init(name: "office")],
        nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "office-pi", room: "office")],
        beacons: [.init(id: tag, name: "Tag")])
    let topics = Topics()

    func core() -> AggregatorCore<FusionEngine> {
        AggregatorCore(engine: FusionEngine(site: Self.site), site: Self.site, topics: topics, discovery: nil)
    }

    /// Log lines: the tag heard by both nodes five times a second over `from..<to`, and the
    /// learn commands given at their times.
    static func lines(from: Double, to: Double, kitchen: Double = -62, office: Double = -78,
                      commands: [(Double, LearnCommand)] = []) throws -> [MessageLogLine] {
        var out: [MessageLogLine] = []
        var seq: UInt64 = 0
        // Times on the millisecond, as the message log writes them: the JSONL text then
        // carries exactly these readings.
        var t = from
        while t < to {
            t = (t * 1000).rounded() / 1000
            seq += 1
            for (node, rssi) in [("kitchen-pi", kitchen), ("office-pi", office)] {
                var r = BeaconReading(id: tag, node: node, ts: t, seq: seq, rssi: Int(rssi), rssiFiltered: rssi, power: -59,
                                      distance: 2, proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:01")
                r.interval = 0.2
                out.append(MessageLogLine(ts: t, message: try OutboundMessage(topic: Topics().nodeBeacon(node, tag), json: r)))
            }
            t += 0.2
        }
        for (at, command) in commands {
            out.append(MessageLogLine(ts: at, message: OutboundMessage(topic: Topics().aggregatorLearn, payload: command.encoded(), qos: 1)))
        }
        return out.sorted { $0.ts < $1.ts }
    }

    func results(_ messages: [MessageLogLine]) -> [LearnResult] {
        messages.filter { $0.topic == topics.aggregatorLearnResult }.compactMap { try? WireFormat.decode(LearnResult.self, from: $0.payload) }
    }

    func replay(_ core: inout AggregatorCore<FusionEngine>, _ inputs: [MessageLogLine]) throws -> [MessageLogLine] {
        var report = ReplayRunner.Report()
        var published: [MessageLogLine] = []
        try ReplayRunner.run(core: &core, inputs: inputs, report: &report) { published.append($0) }
        return published
    }

    /// Home Assistant's teaching selects read their state from the retained learn state, so it is
    /// announced at start when they are offered, even with nothing learned; a site that neither
    /// teaches nor offers them publishes nothing new.
    @Test func theLearnStateIsAnnouncedAtStartWhereHomeAssistantCanTeach() throws {
        func announced(discovery: HomeAssistantDiscovery?) throws -> LearnState? {
            var core = AggregatorCore(engine: FusionEngine(site: Self.site), site: Self.site, topics: topics, discovery: discovery)
            return try core.start(now: 100).first { $0.topic == topics.aggregatorLearnState }
                .map { try WireFormat.decode(LearnState.self, from: $0.payload) }
        }
        let offered = try #require(try announced(discovery: HomeAssistantDiscovery(topics: topics, site: Self.site)))
        #expect(offered.active.isEmpty && offered.rooms.isEmpty && offered.ts == 100)
        #expect(try announced(discovery: HomeAssistantDiscovery(topics: topics, site: Self.site, teaching: false)) == nil)
        #expect(try announced(discovery: nil) == nil)
    }

    /// A one-room site has nothing to teach (a beacon heard at all is in its room): Home Assistant
    /// is offered no teaching select there, nor the rooms-taught sensor; two rooms are.
    @Test func aOneRoomSiteIsOfferedNoTeaching() throws {
        func components(_ site: SiteModel) throws -> [String] {
            var core = AggregatorConfig(site: site).makeCore()
            let started = try core.start(now: 100)
            return try started.filter { $0.topic.hasPrefix("homeassistant/device/") && !$0.payload.isEmpty }.flatMap { m in
                let cmps = (try JSONSerialization.jsonObject(with: Data(m.payload)) as? [String: Any])?["cmps"] as? [String: Any]
                return Array((cmps ?? [:]).keys)
            }
        }
        let oneRoom = SiteModel(rooms: [.init(name: "kitchen")], nodes: [.init(name: "kitchen-pi", room: "kitchen")], beacons: Self.site.beacons)
        let one = try components(oneRoom)
        #expect(one.contains { $0.hasSuffix("_room") } && !one.contains { $0.hasSuffix("_teach") || $0.contains("rooms_taught") }, "\(one)")
        let two = try components(Self.site)
        #expect(two.contains { $0.hasSuffix("_teach") } && two.contains { $0.contains("rooms_taught") }, "\(two)")
    }

    /// Under `partition:` every aggregator hears each learn command and Home Assistant's configs
    /// for a beacon or a person come from whichever published last: the configs name every room
    /// of the site, and a command for another partition's room is left to it, not refused.
    @Test func partitionsShareTheSitesRoomsInDiscoveryAndLeaveOneAnothersCommandsAlone() throws {
        let site = Self.twoFloors
        var core = AggregatorConfig(site: site, partition: .init(floors: [1])).makeCore()
        #expect(core.otherPartitionsRooms == ["kitchen"])
        let started = try core.start(now: 100)
        let tag = try #require(started.first { $0.topic == "homeassistant/device/roomcast_beacon_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_7_1/config" })
        let cmps = try #require((try JSONSerialization.jsonObject(with: Data(tag.payload)) as? [String: Any])?["cmps"] as? [String: [String: Any]])
        #expect(cmps["roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_7_1_room"]?["options"] as? [String] == ["Kitchen", "Bedroom", "Away"])
        #expect(cmps["roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_7_1_teach"]?["options"] as? [String] == ["Not teaching", "Kitchen", "Bedroom"])
        // Room devices stay the partition's own.
        #expect(started.contains { $0.topic == "homeassistant/device/roomcast_room_bedroom/config" })
        #expect(!started.contains { $0.topic == "homeassistant/device/roomcast_room_kitchen/config" })

        func answers(_ command: LearnCommand, at t: Double) throws -> [LearnResult] {
            return try core.handle(topic: topics.aggregatorLearn, payload: command.encoded(), now: t).messages
                .filter { $0.topic == topics.aggregatorLearnResult }
                .map { try WireFormat.decode(LearnResult.self, from: $0.payload) }
        }
        // The kitchen is the other partition's: no answer from this one, whatever the command.
        #expect(try answers(LearnCommand(.label(room: "kitchen", beacon: Self.tag, seconds: 10), request: "k"), at: 101).isEmpty)
        #expect(try answers(LearnCommand(.forget(room: "kitchen"), request: "f"), at: 101).isEmpty)
        #expect(try answers(LearnCommand(.cancel(beacon: Self.tag), request: "c"), at: 101).isEmpty)
        // Its own room: started, and a cancel of that label is answered here.
        #expect(try answers(LearnCommand(.label(room: "bedroom", beacon: Self.tag, seconds: 10), request: "b"), at: 102).map(\.status) == [.started])
        // (Its sender hears of it too.)
        #expect(try answers(LearnCommand(.cancel(beacon: Self.tag), request: "c"), at: 103).map { "\($0.status) \($0.request ?? "-")" }
                == ["cancelled c", "cancelled b"])
        // A room of no partition is still refused.
        #expect(try answers(LearnCommand(.label(room: "attic", beacon: Self.tag, seconds: 10), request: "a"), at: 104).map(\.status) == [.rejected])
    }

    /// Partitions share the retained learn state's topic, and Home Assistant's selects and
    /// A room taught before the site lost it (renamed, say) is still in one partition's state
    /// file. It is no partition's: neither publishes it, and they do not answer one another for
    /// ever over it, each taking it for its own and dropping it from the other's state.
    @Test func aTaughtRoomTheSiteNoLongerHasSetsNoPartitionsArguing() throws {
        let site = Self.twoFloors
        func taught(_ rooms: String...) -> LearnedRooms {
            LearnedRooms(rooms: rooms.map { .init(name: $0, seconds: 30, nodes: [.init(node: "kitchen-pi", seconds: 30, mean: -2, spread: 2)]) })
        }
        var cores = [AggregatorConfig(site: site, partition: .init(floors: [0])).makeCore(),
                     AggregatorConfig(site: site, partition: .init(floors: [1])).makeCore()]
        cores[0].restoreLearned(taught("attic", "kitchen"))
        cores[1].restoreLearned(taught("bedroom"))
        var broker = SharedTopicBroker(topics.aggregatorLearnState, of: LearnState.self)
        try broker.deliver(try cores[0].start(now: 100) + cores[1].start(now: 100), to: &cores, at: 100)
        #expect(broker.retained?.rooms.map(\.name) == ["bedroom", "kitchen"])
        // Clearing a retained command (`mosquitto_pub -r -n`) reaches the partitions empty: no answer.
        #expect(try cores[0].handle(topic: topics.aggregatorLearn, payload: [], now: 101).messages.isEmpty)
    }

    /// `aggregator learn --show` read the whole site's labels and rooms from it: each partition
    /// publishes its own part with the others' as heard there, and publishes again when a state
    /// that went out after its own lacks it. Delivered in the order a broker would, the
    /// partitions converge on one state holding both parts, and stop.
    @Test func partitionsPublishOneLearnStateWithEachOnesPart() throws {
        let dog = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-2")!
        let site = SiteModel(
            rooms: [.init(name: "kitchen"), .init(name: "bedroom", floor: 1)],
            nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "bedroom-pi", room: "bedroom")],
            beacons: [.init(id: Self.tag, name: "Tag"), .init(id: dog, name: "Dog")])
        func taught(_ room: String) -> LearnedRooms {
            LearnedRooms(rooms: [.init(name: room, seconds: 30, nodes: [.init(node: "\(room)-pi", seconds: 30, mean: -2, spread: 2)])])
        }
        var cores = [AggregatorConfig(site: site, partition: .init(floors: [0])).makeCore(),
                     AggregatorConfig(site: site, partition: .init(floors: [1])).makeCore()]
        cores[0].restoreLearned(taught("kitchen"))
        cores[1].restoreLearned(taught("bedroom"))

        var broker = SharedTopicBroker(topics.aggregatorLearnState, of: LearnState.self)
        func deliver(_ published: [OutboundMessage], at t: Double) throws { try broker.deliver(published, to: &cores, at: t) }
        func command(_ c: LearnCommand, at t: Double) throws {
            var out: [OutboundMessage] = []
            for i in cores.indices { out += try cores[i].handle(topic: topics.aggregatorLearn, payload: c.encoded(), now: t).messages }
            try deliver(out, at: t)
        }
        func labels() -> [String] { (broker.retained?.active ?? []).map { "\($0.beacon == dog ? "dog" : "tag") \($0.room)" }.sorted() }

        // Both start at once, each with its room taught, neither having heard the other.
        try deliver(try cores[0].start(now: 100) + cores[1].start(now: 100), at: 100)
        #expect(broker.retained?.rooms.map(\.name) == ["bedroom", "kitchen"])
        #expect(broker.retained?.rooms.first?.nodes.map(\.node) == ["bedroom-pi"])

        // A label in each partition: the state shows both running.
        try command(LearnCommand(.label(room: "kitchen", beacon: Self.tag, seconds: 30), request: "k"), at: 101)
        try command(LearnCommand(.label(room: "bedroom", beacon: dog, seconds: 30), request: "b"), at: 101)
        #expect(labels() == ["dog bedroom", "tag kitchen"])

        // One the other partition refuses (1000 s) replaces nothing: the kitchen's label runs on.
        let refused = LearnCommand(.label(room: "bedroom", beacon: Self.tag, seconds: 1000), request: "r")
        for i in cores.indices { _ = try cores[i].handle(topic: topics.aggregatorLearn, payload: refused.encoded(), now: 101.5) }
        #expect(cores[0].activeLabels.map(\.room) == ["kitchen"])

        // A newer label for the tag in the other partition's room replaces the one running.
        var replaced: [LearnResult] = []
        var out: [OutboundMessage] = []
        let moved = LearnCommand(.label(room: "bedroom", beacon: Self.tag, seconds: 30), request: "m")
        for i in cores.indices { out += try cores[i].handle(topic: topics.aggregatorLearn, payload: moved.encoded(), now: 102).messages }
        replaced = out.filter { $0.topic == topics.aggregatorLearnResult }.compactMap { try? WireFormat.decode(LearnResult.self, from: $0.payload) }
        try deliver(out, at: 102)
        #expect(replaced.map { "\($0.status) \($0.room ?? "-") \($0.request ?? "-")" }.sorted() == ["replaced kitchen k", "started bedroom m"])
        #expect(labels() == ["dog bedroom", "tag bedroom"])
        #expect(cores[0].activeLabels.isEmpty)

        // Forgetting a room takes it out of the shared state and leaves the other's.
        try command(LearnCommand(.forget(room: "kitchen"), request: "f"), at: 103)
        #expect(broker.retained?.rooms.map(\.name) == ["bedroom"])
        #expect(labels() == ["dog bedroom", "tag bedroom"])

        // A partition restarted without what it had (its state file lost) takes its old part
        // out of the retained state on hearing it, and keeps the other's.
        cores[0].restoreLearned(taught("kitchen"))
        try deliver([try cores[0].learnState(now: 104)], at: 104)
        #expect(broker.retained?.rooms.map(\.name) == ["bedroom", "kitchen"])
        cores[1] = AggregatorConfig(site: site, partition: .init(floors: [1])).makeCore()
        var restarted = try cores[1].start(now: 105).filter { $0.topic == topics.aggregatorLearnState }
        if let state = broker.retained { restarted.append(try state.message(topics: topics)) }
        try deliver(restarted, at: 105)
        #expect(broker.retained?.rooms.map(\.name) == ["kitchen"])
        #expect(broker.retained?.active.isEmpty == true)

        // An aggregator of the whole site publishes only its own state, whatever it hears: once,
        // in place of one that is not what it has, and not again.
        var whole = AggregatorConfig(site: site).makeCore()
        let heard = try #require(broker.retained).message(topics: topics)
        #expect(try whole.handle(topic: heard.topic, payload: heard.payload, now: 106).messages.isEmpty, "before its start")
        let own = try whole.start(now: 106.5).filter { $0.topic == topics.aggregatorLearnState }
        #expect(try own.map { try WireFormat.decode(LearnState.self, from: $0.payload).rooms.map(\.name) } == [[]])
        #expect(try whole.handle(topic: heard.topic, payload: heard.payload, now: 107).messages.isEmpty)
    }

    /// The shared learn state is open to any client the broker lets write it. One that writes it
    /// over and over without this partition's part made the partition publish the whole state
    /// (up to 64 KiB) in answer to each message. It answers as often as a learn command may bring
    /// a state, then once more when the window allows, at a tick.
    @Test func aPartitionAnswersAStrangersStatesAtAPace() throws {
        let site = Self.twoFloors
        var core = AggregatorConfig(site: site, partition: .init(floors: [0])).makeCore()
        core.restoreLearned(LearnedRooms(rooms: [.init(name: "kitchen", seconds: 30,
                                                       nodes: [.init(node: "kitchen-pi", seconds: 30, mean: -2, spread: 2)])]))
        _ = try core.start(now: 100)
        let stranger = try LearnState(ts: 100, active: [], learned: LearnedRooms()).message(topics: topics)
        func answers(_ messages: [OutboundMessage]) throws -> [[String]] {
            try messages.filter { $0.topic == topics.aggregatorLearnState }
                .map { try WireFormat.decode(LearnState.self, from: $0.payload).rooms.map(\.name) }
        }
        var answered: [[String]] = []
        for i in 0..<200 {
            answered += try answers(core.handle(topic: stranger.topic, payload: stranger.payload, now: 200 + Double(i) * 0.01).messages)
        }
        #expect(answered.count == LearnSession.commandsPerWindow, "\(answered.count) answers to 200 messages")
        #expect(answered.allSatisfy { $0 == ["kitchen"] })
        // The one held back goes out once the window allows, and only once.
        #expect(try answers(core.advance(to: 205)).isEmpty)
        #expect(try answers(core.advance(to: 210)) == [["kitchen"]])
        #expect(try answers(core.advance(to: 215)).isEmpty)
        // Held back again, then a state that has this partition's part: nothing is owed.
        for i in 0..<30 {
            _ = try core.handle(topic: stranger.topic, payload: stranger.payload, now: 216 + Double(i) * 0.01)
        }
        let whole = try core.learnState(now: 217)
        #expect(try answers(core.handle(topic: whole.topic, payload: whole.payload, now: 217).messages).isEmpty)
        #expect(try answers(core.advance(to: 230)).isEmpty, "the state heard last needs no answer")
    }

    @Test func aLabelStartsReportsProgressAndEndsLearned() throws {
        var core = core()
        let label = LearnCommand(.label(room: "kitchen", beacon: Self.tag, seconds: 10), request: "r1")
        let published = try replay(&core, try Self.lines(from: 1000, to: 1020, commands: [(1005, label)]))
        let results = results(published)
        #expect(results.map(\.status) == [.started, .learned])
        #expect(results.allSatisfy { $0.request == "r1" && $0.room == "kitchen" && $0.beacon == Self.tag })
        let learned = try #require(results.last)
        #expect(learned.started == 1005 && learned.ends == 1015)
        #expect(abs((learned.recorded ?? 0) - 10) < 0.01)
        #expect(learned.nodes?.map(\.node) == ["kitchen-pi", "office-pi"])
        #expect(abs((learned.nodes?[0].mean ?? 0) - -3) < 0.1 && abs((learned.nodes?[1].mean ?? 0) - -19) < 0.1)
        // The retained state: progress while it runs (once a tick), then the room learned.
        let states = published.filter { $0.topic == topics.aggregatorLearnState }
        #expect(states.allSatisfy { $0.retain } && states.count >= 10)
        let last = try WireFormat.decode(LearnState.self, from: try #require(states.last).payload)
        #expect(last.active.isEmpty && last.rooms.map(\.name) == ["kitchen"])
        #expect(core.learnedRooms.room(named: "kitchen") != nil && core.learnedRevision == 1)
    }

    @Test func replayingLearnMessagesGivesTheSameLearnedStateEveryTime() throws {
        let inputs = try Self.lines(from: 1000, to: 1060, commands: [
            (1005, LearnCommand(.label(room: "kitchen", beacon: Self.tag, seconds: 10))),
            (1030, LearnCommand(.label(room: "kitchen", beacon: Self.tag, seconds: 20))),
        ])
        var a = core(), b = core()
        let outA = try replay(&a, inputs), outB = try replay(&b, inputs)
        #expect(outA == outB)
        #expect(a.learnedRooms == b.learnedRooms)
        let room = try #require(a.learnedRooms.room(named: "kitchen"))
        #expect(abs(room.seconds - 30) < 0.01)
        // Through the JSONL text `aggregator replay` reads, the same.
        var report = ReplayRunner.Report()
        let text = inputs.map { $0.encoded() }.joined(separator: "\n")
        var c = core()
        _ = try replay(&c, ReplayRunner.mergedInputs(logs: [(name: "log", text: text)], report: &report))
        #expect(report.badLines.isEmpty && c.learnedRooms == a.learnedRooms)
    }

    @Test func aTrainedStateCarriesFromOneReplayToTheNext() throws {
        var first = core()
        _ = try replay(&first, try Self.lines(from: 1000, to: 1020, commands: [(1005, LearnCommand(.label(room: "kitchen", beacon: Self.tag, seconds: 10)))]))
        var second = core()
        second.restoreLearned(first.learnedRooms)
        let out = try replay(&second, try Self.lines(from: 2000, to: 2020, kitchen: -80, office: -60,
                                                      commands: [(2005, LearnCommand(.label(room: "office", beacon: Self.tag, seconds: 10)))]))
        #expect(second.learnedRooms.rooms.map(\.name) == ["kitchen", "office"])
        // A replay started from learned rooms announces them.
        #expect(out.first { $0.topic == topics.aggregatorLearnState } != nil)
    }

    @Test func cancelAndForget() throws {
        var core = core()
        let inputs = try Self.lines(from: 1000, to: 1040, commands: [
            (1005, LearnCommand(.label(room: "kitchen", beacon: Self.tag, seconds: 10), request: "a")),
            (1008, LearnCommand(.cancel(beacon: Self.tag), request: "b")),
            (1010, LearnCommand(.label(room: "office", beacon: Self.tag, seconds: 10), request: "c")),
            (1030, LearnCommand(.forget(room: "office"), request: "d")),
            (1031, LearnCommand(.forget(room: "offfice"), request: "e")),
        ])
        let results = results(try replay(&core, inputs))
        #expect(results.map(\.status) == [.started, .cancelled, .cancelled, .started, .learned, .forgotten, .rejected])
        #expect(results.map { $0.request ?? "-" } == ["a", "b", "a", "c", "c", "d", "e"])
        #expect(results.last?.error == "nothing is learned for room 'offfice'; nothing is learned at all")
        #expect(core.learnedRooms.isEmpty && core.learnedRevision == 2)
    }

    @Test func refusalsAreClearAndRateLimited() throws {
        var core = core()
        _ = try core.start(now: 1000)
        var out: [OutboundMessage] = []
        let unknownRoom = LearnCommand(.label(room: "kitchn", beacon: Self.tag, seconds: 30), request: "u")
        out += try core.handle(topic: topics.aggregatorLearn, payload: unknownRoom.encoded(), now: 1000).messages
        let (garbage, rejection) = try core.handle(topic: topics.aggregatorLearn, payload: Array("{\"request\":\"g\",\"room\":1}".utf8), now: 1000)
        out += garbage
        #expect(rejection?.reason == .badPayload)
        let refused = out.compactMap { try? WireFormat.decode(LearnResult.self, from: $0.payload) }
        #expect(refused.map(\.status) == [.rejected, .rejected])
        #expect(refused[0].error == "unknown room 'kitchn'; did you mean 'kitchen'?" && refused[0].request == "u")
        #expect(refused[1].error == "'room' must be a room name" && refused[1].request == "g")
        // A flood: a handful published per 10 s, the rest counted.
        var published = 0
        for i in 0..<100 {
            published += try core.handle(topic: topics.aggregatorLearn, payload: Array("x".utf8), now: 1001 + Double(i) * 0.01).messages
                .filter { $0.topic == topics.aggregatorLearnResult }.count
        }
        #expect(published == LearnSession.refusalsPerWindow - 2)
        #expect(core.learnRefusalsSuppressed == UInt64(100 - published))
    }

    /// Every command taken published its results and the whole retained state (up to 64 KiB):
    /// a looping automation made the aggregator publish that much per message it sent. At most
    /// 20 are taken every 10 s; the rest are refused (and refusals are rate-limited).
    @Test func acceptedCommandsAreRateLimitedToo() throws {
        var core = core()
        _ = try core.start(now: 1000)
        var states = 0
        for i in 0..<200 {
            let command = LearnCommand(i % 2 == 0 ? .label(room: "kitchen", beacon: Self.tag, seconds: 30) : .cancel(beacon: Self.tag))
            states += try core.handle(topic: topics.aggregatorLearn, payload: command.encoded(), now: 1000 + Double(i) * 0.01).messages
                .filter { $0.topic == topics.aggregatorLearnState }.count
        }
        #expect(states == LearnSession.commandsPerWindow, "learn states published for 200 commands in 2 s: \(states)")
        // The window over, commands are taken again.
        let later = try core.handle(topic: topics.aggregatorLearn, payload: LearnCommand(.label(room: "kitchen", beacon: Self.tag, seconds: 30)).encoded(),
                                    now: 1011).messages
        #expect(later.contains { $0.topic == topics.aggregatorLearnState })
    }

    @Test func anEngineThatCannotLearnRefuses() throws {
        var core = makeCore(discovery: false)
        _ = try core.start(now: 1)
        let out = try core.handle(topic: topics.aggregatorLearn,
                                  payload: LearnCommand(.label(room: "kitchen", beacon: Self.tag, seconds: 30)).encoded(), now: 1).messages
        let result = try #require(out.compactMap { try? WireFormat.decode(LearnResult.self, from: $0.payload) }.first)
        #expect(result.status == .rejected && result.error == "this aggregator's estimator cannot learn rooms")
    }

    @Test func nothingNewIsPublishedWhereNothingIsTaught() throws {
        var core = core()
        let out = try replay(&core, try Self.lines(from: 1000, to: 1010))
        #expect(!out.contains { $0.topic.hasPrefix(topics.aggregatorLearn) })
    }

    /// A learn state left retained by an earlier run lists a kitchen this run has not learned
    /// (its state file was moved away, or the room forgotten while it was down): `learn --show`
    /// and Home Assistant kept reading it. The aggregator now answers it with its own state,
    /// once: its own state heard back, and again with a label's progress moved on, is no news.
    /// Heard before the start (the backlog read first; a standby's whole wait, when nothing it
    /// answers goes out) it is answered by the start.
    @Test func aLearnStateLeftByAnEarlierRunIsReplaced() throws {
        var core = core()
        var stale = LearnState(ts: 50, active: [], learned: LearnedRooms())
        stale.rooms = [.init(name: "kitchen", seconds: 30, nodes: [])]
        #expect(try core.handle(topic: topics.aggregatorLearnState, payload: try WireFormat.encode(stale), now: 99).messages
            .allSatisfy { $0.topic != topics.aggregatorLearnState }, "before the start: left to it")
        let answer = try core.start(now: 100)
        let published = try #require(answer.first { $0.topic == topics.aggregatorLearnState })
        #expect(try WireFormat.decode(LearnState.self, from: published.payload).rooms.isEmpty)
        #expect(try core.handle(topic: topics.aggregatorLearnState, payload: published.payload, now: 101).messages
            .allSatisfy { $0.topic != topics.aggregatorLearnState }, "its own state heard back")
        _ = try replay(&core, try Self.lines(from: 102, to: 104, commands: [(102.5, LearnCommand(.label(room: "kitchen", beacon: Self.tag, seconds: 10)))]))
        let running = try core.learnState(now: 104)
        _ = try replay(&core, try Self.lines(from: 104, to: 106))
        #expect(try core.handle(topic: topics.aggregatorLearnState, payload: running.payload, now: 106).messages
            .allSatisfy { $0.topic != topics.aggregatorLearnState }, "its own state heard back while a label runs on")
        #expect(try core.handle(topic: topics.aggregatorLearnState, payload: try WireFormat.encode(stale), now: 106).messages
            .allSatisfy { $0.topic != topics.aggregatorLearnState }, "another's, once its own is out: no quarrel")
    }
}
