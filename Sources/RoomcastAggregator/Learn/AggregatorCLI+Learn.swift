import Foundation
import Synchronization
import RoomcastFusion
import RoomcastMQTT
import Shared
import RoomcastCLI
import RoomcastLifecycle
import RoomcastLogging

extension AggregatorCLI {
    /// `aggregator learn`'s own options.
    enum LearnOptions {
        static let room = Option<String?>("room", value: "name", help: "The room the beacon is carried in.")
        static let beacon = Option<String?>("beacon", value: "id", help: "The beacon carried (its id, as in beacons:).")
        static let seconds = Option<Double>("seconds", value: "s", help: "How long to learn, 5–600.", default: LearnCommand.defaultSeconds)
        static let cancel = Flag("cancel", help: "Stop the label running for --beacon; learn nothing from it.")
        static let forget = Option<String?>("forget", value: "room", help: "Forget what was learned for this room.")
        static let show = Flag("show", help: "Print what was learned (the aggregator's retained learn state).")
        static let file = Option<String?>("file", value: "file", help: "With --show: read this state file instead of the broker; it also lists the rooms beacons leave from.")
    }

    /// `aggregator learn`: sends a learn command to the running aggregator over the broker and
    /// follows it to its result (`--room`/`--beacon`, `--cancel`, `--forget`), or prints what
    /// was learned (`--show`, from the retained learn state or a state file). Progress goes to
    /// stderr, the result to stdout.
    static func learn(_ command: ParsedCommand, config: AggregatorConfig, logger: Logger) async -> ExitCode {
        let request: LearnCommand
        do {
            let modes = [command[LearnOptions.room] != nil, command[LearnOptions.show], command[LearnOptions.forget] != nil,
                         command[LearnOptions.cancel]]
            guard modes.filter({ $0 }).count == 1 else {
                throw command.usageError("give one of --room (with --beacon), --cancel (with --beacon), --forget ROOM or --show")
            }
            if command[LearnOptions.file] != nil && !command[LearnOptions.show] { throw command.usageError("--file goes with --show") }
            if command[LearnOptions.show] {
                if let file = command[LearnOptions.file] { return showLearned(file: file) }
                return await showLearned(config: config, logger: logger)
            }
            let token = String(UInt64.random(in: 0...UInt64.max), radix: 36)
            func beacon() throws(UsageError) -> BeaconID {
                guard let text = command[LearnOptions.beacon] else { throw command.usageError("name the beacon with --beacon") }
                guard let id = BeaconID(text) else { throw command.usageError("'\(text)' is not a beacon id (e.g. ibeacon:<uuid>-<major>-<minor>)") }
                return id
            }
            if let room = command[LearnOptions.forget] {
                request = LearnCommand(.forget(room: room), request: token)
            } else if command[LearnOptions.cancel] {
                request = LearnCommand(.cancel(beacon: try beacon()), request: token)
            } else {
                let room = command[LearnOptions.room] ?? ""
                // Every room of the site: a partition's config teaches the others' rooms too
                // (every partition hears the command; the one that has the room answers).
                let rooms = config.site.rooms.map(\.name)
                if !rooms.isEmpty && !rooms.contains(room) {
                    var message = "unknown room '\(room)'"
                    if let guess = Suggestion.closest(to: room, in: rooms) { message += "; did you mean '\(guess)'?" }
                    else { message += "; the rooms are \(rooms.joined(separator: ", "))" }
                    throw command.usageError(message)
                }
                let seconds = try command[LearnOptions.seconds]
                let range = FusionEngine.labelSeconds
                guard range.contains(seconds) else {
                    throw command.usageError("--seconds must be \(Int(range.lowerBound))…\(Int(range.upperBound))")
                }
                request = LearnCommand(.label(room: room, beacon: try beacon(), seconds: seconds), request: token)
            }
        } catch {
            return fail("\(error)", .usage)
        }
        return await send(request, config: config, logger: logger)
    }

    /// Publishes `request` and waits for its result.
    private static func send(_ request: LearnCommand, config: AggregatorConfig, logger: Logger) async -> ExitCode {
        let topics = config.mqtt.topics
        guard let client = listeningClient(config, command: "learn", logger: logger, quietest: .error) else { return .config }
        client.start()
        do {
            try await client.waitUntilConnected(timeout: .seconds(10))
            try await client.subscribe(topics.aggregatorLearnResult)
            try await client.subscribe(topics.aggregatorLearnState)
            try client.publish(MQTTMessage(topic: topics.aggregatorLearn, payload: request.encoded(), qos: .atLeastOnce, retain: false))
        } catch {
            await client.shutdown()
            return fail("cannot reach the broker at \(config.mqtt.broker.redacted): \(error)", .failure)
        }
        let follower = LockedLearnFollower(LearnFollower(request: request))
        let lifecycle = ServiceLifecycle(logger: Logger(label: "aggregator", level: .warning))
        lifecycle.onShutdown("cancel the label") {
            let (pending, unanswered) = follower.state.withLock { ($0.outcome == nil, $0.deadlinePassed) }
            // Ctrl-C during a label stops it on the aggregator too: nothing half-taught is learned.
            var cancelSent = false
            if case .label(_, let beacon, _) = request.action, pending {
                let cancel = MQTTMessage(topic: topics.aggregatorLearn, payload: LearnCommand(.cancel(beacon: beacon), request: request.request).encoded(),
                                         qos: .atLeastOnce, retain: false)
                if (try? client.publish(cancel)) != nil { cancelSent = await client.flush(timeout: .seconds(2)) }
            }
            // Stopped by the user (the answer's reader is gone): a clean stop, not a missing aggregator.
            if pending, !unanswered {
                let what = switch (request.action, cancelSent) {
                case (.label, true): "the label is cancelled on the aggregator, and nothing is learned from it"
                case (.label, false): "the cancel could not be sent, so the label runs on to its end on the aggregator"
                default: "the command was sent; `aggregator learn --show` says what became of it"
                }
                follower.state.withLock { $0.outcome = ("Stopped: \(what).", .success) }
            }
            await client.shutdown()
        }
        let code = await lifecycle.run {
            let reader = Task {
                for await m in client.messages {
                    let (lines, done) = follower.state.withLock { $0.take(topic: m.topic, payload: m.payload, topics: topics, now: LearnFollower.clock()) }
                    // The aggregator's answers quote what the command held, and anyone who may
                    // publish there may answer: no escape sequence reaches the terminal.
                    for line in lines { StandardStream.error.write(ControlCharacters.replacedInLines(of: line) + "\n") }
                    if done { lifecycle.requestShutdown(); return }
                }
            }
            // The aggregator answers a command at once and a label when its time is up; silence
            // past the deadline means no aggregator is listening (or the ACL drops the command).
            while !lifecycle.isShuttingDown {
                let deadline = follower.state.withLock { $0.deadline }
                let now = LearnFollower.clock()
                if now >= deadline {
                    follower.state.withLock { $0.deadlinePassed = true }
                    break
                }
                try? await Task.sleep(for: .seconds(min(0.25, deadline - now)))
            }
            reader.cancel()
        }
        await client.shutdown()
        guard let outcome = follower.state.withLock({ $0.outcome }) else {
            if code != .success { return code }
            // A partition answers a cancel only for a label it runs (another may run it).
            if case .cancel(let beacon) = request.action, config.partitionName != nil {
                return fail("no partition answered on \(topics.aggregatorLearnResult): none runs a label for \(beacon), "
                            + "or no aggregator is running", .failure)
            }
            return fail("no answer from the aggregator on \(topics.aggregatorLearnResult): is it running, and may this account publish \(topics.aggregatorLearn)?", .failure)
        }
        StandardStream.output.write(ControlCharacters.replacedInLines(of: outcome.report) + "\n")
        return outcome.code
    }

    /// `--show --file FILE`: the learned rooms in a state file.
    private static func showLearned(file: String) -> ExitCode {
        do {
            guard let learned = try LearnedRoomsStore(path: file).load() else { return fail("\(file): no such file", .dataError) }
            StandardStream.output.write(LearnFollower.describe(learned.rooms, active: [], departures: learned.departures) + "\n")
            return .success
        } catch {
            return fail("\(error)", .dataError)
        }
    }

    /// `--show`: the retained learn state the aggregator publishes.
    private static func showLearned(config: AggregatorConfig, logger: Logger) async -> ExitCode {
        let topics = config.mqtt.topics
        guard let client = listeningClient(config, command: "learn", logger: logger, quietest: .error) else { return .config }
        client.start()
        do {
            try await client.waitUntilConnected(timeout: .seconds(10))
            try await client.subscribe(topics.aggregatorLearnState)
        } catch {
            await client.shutdown()
            return fail("cannot reach the broker at \(config.mqtt.broker.redacted): \(error)", .failure)
        }
        // A retained message comes with the subscription's acknowledgement or not at all; a
        // second is plenty on any broker.
        // A state that does not decode (a newer aggregator's) is said, not taken for none.
        let read = await withTaskGroup(of: Result<LearnState, WireFormatError>?.self) { group in
            group.addTask {
                for await m in client.messages where m.topic == topics.aggregatorLearnState && !m.payload.isEmpty {
                    do throws(WireFormatError) { return .success(try WireFormat.decode(LearnState.self, from: m.payload)) }
                    catch { return .failure(error) }
                }
                return nil
            }
            group.addTask { try? await Task.sleep(for: .seconds(2)); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        await client.shutdown()
        let state: LearnState?
        switch read {
        case .success(let s)?: state = s
        case .failure(let error)?:
            return fail(ControlCharacters.replaced(in: "the learn state on \(topics.aggregatorLearnState) cannot be read: \(error) (from a newer aggregator?)"),
                        .dataError)
        case nil: state = nil
        }
        guard let state else {
            StandardStream.output.write("Nothing learned: the broker holds no learn state on \(topics.aggregatorLearnState) (teach a room with aggregator learn --room ROOM --beacon ID).\n")
            return .success
        }
        StandardStream.output.write(shown(state) + "\n")
        return .success
    }

    /// What `--show` prints of the retained learn state. One too large to publish whole went out
    /// without what each node heard: without a word, every room read as heard by no node. A
    /// running label's room and nodes are as the retained state has them, which any client the
    /// broker lets write it may have set: no control character reaches the terminal.
    static func shown(_ state: LearnState) -> String {
        var text = LearnFollower.describe(state.rooms, active: state.active)
        if state.truncated == true {
            text += "\nThe state on the broker leaves out what each node heard (it is too large to publish whole);"
                + " read the state file for it: aggregator learn --show --file PATH\n"
        }
        return ControlCharacters.replacedInLines(of: text)
    }
}
