import Foundation
import RoomcastFusion
import Shared
import Testing
@testable import RoomcastAggregator

/// The learn topic's commands: what they say, and a clear refusal for anything else.
@Suite struct LearnCommandTests {
    let tag = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-1")!

    func decode(_ text: String) -> Result<LearnCommand, LearnCommandError> { LearnCommand.decode(Array(text.utf8)) }

    @Test func theThreeCommands() {
        let id = tag.rawValue
        #expect(decode("{\"room\":\"kitchen\",\"beacon\":\"\(id)\",\"seconds\":45}") == .success(.init(.label(room: "kitchen", beacon: tag, seconds: 45))))
        #expect(decode("{\"room\":\"kitchen\",\"beacon\":\"\(id)\",\"v\":1,\"request\":\"abc\"}")
                == .success(.init(.label(room: "kitchen", beacon: tag, seconds: 30), request: "abc")))
        #expect(decode("{\"action\":\"cancel\",\"beacon\":\"\(id)\"}") == .success(.init(.cancel(beacon: tag))))
        #expect(decode("{\"action\":\"forget\",\"room\":\"kitchen\"}") == .success(.init(.forget(room: "kitchen"))))
    }

    @Test func aCommandEncodesToWhatItDecodesFrom() {
        for command in [LearnCommand(.label(room: "kitchen", beacon: tag, seconds: 12.5), request: "r1"),
                        LearnCommand(.cancel(beacon: tag)), LearnCommand(.forget(room: "office"), request: "x")] {
            #expect(LearnCommand.decode(command.encoded()) == .success(command))
        }
    }

    @Test(arguments: [
        ("", "not a JSON object"),
        ("[1]", "not a JSON object"),
        ("{\"room\":\"kitchen\"}", "give the beacon"),
        ("{\"beacon\":\"ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-1\"}", "give the room"),
        ("{\"room\":\"kitchen\",\"beacon\":\"nope\"}", "'nope' is not a beacon id"),
        ("{\"room\":\"kit/chen\",\"beacon\":\"ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-1\"}", "room name must not contain '/'"),
        ("{\"room\":\"kitchen\",\"beacon\":\"ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-1\",\"secnds\":60}", "unknown key 'secnds'; did you mean 'seconds'?"),
        ("{\"room\":\"kitchen\",\"beacon\":\"ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-1\",\"seconds\":\"long\"}", "'seconds' must be a number"),
        ("{\"action\":\"forgt\",\"room\":\"kitchen\"}", "did you mean 'forget'?"),
        ("{\"action\":\"forget\",\"room\":\"kitchen\",\"seconds\":3}", "forget takes only the room"),
        ("{\"v\":2,\"room\":\"kitchen\",\"beacon\":\"ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-1\"}", "unsupported version 2"),
    ])
    func aBadCommandIsAClearError(text: String, expected: String) {
        guard case .failure(let error) = decode(text) else { Issue.record("accepted \(text)"); return }
        #expect(error.message.contains(expected), "\(error.message)")
    }

    @Test func aRefusalCarriesTheSendersToken() {
        guard case .failure(let error) = decode("{\"request\":\"t-9\",\"room\":\"kitchen\",\"beacon\":\"bad\"}") else { Issue.record("accepted"); return }
        #expect(error.request == "t-9")
    }

    @Test func oversizedCommandsAreRefusedUnread() {
        let big = "{\"room\":\"" + String(repeating: "k", count: 2000) + "\"}"
        guard case .failure(let error) = decode(big) else { Issue.record("accepted"); return }
        #expect(error.message.contains("at most 1024"))
    }

    /// `learn --show --file`: the taught rooms, then where beacons leave the site from.
    @Test func showPrintsTaughtRoomsAndDepartures() {
        let rooms = [LearnedRooms.Room(name: "kitchen", seconds: 30, nodes: [.init(node: "kitchen-pi", seconds: 30, mean: -3.5, spread: 2.25)])]
        let departures = [LearnedRooms.Departures(room: "hall", left: 4, returned: 1), .init(room: "office", left: 1, returned: 3)]
        #expect(LearnFollower.describe(rooms, active: [], departures: departures) == """
            kitchen: 30.0 s taught
              node        heard s  level dB (vs its 1 m power)
              kitchen-pi     30.0  -3.5 ± 2.2
            Silences that ended in leaving the site / in coming back, per room:
              hall    4 left, 1 back  (beacons leave from here)
              office  1 left, 3 back
            """)
        #expect(LearnFollower.describe([], active: [], departures: departures).hasPrefix("No room taught yet.\nSilences"))
        #expect(LearnFollower.describe([], active: []) == "No room taught yet.")
    }

    /// A retained state too large to publish whole carries its rooms without what each node
    /// heard: `--show` printed "(no node heard it)" under every room, which reads as teaching
    /// that failed, and never said why.
    @Test func showSaysWhenTheBrokersStateLeavesTheNodesOut() {
        var state = LearnState(ts: 10, active: [], learned: LearnedRooms())
        state.rooms = [.init(name: "kitchen", seconds: 30, nodes: [])]
        #expect(!AggregatorCLI.shown(state).contains("too large"))
        state.truncated = true
        #expect(AggregatorCLI.shown(state).contains("leaves out what each node heard") && AggregatorCLI.shown(state).contains("--file"))
    }

    /// The retained learn state is written by whoever the broker lets write it: a running label's
    /// room or nodes holding an escape sequence (one that clears the terminal, retitles it or
    /// writes its clipboard) is shown with `?` for each control character, its lines kept.
    @Test func showWritesNoControlCharacterFromTheBroker() throws {
        let retained = #"{"v":1,"ts":0,"rooms":[],"active":[{"room":"\u001b]0;x\u0007\u001b[2Jkitchen","beacon":"mac:001122334455","#
            + #""started":0,"ends":30,"recorded":3,"nodes":["hall\u001b]52;c;ZXZpbA==\u0007"]}]}"#
        let text = AggregatorCLI.shown(try WireFormat.decode(LearnState.self, from: Array(retained.utf8)))
        #expect(!text.unicodeScalars.contains { $0 != "\n" && ControlCharacters.isControl($0) }, "\(text.debugDescription)")
        #expect(text.contains("?]0;x??[2Jkitchen") && text.contains("\n"), "\(text.debugDescription)")
    }

    /// `learn --show` prints the same from the retained state, whose figures are rounded to
    /// hundredths, as from the state file, which keeps them whole.
    @Test func showPrintsTheSameFromTheRetainedStateAsFromTheFile() {
        let learned = LearnedRooms(rooms: [.init(name: "kitchen", seconds: 4.949, nodes: [.init(node: "kitchen-pi", seconds: 4.949, mean: -1.0499, spread: 0.6499)])])
        let retained = LearnState(ts: 0, active: [], learned: learned)
        let fromFile = LearnFollower.describe(learned.rooms, active: [])
        #expect(fromFile == LearnFollower.describe(retained.rooms, active: retained.active))
        #expect(fromFile.hasPrefix("kitchen: 5.0 s taught"), "\(fromFile)")
    }

    /// `aggregator learn` follows the result and state topics, which anyone on the broker may
    /// publish on: times past an integer's range print as `?` (they trapped the command).
    @Test func forgedTimesDoNotCrashTheFollower() throws {
        let command = LearnCommand(.label(room: "kitchen", beacon: cat, seconds: 30), request: "cli-1")
        var follower = LearnFollower(request: command, now: 0)
        let topics = Topics()
        let started = LearnResult(ts: 1, status: .started, request: command.request, room: "kitchen", beacon: cat,
                                  started: -1e300, ends: 1e300)
        let first = follower.take(topic: topics.aggregatorLearnResult, payload: try WireFormat.encode(started), topics: topics, now: 1)
        #expect(first.lines.first?.contains("for ? s") == true, "\(first.lines)")
        // Nor does it keep the command waiting for ever: at most a label's longest, and the answer's wait.
        #expect(follower.deadline == 1 + FusionEngine.labelSeconds.upperBound + LearnFollower.answerTimeout, "\(follower.deadline)")
        #expect(LearnFollower.whole(29.6) == "30" && LearnFollower.whole(.nan) == "?" && LearnFollower.whole(-1e300) == "?")
    }

    /// The command waits on its own monotonic clock (a wall clock set back while it waits must not
    /// keep it waiting that long): the aggregator's times, on its wall clock, count only by
    /// their difference.
    @Test func theWaitIsTimedOnTheCommandsOwnClock() throws {
        let command = LearnCommand(.label(room: "kitchen", beacon: cat, seconds: 30), request: "cli-1")
        var follower = LearnFollower(request: command, now: 50)
        #expect(follower.deadline == 50 + LearnFollower.answerTimeout)
        let topics = Topics()
        let started = LearnResult(ts: 1_700_000_000, status: .started, request: command.request, room: "kitchen", beacon: cat,
                                  started: 1_700_000_000, ends: 1_700_000_030)
        let lines = follower.take(topic: topics.aggregatorLearnResult, payload: try WireFormat.encode(started), topics: topics, now: 51).lines
        #expect(lines.first?.contains("for 30 s") == true, "\(lines)")
        #expect(follower.deadline == 51 + 30 + LearnFollower.answerTimeout)
        let a = LearnFollower.clock(), b = LearnFollower.clock()
        #expect(b >= a && a < 1e9, "monotonic seconds since boot, not the wall clock: \(a)")
    }
}
