import Foundation
import RoomcastFusion
import RoomcastMQTT
import Shared
import Testing
import TestSupport
@testable import RoomcastAggregator

/// Teaching rooms end to end: the real `aggregator run` against a real mosquitto, a learn
/// command on the broker, readings as agents publish them, the result event, the retained
/// state, the state file and a restart that loads it; then `aggregator learn` itself.
@Suite(.serialized, .requiresMosquitto) struct LearnLiveTests {
    /// The home's config with `learn.state_file` in `dir`.
    static func writeConfig(port: Int, in dir: String, awayTimeout: Double? = nil) throws -> (config: String, stateFile: String) {
        let text = try LiveRig.config(port: port, rooms: Home.rooms, nodes: Home.nodes, beacons: Home.beacons, discovery: false,
                                      awayTimeout: awayTimeout)
        var root = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let stateFile = "\(dir)/learned-rooms.json"
        root["learn"] = ["state_file": stateFile]
        let path = "\(dir)/site.json"
        try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        return (path, stateFile)
    }

    static func results(_ observer: Observer) -> [LearnResult] {
        observer.seen.elements.filter { $0.topic == Topics().aggregatorLearnResult }
            .compactMap { try? WireFormat.decode(LearnResult.self, from: $0.payload) }
    }

    static func cli(_ arguments: [String], config: String, in dir: String, name: String) async throws -> (code: Int32, stdout: String, stderr: String) {
        let process = try ChildProcess(try LiveRig.executable("aggregator"), ["learn", "--config", config] + arguments,
                                       stdoutPath: "\(dir)/\(name).out", stderrPath: "\(dir)/\(name).err")
        let code = try await withTimeout(.seconds(60), "aggregator learn \(arguments.joined(separator: " "))") { await process.waitForExit() }
        return (code, process.stdout, process.stderr)
    }

    @Test func aLabelOverTheBrokerIsLearnedSavedAndLoadedAgainAfterARestart() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let (config, stateFile) = try Self.writeConfig(port: broker.port, in: dir)
        let observer = try await Observer(port: broker.port)
        let feeder = try await ReadingFeeder(port: broker.port)
        let first = try LiveRig.startAggregator(configPath: config, instance: "a", in: dir)
        defer { first.send(SIGKILL) }
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -60)
        feeder.set(Home.cat, node: "office-pi", rssi: -76)
        // Decided, so the aggregator is past its start-up hold and evaluates every second.
        try await observer.waitForRoom(Home.cat, "kitchen", timeout: .seconds(20))

        let command = LearnCommand(.label(room: "kitchen", beacon: Home.cat, seconds: 5), request: "live-1")
        try feeder.publish(MQTTMessage(topic: Topics().aggregatorLearn, payload: command.encoded(), qos: .atLeastOnce))
        try await observer.waitFor("the label learned", timeout: .seconds(20)) { _ in
            Self.results(observer).contains { $0.request == "live-1" && $0.status == .learned }
        }
        let statuses = Self.results(observer).filter { $0.request == "live-1" }.map(\.status)
        #expect(statuses == [.started, .learned])
        let learned = try #require(Self.results(observer).last { $0.request == "live-1" })
        #expect(learned.nodes?.map(\.node) == ["kitchen-pi", "office-pi"])
        #expect(abs((learned.nodes?.first?.mean ?? 0) - -1) < 0.5, "\(learned)")
        // A bad command gets a clear answer, and the service carries on.
        try feeder.publish(MQTTMessage(topic: Topics().aggregatorLearn, payload: Array("{\"request\":\"bad\",\"room\":\"kitchn\",\"beacon\":\"\(Home.cat)\"}".utf8), qos: .atLeastOnce))
        try await observer.waitFor("the refusal") { _ in
            Self.results(observer).contains { $0.request == "bad" && $0.status == .rejected && $0.error == "unknown room 'kitchn'; did you mean 'kitchen'?" }
        }

        // Retained for whoever looks later; written to the state file.
        let late = try await Observer(port: broker.port, filters: [Topics().aggregatorLearnState])
        try await late.waitFor("the retained learn state") { _ in
            guard let text = late.last(Topics().aggregatorLearnState),
                  let state = try? WireFormat.decode(LearnState.self, from: Array(text.utf8)) else { return false }
            return state.rooms.map(\.name) == ["kitchen"] && state.active.isEmpty
        }
        await late.stop()
        try await eventually("the state file written") { (try? LearnedRoomsStore(path: stateFile).load())??.room(named: "kitchen") != nil }

        // A restart loads it.
        first.send(SIGTERM)
        #expect(try await withTimeout(.seconds(10), "aggregator to exit") { await first.waitForExit() } == 0)
        let aggregator = try LiveRig.startAggregator(configPath: config, instance: "a2", in: dir)
        defer { aggregator.send(SIGKILL) }
        try await eventually("the restarted aggregator loaded the file", timeout: .seconds(20)) {
            aggregator.stdout.contains("learned rooms loaded")
        }
        #expect(aggregator.stdout.contains("rooms=kitchen"), "\(aggregator.stdout.suffix(2000))")
        let restartedAt = Date().timeIntervalSince1970
        try await observer.waitFor("a decision from the restarted aggregator", timeout: .seconds(20)) { _ in
            observer.presence(Home.cat).contains { $0.ts > restartedAt }
        }

        // `aggregator learn --show`, from the retained state and from the file.
        let shown = try await Self.cli(["--show"], config: config, in: dir, name: "show")
        // The label lasts 5 s of the aggregator's clock. A tick held up on a loaded machine
        // (the whole suite on two cores) leaves its part of the label unheard, so what it heard
        // covers most of the label (4 s or more), and never more than all of it.
        let taughtSeconds = shown.stdout.split(separator: "\n").first
            .flatMap { $0.hasPrefix("kitchen: ") && $0.hasSuffix(" s taught") ? Double($0.dropFirst(9).dropLast(9)) : nil }
        #expect(shown.code == 0 && taughtSeconds.map { $0 >= 4 && $0 <= 5 } == true, "\(shown)")
        #expect(shown.stdout.contains("kitchen-pi") && shown.stdout.contains("office-pi"), "\(shown.stdout)")
        // The file holds what the retained state shows, and may add the departure counts the
        // retained state leaves out: a pause of the feeder's readings on a loaded machine is a
        // silence that ended in coming back.
        let fromFile = try await Self.cli(["--show", "--file", stateFile], config: config, in: dir, name: "show-file")
        #expect(fromFile.code == 0 && fromFile.stdout.hasPrefix(shown.stdout), "\(fromFile)")
        let departures = fromFile.stdout.dropFirst(shown.stdout.count)
        #expect(departures.isEmpty || departures.hasPrefix("Silences that ended in leaving the site"), "\(fromFile)")

        // `aggregator learn --room` teaches a second room and prints what each node heard.
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -80)
        feeder.set(Home.cat, node: "office-pi", rssi: -58)
        let taught = try await Self.cli(["--room", "office", "--beacon", Home.cat.rawValue, "--seconds", "5"], config: config, in: dir, name: "teach")
        #expect(taught.code == 0, "\(taught)")
        #expect(taught.stdout.hasPrefix("office: "), "\(taught.stdout)")
        #expect(taught.stdout.contains("office-pi") && taught.stdout.contains("level dB"), "\(taught.stdout)")
        #expect(taught.stderr.contains("Learning office from \(Home.cat.rawValue) for 5 s"), "\(taught.stderr)")
        try await eventually("office in the state file") { (try? LearnedRoomsStore(path: stateFile).load())??.room(named: "office") != nil }

        // A mistyped room is refused before anything is sent; forgetting works.
        let typo = try await Self.cli(["--room", "ofice", "--beacon", Home.cat.rawValue], config: config, in: dir, name: "typo")
        #expect(typo.code == 64 && typo.stderr.contains("did you mean 'office'?"), "\(typo)")
        let forgot = try await Self.cli(["--forget", "office"], config: config, in: dir, name: "forget")
        #expect(forgot.code == 0 && forgot.stdout.contains("Forgot what was learned for office"), "\(forgot)")
        try await eventually("office gone from the state file") {
            (try? LearnedRoomsStore(path: stateFile).load())??.rooms.map(\.name) == ["kitchen"]
        }

        aggregator.send(SIGTERM)
        _ = await aggregator.waitForExit()
        await observer.stop()
        await feeder.stop()
        await broker.stop()
    }

    /// A learn state `--show` cannot read (a newer aggregator's) is said, exit 65, not taken
    /// for "nothing learned".
    @Test func aLearnStateThatCannotBeReadIsSaidNotTakenForNone() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let (config, _) = try Self.writeConfig(port: broker.port, in: dir)
        let publisher = try LiveRig.client(port: broker.port, id: "newer")
        publisher.start()
        try await publisher.waitUntilConnected(timeout: .seconds(10))
        try publisher.publish(MQTTMessage(topic: Topics().aggregatorLearnState, payload: Array(#"{"v":2,"ts":1}"#.utf8),
                                          qos: .atLeastOnce, retain: true))
        #expect(await publisher.flush(timeout: .seconds(10)))
        let shown = try await Self.cli(["--show"], config: config, in: dir, name: "show-newer")
        await publisher.shutdown()
        await broker.cleanup()
        #expect(shown.code == 65, "\(shown.stdout)\(shown.stderr)")
        #expect(shown.stderr.contains("cannot be read") && !shown.stdout.contains("Nothing learned"), "\(shown.stderr)")
    }

    /// Ctrl-C during `aggregator learn` cancels the label on the aggregator and is a clean stop
    /// (exit 0), not "no answer from the aggregator".
    @Test func aLabelStoppedWithCtrlCIsCancelledAndEndsCleanly() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let (config, _) = try Self.writeConfig(port: broker.port, in: dir)
        let observer = try await Observer(port: broker.port)
        let feeder = try await ReadingFeeder(port: broker.port)
        let aggregator = try LiveRig.startAggregator(configPath: config, instance: "a", in: dir)
        defer { aggregator.send(SIGKILL) }
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -60)
        try await observer.waitForRoom(Home.cat, "kitchen", timeout: .seconds(20))

        let learn = try ChildProcess(try LiveRig.executable("aggregator"),
                                     ["learn", "--config", config, "--room", "kitchen", "--beacon", Home.cat.rawValue, "--seconds", "60"],
                                     stdoutPath: "\(dir)/learn.out", stderrPath: "\(dir)/learn.err")
        defer { learn.send(SIGKILL) }
        try await eventually("the label started", timeout: .seconds(20), detail: { learn.stderr }) { learn.stderr.contains("Learning kitchen") }
        learn.send(SIGINT)
        let code = try await withTimeout(.seconds(30), "aggregator learn to stop") { await learn.waitForExit() }
        #expect(code == 0, "\(learn.stdout)\(learn.stderr)")
        #expect(learn.stdout.contains("Stopped: the label is cancelled on the aggregator"), "\(learn.stdout)\(learn.stderr)")
        try await observer.waitFor("the label cancelled on the aggregator") { _ in
            Self.results(observer).contains { $0.status == .cancelled && $0.beacon == Home.cat }
        }
        #expect(!Self.results(observer).contains { $0.status == .learned })
        await feeder.stop()
        await observer.stop()
    }

    /// Two partitions of one site, each a real aggregator on one broker, teach at once: the
    /// retained learn state shows both labels running and then both rooms taught (each
    /// partition's alone, the last one published winning, were they not merged), and
    /// `aggregator learn --show` on either partition's config lists the whole site.
    @Test func partitionsTeachingAtOnceShareOneLearnState() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        try LiveRig.writeFloorPartitions(port: broker.port, in: dir, discovery: false)
        let observer = try await Observer(port: broker.port)
        let feeder = try await ReadingFeeder(port: broker.port)
        feeder.set(Home.dog, node: "kitchen-pi", rssi: -58)
        feeder.set(Home.cat, node: "office-pi", rssi: -58)
        let ground = try LiveRig.startAggregator(configPath: "\(dir)/floor0.json", instance: "ground", in: dir)
        defer { ground.send(SIGKILL) }
        let upstairs = try LiveRig.startAggregator(configPath: "\(dir)/floor1.json", instance: "upstairs", in: dir)
        defer { upstairs.send(SIGKILL) }
        try await observer.waitForRoom(Home.dog, "kitchen", timeout: .seconds(20))
        try await observer.waitForRoom(Home.cat, "office", timeout: .seconds(20))

        for (room, beacon) in [("kitchen", Home.dog), ("office", Home.cat)] {
            let command = LearnCommand(.label(room: room, beacon: beacon, seconds: 5), request: room)
            try feeder.publish(MQTTMessage(topic: Topics().aggregatorLearn, payload: command.encoded(), qos: .atLeastOnce))
        }
        try await observer.waitFor("both labels learned", timeout: .seconds(20)) { _ in
            Set(Self.results(observer).filter { $0.status == .learned }.compactMap(\.room)) == ["kitchen", "office"]
        }
        let states = observer.seen.elements.filter { $0.topic == Topics().aggregatorLearnState }
            .compactMap { try? WireFormat.decode(LearnState.self, from: $0.payload) }
        #expect(states.contains { Set($0.active.map(\.room)) == ["kitchen", "office"] })

        // The retained state, as Home Assistant or a dashboard opened later reads it.
        let late = try await Observer(port: broker.port, filters: [Topics().aggregatorLearnState])
        try await late.waitFor("both rooms in the retained learn state") { _ in
            guard let text = late.last(Topics().aggregatorLearnState),
                  let state = try? WireFormat.decode(LearnState.self, from: Array(text.utf8)) else { return false }
            return state.rooms.map(\.name) == ["kitchen", "office"] && state.active.isEmpty
        }
        await late.stop()
        let shown = try await Self.cli(["--show"], config: "\(dir)/floor0.json", in: dir, name: "show")
        #expect(shown.code == 0 && shown.stdout.contains("kitchen: ") && shown.stdout.contains("office: "), "\(shown)")
        // `aggregator learn` with the ground floor's config teaches a room upstairs: the
        // partition that has it answers.
        let upstairsRoom = try await Self.cli(["--room", "office", "--beacon", Home.cat.rawValue, "--seconds", "5"],
                                              config: "\(dir)/floor0.json", in: dir, name: "teach-upstairs")
        #expect(upstairsRoom.code == 0 && upstairsRoom.stdout.hasPrefix("office: "), "\(upstairsRoom)")
        // Cancelling a label that runs nowhere: no partition answers, and the command says why.
        let cancel = try await Self.cli(["--cancel", "--beacon", Home.dog.rawValue], config: "\(dir)/floor0.json", in: dir, name: "cancel")
        #expect(cancel.code == 1 && cancel.stderr.contains("none runs a label for \(Home.dog.rawValue)"), "\(cancel)")

        await observer.stop()
        await feeder.stop()
        await broker.stop()
    }

    /// Where beacons leave from outlives a graceful restart of the real binary: the state file
    /// holds every departure counted, and the restarted aggregator lets the next beacon silent
    /// in that room go within seconds, not after the away timeout.
    @Test func departureCountsSurviveAGracefulRestart() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let (config, stateFile) = try Self.writeConfig(port: broker.port, in: dir, awayTimeout: 15)
        let observer = try await Observer(port: broker.port)
        let feeder = try await ReadingFeeder(port: broker.port)
        /// The cat heard in the kitchen until decided there, and a few seconds more (a beacon is let
        /// go early only once its cadence is known), then silent: seconds until shown away.
        func visitAndLeave() async throws -> Double {
            feeder.set(Home.cat, node: "kitchen-pi", rssi: -60)
            feeder.set(Home.cat, node: "office-pi", rssi: -76)
            try await observer.waitForRoom(Home.cat, "kitchen", timeout: .seconds(20))
            try await Task.sleep(for: .seconds(3))
            feeder.set(Home.cat, node: "kitchen-pi", rssi: nil)
            feeder.set(Home.cat, node: "office-pi", rssi: nil)
            let silent = ContinuousClock.now
            let away = try await observer.waitForRoom(Home.cat, nil, timeout: .seconds(30))
            return Double((away - silent).components.seconds)
        }
        let first = try LiveRig.startAggregator(configPath: config, instance: "a", in: dir)
        defer { first.send(SIGKILL) }
        // The first to leave waits out the 15-s timeout; the kitchen is an entrance from then on.
        #expect(try await visitAndLeave() >= 14)
        #expect(try await visitAndLeave() < 10)
        first.send(SIGTERM)
        #expect(try await withTimeout(.seconds(10), "aggregator to exit") { await first.waitForExit() } == 0)
        // The second departure came within the save interval of the first: written at the stop.
        #expect(try LearnedRoomsStore(path: stateFile).load()?.departures == [.init(room: "kitchen", left: 2, returned: 0)])
        let fromFile = try await Self.cli(["--show", "--file", stateFile], config: config, in: dir, name: "show-departures")
        #expect(fromFile.stdout.contains("kitchen  2 left, 0 back  (beacons leave from here)"), "\(fromFile)")

        let restarted = try LiveRig.startAggregator(configPath: config, instance: "a2", in: dir)
        defer { restarted.send(SIGKILL) }
        #expect(try await visitAndLeave() < 10)
        restarted.send(SIGTERM)
        _ = await restarted.waitForExit()
        await observer.stop()
        await feeder.stop()
        await broker.stop()
    }
}
