import Foundation
import Shared
import RoomcastFusion
import Testing
import TestSupport
@testable import RoomcastAggregator

/// What `aggregator replay` makes of its input files: every readable line is replayed whatever
/// the line ends, and every line that cannot be read is counted and named.
@Suite struct ReplayInputTests {
    static func lines(_ count: Int) throws -> [String] {
        try (0..<count).map { k in
            MessageLogLine(ts: 100 + Double(k), topic: Topics().nodeBeacon("kitchen-pi", cat),
                           payload: try WireFormat.encode(reading("kitchen-pi", rssi: -55, ts: 100 + Double(k), seq: UInt64(k + 1))))
                .encoded()
        }
    }

    static func write(_ bytes: [UInt8]) throws -> String {
        let path = try LiveRig.workDirectory() + "/input.jsonl"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A line stamped before its Pi's clock was set (1970) starts the replay's clock decades
    /// early: the gap is named, with the lines on either side, so the user sees why every
    /// listed beacon went away at the start.
    @Test func aGapOfMoreThanADayBetweenLinesIsNamed() throws {
        let good = try Self.lines(3)  // at ts 100, 101, 102
        let later = MessageLogLine(ts: 200_102, topic: Topics().nodeStatus("kitchen-pi"), payload: Array("online".utf8)).encoded()
        var report = ReplayRunner.Report()
        let read = ReplayRunner.mergedInputs(logs: [(name: "hall.jsonl", text: (good + [later]).joined(separator: "\n"))], report: &report)
        #expect(read.count == 4)
        #expect(report.longGaps == ["hall.jsonl:3 (ts 102.0) is 200000 s before the next line, hall.jsonl:4"], "\(report.longGaps)")
        var clean = ReplayRunner.Report()
        _ = ReplayRunner.mergedInputs(logs: [(name: "hall.jsonl", text: good.joined(separator: "\n"))], report: &clean)
        #expect(clean.longGaps.isEmpty)
        // Two finite times as far apart as a double goes: named, not a trap.
        var far = ReplayRunner.Report()
        _ = ReplayRunner.mergedInputs(logs: [(name: "far.jsonl", text: #"{"ts":-1e300,"topic":"a"}"# + "\n" + #"{"ts":1e300,"topic":"a"}"#)],
                                      report: &far)
        #expect(far.longGaps == ["far.jsonl:1 (ts -1e+300) is 2e+300 s before the next line, far.jsonl:2"], "\(far.longGaps)")
    }

    /// Windows line ends and a byte-order mark, as a Windows editor saves a file.
    @Test func windowsLineEndsReadAsTheSameLines() throws {
        let good = try Self.lines(5)
        var unix = ReplayRunner.Report(), windows = ReplayRunner.Report()
        let expected = try ReplayRunner.mergedInputs(paths: [Self.write(Array(good.joined(separator: "\n").utf8))], report: &unix)
        let read = try ReplayRunner.mergedInputs(paths: [Self.write([0xEF, 0xBB, 0xBF] + Array((good.joined(separator: "\r\n") + "\r\n").utf8))],
                                                 report: &windows)
        #expect(read.count == 5 && read == expected)
        #expect(windows.badLineCount == 0 && windows.linesRead == 5)
    }

    /// A line that is not UTF-8 is one bad line, named; the lines around it are read.
    @Test func aLineThatIsNotUTF8IsSkippedAlone() throws {
        let good = try Self.lines(3)
        var bytes = Array((good[0] + "\n").utf8) + Array(#"{"ts":101,"topic":"roomcast/"#.utf8) + [0xFF, 0xFE]
        bytes += Array(#"","payload":""}"#.utf8) + [0x0A] + Array((good[1] + "\n" + good[2] + "\n").utf8)
        var report = ReplayRunner.Report()
        let path = try Self.write(bytes)
        let read = try ReplayRunner.mergedInputs(paths: [path], report: &report)
        #expect(read.count == 3)
        #expect(report.badLineCount == 1 && report.badLines == ["\(path):2: not UTF-8"])
    }

    /// Every bad line is counted, though only the first hundred are described.
    @Test func everyBadLineIsCounted() throws {
        let text = (try Self.lines(1) + Array(repeating: "not json", count: 150)).joined(separator: "\n")
        var report = ReplayRunner.Report()
        _ = ReplayRunner.mergedInputs(logs: [(name: "log", text: text)], report: &report)
        #expect(report.badLineCount == 150 && report.badLines.count == ReplayRunner.Report.maximumBadLinesKept)
        #expect(report.badLines.first == "log:2: invalid payload: not a JSON object")
    }

    /// A replay takes each line as the live aggregator takes the message, by its retain flag: a
    /// retained learn command is refused, presence that is not retained after the resume window
    /// resumes nothing, and a listed beacon never heard is published away once the nodes have
    /// listened for the away timeout.
    @Test func aReplayTakesEachLineAsTheLiveAggregatorWould() throws {
        let topics = Topics()
        let keys = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-46")!
        var listed = site
        listed.beacons.append(.init(id: keys, name: "Keys"))
        func replay(retainedLearn: Bool, livePresenceAt: Double) throws -> (lines: [MessageLogLine], report: ReplayRunner.Report) {
            var inputs = try (0..<120).map { k -> MessageLogLine in
                let t = 100 + 0.5 * Double(k)
                return MessageLogLine(ts: t, topic: topics.nodeBeacon("kitchen-pi", cat),
                                      payload: try WireFormat.encode(reading("kitchen-pi", rssi: -55, ts: t, seq: UInt64(k + 1))))
            }
            // The office's Pi listens too: the never heard wait for every listed node.
            inputs.append(MessageLogLine(ts: 100, topic: topics.nodeHeartbeat("office-pi"), payload: try WireFormat.encode(NodeHeartbeat(ts: 100))))
            let learn = LearnCommand(.label(room: "kitchen", beacon: cat, seconds: 5))
            inputs.append(MessageLogLine(ts: 110, topic: topics.aggregatorLearn, payload: learn.encoded(), retain: retainedLearn))
            let elsewhere = PresenceDecision(id: keys, name: "Keys", room: "office", floor: 1, distance: 1, confidence: 0.9,
                                             node: "office-pi", since: 1, lastSeen: 1, evidence: [], ts: livePresenceAt)
            inputs.append(MessageLogLine(ts: livePresenceAt, topic: topics.presence(keys), payload: try WireFormat.encode(elsewhere)))
            inputs.sort { $0.ts < $1.ts }
            var core = AggregatorConfig(site: listed, discovery: .init(enabled: false)).makeCore()
            var report = ReplayRunner.Report(), lines: [MessageLogLine] = []
            try ReplayRunner.run(core: &core, inputs: inputs, report: &report) { lines.append($0) }
            return (lines, report)
        }
        func keysPresence(_ lines: [MessageLogLine]) -> [(ts: Double, text: String)] {
            lines.filter { $0.topic == topics.presence(keys) }.map { ($0.ts, String(decoding: $0.payload, as: UTF8.self)) }
        }

        let live = try replay(retainedLearn: true, livePresenceAt: 150)
        #expect(live.report.retainedLearnRefused == 1 && !live.lines.contains { $0.topic == topics.aggregatorLearnResult })
        let keysLines = keysPresence(live.lines)
        #expect(!keysLines.contains { $0.text.contains(#""room":"office""#) }, "live presence resumed nothing")
        let away = try #require(keysLines.first, "the keys, never heard, were never published away")
        #expect(away.ts == 130 && away.text.contains(#""reason":"never_heard""#), "\(away)")

        let taught = try replay(retainedLearn: false, livePresenceAt: 101)
        #expect(taught.report.retainedLearnRefused == 0 && taught.lines.contains { $0.topic == topics.aggregatorLearnResult })
        // Within the resume window, presence is a peer's state to resume from: the keys are not never heard.
        #expect(!keysPresence(taught.lines).contains { $0.text.contains("never_heard") })
    }

    /// Through the binary: the count goes to the log, and a file with no readable line at all
    /// (the wrong file) is bad data, not a run where nothing happened.
    @Test func theBinaryCountsBadLinesAndRefusesAFileWithNoneReadable() async throws {
        let mixed = try Self.write(Array(((try Self.lines(3)) + Array(repeating: "{\"ts\":", count: 120)).joined(separator: "\n").utf8))
        let garbage = try Self.write(Array(String(repeating: "PK\u{3}\u{4} binary\n", count: 10).utf8))
        func replay(_ input: String) async throws -> (Int32, String) {
            let dir = (input as NSString).deletingLastPathComponent
            let child = try ChildProcess(try LiveRig.executable("aggregator"), ["replay", input],
                                         stdoutPath: "\(dir)/out", stderrPath: "\(dir)/err")
            let status = try await withTimeout(.seconds(60), "aggregator replay to exit") { await child.waitForExit() }
            return (status, child.stderr)
        }
        let (mixedStatus, mixedLog) = try await replay(mixed)
        #expect(mixedStatus == 0 && mixedLog.contains("bad_lines=120"), "\(mixedLog.suffix(600))")
        let (garbageStatus, garbageLog) = try await replay(garbage)
        #expect(garbageStatus == 65, "\(garbageLog.suffix(600))")
        #expect(garbageLog.contains("no line of the input could be read (10 bad of 10)") && garbageLog.contains("input.jsonl:1:"))
        let (emptyStatus, emptyLog) = try await replay(try Self.write(Array("\n\n".utf8)))
        #expect(emptyStatus == 65 && emptyLog.contains("no line of the input could be read (0 bad of 0)"), "\(emptyLog.suffix(600))")
    }

    /// A production config names the state file the live aggregator starts from; a replay of it
    /// without `--learned` does not read it, and says so with the option that would.
    @Test func aReplayWithoutTheStateFileTheConfigNamesSaysSo() async throws {
        let input = try Self.write(Array(try Self.lines(3).joined(separator: "\n").utf8))
        let dir = (input as NSString).deletingLastPathComponent
        let state = "\(dir)/learned rooms.json"
        try LearnedRoomsStore(path: state).save(LearnedRooms())
        try Data("learn: {state_file: \"\(state)\"}\ndiscovery: {enabled: false}\n".utf8).write(to: URL(fileURLWithPath: "\(dir)/site.yaml"))
        func replay(_ extra: [String]) async throws -> (Int32, String) {
            let child = try ChildProcess(try LiveRig.executable("aggregator"), ["replay", "-c", "\(dir)/site.yaml"] + extra + [input],
                                         stdoutPath: "\(dir)/out\(extra.count)", stderrPath: "\(dir)/err\(extra.count)")
            let status = try await withTimeout(.seconds(60), "aggregator replay to exit") { await child.waitForExit() }
            return (status, child.stderr)
        }
        let (status, log) = try await replay([])
        #expect(status == 0 && log.contains("replay starts from no learned rooms") && log.contains("--learned '\(state)'"), "\(log.suffix(600))")
        let (given, quiet) = try await replay(["--learned", state])
        #expect(given == 0 && !quiet.contains("replay starts from no learned rooms"), "\(quiet.suffix(600))")
    }
}

/// A recording whose nodes send heartbeats, with two minutes of nothing at all in it. When the
/// recorder lost its broker connection (it gets the retained messages again when it connects
/// anew), the gap was the aggregator's own deafness live, and replayed it is too: the cat stays in
/// the kitchen, never `nodes_offline`. When the nodes went quiet (a Wi-Fi outage: nothing
/// retained after it), the replay holds the cat `nodes_offline`, as live.
@Suite struct ReplayDeafGapTests {
    static func recording(gap: ClosedRange<Double>?, reconnect: Bool = true) throws -> [MessageLogLine] {
        var lines: [MessageLogLine] = []
        var seq: UInt64 = 0
        var afterGap = false
        for t in stride(from: 100.0, to: 340, by: 0.5) {
            if let gap, gap.contains(t) { afterGap = true; continue }
            if afterGap && reconnect {
                for node in ["kitchen-pi", "office-pi"] {
                    lines.append(MessageLogLine(ts: t, topic: Topics().nodeStatus(node), payload: Array("online".utf8), retain: true))
                }
            }
            afterGap = false
            seq += 1
            for node in ["kitchen-pi", "office-pi"] {
                lines.append(MessageLogLine(ts: t, topic: Topics().nodeBeacon(node, cat),
                                            payload: try WireFormat.encode(reading(node, rssi: node == "kitchen-pi" ? -55 : -75, ts: t, seq: seq))))
                if t.truncatingRemainder(dividingBy: 1) == 0 {
                    lines.append(MessageLogLine(ts: t, topic: Topics().nodeHeartbeat(node), payload: try WireFormat.encode(NodeHeartbeat(ts: t))))
                }
            }
        }
        return lines
    }

    static func replay(_ lines: [MessageLogLine]) throws -> (presence: [PresenceDecision], report: ReplayRunner.Report) {
        var core = AggregatorConfig(site: site).makeCore()
        var report = ReplayRunner.Report()
        var presence: [PresenceDecision] = []
        try ReplayRunner.run(core: &core, inputs: lines, report: &report) { line in
            if line.topic == Topics().presence(cat), let d = try? WireFormat.decode(PresenceDecision.self, from: line.payload) { presence.append(d) }
        }
        return (presence, report)
    }

    @Test func aGapInARecordingWithHeartbeatsIsTheRecordersDeafness() throws {
        let (presence, report) = try Self.replay(try Self.recording(gap: 160...280))
        #expect(presence.first?.room == "kitchen")
        #expect(presence.allSatisfy { $0.room == "kitchen" && $0.reason != "nodes_offline" },
                "\(presence.map { ($0.ts, $0.room ?? "away", $0.reason ?? "") })")
        #expect(report.deafGapCount == 1 && report.deafGaps == ["159.5 for 121 s"], "\(report.deafGaps)")
        // A recording without the gap says nothing of deafness.
        #expect(try Self.replay(try Self.recording(gap: nil)).report.deafGapCount == 0)
        // A log's times are anyone's: a gap past Int's range is reported, not a crash.
        let far = [MessageLogLine(ts: 0, topic: Topics().nodeHeartbeat("kitchen-pi"), payload: try WireFormat.encode(NodeHeartbeat(ts: 0))),
                   MessageLogLine(ts: 1e300, topic: Topics().nodeStatus("kitchen-pi"), payload: Array("online".utf8), retain: true)]
        #expect(try Self.replay(far).report.deafGaps == ["0.0 for 1e+300 s"])
    }

    @Test func aGapWithoutAReconnectIsTheNodesGoingQuiet() throws {
        let (presence, report) = try Self.replay(try Self.recording(gap: 160...280, reconnect: false))
        #expect(report.deafGapCount == 0)
        #expect(presence.contains { $0.room == "kitchen" && $0.reason == "nodes_offline" },
                "\(presence.map { ($0.ts, $0.room ?? "away", $0.reason ?? "") })")
        #expect(!presence.contains { $0.room == nil })
        #expect(presence.last?.room == "kitchen")
    }
}

/// A recording that starts a minute before any node is heard (the aggregator's broker came up
/// before the Pis): the listed beacon never heard is published away only once the nodes have
/// listened for the away timeout, as live.
@Suite struct ReplayNeverHeardTests {
    @Test func neverHeardWaitsForTheFirstNodeHeard() throws {
        let dog = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-46")!
        var listed = site
        listed.beacons.append(.init(id: dog, name: "Dog"))
        var core = AggregatorConfig(site: listed).makeCore()
        var lines = [MessageLogLine(ts: 100, topic: Topics().nodeStatus("kitchen-pi"), payload: Array("online".utf8), retain: true)]
        var seq: UInt64 = 0
        for t in stride(from: 160.0, to: 260, by: 0.5) {
            seq += 1
            lines.append(MessageLogLine(ts: t, topic: Topics().nodeBeacon("kitchen-pi", cat),
                                        payload: try WireFormat.encode(reading("kitchen-pi", rssi: -55, ts: t, seq: seq))))
        }
        // The office's Pi comes up with the kitchen's: the never heard wait for every listed node.
        lines.append(MessageLogLine(ts: 160, topic: Topics().nodeHeartbeat("office-pi"), payload: try WireFormat.encode(NodeHeartbeat(ts: 160))))
        lines.sort { $0.ts < $1.ts }
        var report = ReplayRunner.Report()
        var dogs: [(ts: Double, decision: PresenceDecision)] = []
        try ReplayRunner.run(core: &core, inputs: lines, report: &report) { line in
            if line.topic == Topics().presence(dog), let d = try? WireFormat.decode(PresenceDecision.self, from: line.payload) {
                dogs.append((line.ts, d))
            }
        }
        let first = try #require(dogs.first, "the dog was never published away")
        #expect(first.ts >= 190 && first.ts < 195, "away at \(first.ts)")
        #expect(first.decision.room == nil && first.decision.reason == "never_heard")
    }
}
