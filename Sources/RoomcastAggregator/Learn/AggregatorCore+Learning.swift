import RoomcastFusion
import Shared

/// Learn commands in the core: they start, cancel and forget labels in a trainable engine
/// (`TrainableEstimator`), and every change is published: the retained learn state and one
/// result event per command outcome. An engine that cannot be taught refuses every command.
extension AggregatorCore {
    /// The engine's learned rooms (empty when it cannot be taught).
    public var learnedRooms: LearnedRooms { (engine as? any TrainableEstimator)?.learnedRooms ?? LearnedRooms() }

    /// The labels running.
    public var activeLabels: [ActiveLabel] { (engine as? any TrainableEstimator)?.activeLabels ?? [] }

    /// Moves whenever the learned rooms change: a state file older than this needs writing.
    public var learnedRevision: UInt64 { learning.revision }

    /// Moves whenever the engine's departure counts change (`RoomDepartures`).
    public var departuresRevision: UInt64 { (engine as? any TrainableEstimator)?.departuresRevision ?? 0 }

    /// Refusals not published because too many came at once.
    public var learnRefusalsSuppressed: UInt64 { learning.refusalsSuppressed }

    /// Why the newest learn command was refused, once: the service logs it.
    public mutating func takeLearnRefusal() -> String? {
        defer { learning.unloggedRefusal = nil }
        return learning.unloggedRefusal
    }

    /// Seeds what was learned before (the state file, read at start-up).
    public mutating func restoreLearned(_ learned: LearnedRooms) {
        train { $0.restore(learned) }
    }

    /// What was learned before could not be read (the state file): this run teaches nothing,
    /// says `why` to every learn command, and publishes no learn state. A label taken would be
    /// lost at the next start, and an empty state published over the retained one would hide
    /// what was taught.
    public mutating func learningUnavailable(_ why: String) {
        learning.unavailable = why
    }

    /// Runs `body` on the engine, in place (`withFusionEngine`); nil when it cannot learn.
    @discardableResult
    private mutating func train<T>(_ body: (inout FusionEngine) -> T) -> T? {
        withFusionEngine(body)
    }

    /// What a learn command at `now` publishes.
    mutating func learn(_ command: LearnCommand, now: Double) throws -> [OutboundMessage] {
        guard engine is any TrainableEstimator else {
            return try refuse("this aggregator's estimator cannot learn rooms", request: command.request, now: now)
        }
        // Another partition's command is its own to answer, even here.
        if let why = learning.unavailable, !isOtherPartitions(command.action) {
            return try refuse(why, request: command.request, now: now)
        }
        guard learning.admitCommand(now: now) else {
            return try refuse("more than \(LearnSession.commandsPerWindow) learn commands in \(Int(LearnSession.commandWindow)) s; wait and send it again",
                              request: command.request, now: now)
        }
        let request = command.request
        switch command.action {
        case let .label(room, beacon, seconds) where otherPartitionsRooms.contains(room):
            // Another partition's label for the beacon: one running here for it is replaced, as
            // a newer label in a room of ours would replace it, once it is one that partition can
            // start (it answers a refusal itself).
            guard let replaced = activeLabels.first(where: { $0.beacon == beacon }),
                  train({ $0.labelProblem(beacon: beacon, seconds: seconds, now: now) }) == .some(nil) else { return [] }
            train { $0.cancelLabel(beacon: beacon) }
            let original = learning.requests.removeValue(forKey: beacon) ?? nil
            return [try LearnResult(ts: now, status: .replaced, request: original, room: replaced.room, beacon: beacon,
                                    started: replaced.started, ends: now, recorded: LearnState.rounded(replaced.recorded),
                                    error: "a newer label for the same beacon replaced it").message(topics: topics),
                    try learnState(now: now)]
        case let .forget(room) where otherPartitionsRooms.contains(room):
            return []
        case let .cancel(beacon) where isPartition && !activeLabels.contains(where: { $0.beacon == beacon }):
            // The label may run in another partition, which answers.
            return []
        case let .label(room, beacon, seconds):
            let replaced = activeLabels.first { $0.beacon == beacon }
            let begun = train { t -> LabelError? in
                do throws(LabelError) { try t.beginLabel(room: room, beacon: beacon, seconds: seconds, now: now); return nil } catch { return error }
            } ?? nil
            if let begun { return try refuse(begun.description, request: request, room: room, beacon: beacon, now: now) }
            var out: [OutboundMessage] = []
            if let replaced {
                out.append(try LearnResult(ts: now, status: .replaced, request: learning.requests[beacon] ?? nil, room: replaced.room,
                                           beacon: beacon, started: replaced.started, ends: now, recorded: LearnState.rounded(replaced.recorded),
                                           error: "a newer label for the same beacon replaced it").message(topics: topics))
            }
            learning.requests[beacon] = .some(request)
            let label = activeLabels.first { $0.beacon == beacon }
            out.append(try LearnResult(ts: now, status: .started, request: request, room: room, beacon: beacon,
                                       started: label?.started, ends: label?.ends).message(topics: topics))
            out.append(try learnState(now: now))
            return out
        case let .cancel(beacon):
            guard let label = activeLabels.first(where: { $0.beacon == beacon }) else {
                return try refuse("no label is running for '\(beacon)'", request: request, beacon: beacon, now: now)
            }
            train { $0.cancelLabel(beacon: beacon) }
            let original = learning.requests.removeValue(forKey: beacon) ?? nil
            var out = [try LearnResult(ts: now, status: .cancelled, request: request, room: label.room, beacon: beacon,
                                       started: label.started, ends: now, recorded: LearnState.rounded(label.recorded)).message(topics: topics)]
            if let original, original != request {
                // The sender of the label hears of it too.
                out.append(try LearnResult(ts: now, status: .cancelled, request: original, room: label.room, beacon: beacon,
                                           started: label.started, ends: now, recorded: LearnState.rounded(label.recorded)).message(topics: topics))
            }
            out.append(try learnState(now: now))
            return out
        case let .forget(room):
            let learned = learnedRooms
            guard learned.room(named: room) != nil else {
                var message = "nothing is learned for room '\(room)'"
                let names = learned.rooms.map(\.name)
                if let guess = Suggestion.closest(to: room, in: names) { message += "; did you mean '\(guess)'?" }
                else if names.isEmpty { message += "; nothing is learned at all" }
                return try refuse(message, request: request, room: room, now: now)
            }
            train { $0.forgetLearned(room: room) }
            learning.revision &+= 1
            return [try LearnResult(ts: now, status: .forgotten, request: request, room: room).message(topics: topics),
                    try learnState(now: now)]
        }
    }

    /// A command the partitions of other rooms answer: a label or forget in one of their rooms, or
    /// (under `partition:`) the cancel of a label not running here.
    private func isOtherPartitions(_ action: LearnCommand.Action) -> Bool {
        switch action {
        case let .label(room, _, _), let .forget(room): otherPartitionsRooms.contains(room)
        case let .cancel(beacon): isPartition && !activeLabels.contains { $0.beacon == beacon }
        }
    }

    /// A command on the learn topic that did not decode: its refusal.
    mutating func learnRefused(payload: [UInt8], why: InputIntake.RejectionDetail, now: Double) throws -> [OutboundMessage] {
        var request: String?
        if case .failure(let error) = LearnCommand.decode(payload) { request = error.request }
        return try refuse(why.message, request: request, now: now)
    }

    private mutating func refuse(_ message: String, request: String?, room: String? = nil, beacon: BeaconID? = nil,
                                 now: Double) throws -> [OutboundMessage] {
        learning.unloggedRefusal = message
        guard learning.admitRefusal(now: now) else { return [] }
        return [try LearnResult(ts: now, status: .rejected, request: request, room: room, beacon: beacon, error: message).message(topics: topics)]
    }

    /// After a fusion tick while labels run: the result of each label that finished, and
    /// the learn state (the labels' progress, once a tick).
    mutating func labelsTicked(now: Double) throws -> [OutboundMessage] {
        let finished = train { $0.takeFinishedLabels() } ?? []
        var out: [OutboundMessage] = []
        for label in finished {
            let request = learning.requests.removeValue(forKey: label.beacon) ?? nil
            if label.outcome == .learned { learning.revision &+= 1 }
            out.append(try LearnResult(label, ts: now, request: request).message(topics: topics))
        }
        // Labels the engine no longer runs (cancelled by it) need no answer slot.
        let running = Set(activeLabels.map(\.beacon))
        for beacon in learning.requests.keys where !running.contains(beacon) { learning.requests[beacon] = nil }
        out.append(try learnState(now: now))
        return out
    }

    /// This partition's rooms. A room taught before the site lost it (renamed, removed) is no
    /// partition's: none publishes it, where each taking it for its own would have them answer
    /// one another for ever, each dropping it from the other's state.
    var ownRooms: Set<String> { Set(site.rooms.map(\.name)) }

    /// The retained learn state at `now`. Under `partition:` the partitions share its topic:
    /// each publishes its own rooms' part with the others' as last heard there, so Home
    /// Assistant's selects and `aggregator learn --show` see the whole site.
    public mutating func learnState(now: Double) throws -> OutboundMessage {
        var state = LearnState(ts: now, active: activeLabels, learned: learnedRooms)
        if !isPartition { learning.publishedPart = state.part([], inside: false).summary }
        if isPartition {
            let mine = state.part(ownRooms, inside: true)
            learning.publishedPart = mine.summary
            state.active = mine.active
            state.rooms = mine.rooms
            state.add(learning.othersPart)
        }
        return try state.message(topics: topics)
    }

    /// The shared learn state as heard on its topic, under `partition:`: the other partitions'
    /// part is kept for the next publication, and where ours is not what we published last
    /// (another partition published on a state that did not have it yet, or our own from before
    /// a restart) it goes out again. Our own publication, heard back, changes nothing: the
    /// partitions converge on one state without answering one another for ever.
    ///
    /// A single aggregator answers a state that is not what it has, heard before it published
    /// one (a state a run before left retained, its rooms since forgotten or its state file moved
    /// away): `learn --show` and Home Assistant read that state until this one publishes.
    mutating func learnStateHeard(_ state: LearnState, now: Double) throws -> [OutboundMessage] {
        guard learning.unavailable == nil else { return [] }
        guard isPartition else {
            // Only before this run published a state of its own: after it, ours is what is
            // retained, and what is heard is our echo (a label's progress behind what we have
            // now) or another aggregator's, which answering would only start a quarrel with.
            guard engine is any TrainableEstimator, learning.publishedPart == nil else { return [] }
            let heard = state.part([], inside: false).summary
            let ours = LearnState(ts: now, active: activeLabels, learned: learnedRooms).part([], inside: false).summary
            guard heard != ours else { return [] }
            // Heard before the start (the backlog read first, a standby's whole wait), an answer
            // would not go out, yet count as published: the start answers it.
            guard started else {
                learning.staleStateHeard = true
                return []
            }
            return [try learnState(now: now)]
        }
        learning.othersPart = state.part(otherPartitionsRooms, inside: true)
        let ours = state.part(ownRooms, inside: true).summary
        guard ours != learning.publishedPart ?? LearnState.Part() else {
            learning.stateAnswer.settle()
            return []
        }
        guard learning.stateAnswer.answerNow(at: now) else { return [] }
        return [try learnState(now: now)]
    }

    /// The learn state to announce when the service starts: once something is learned, when
    /// Home Assistant has teaching selects (whose state it is: without it they read unknown until
    /// the first label), or when a state that is not this run's was heard retained, so sites
    /// that neither teach nor offer it publish nothing new.
    mutating func learnStateAtStart(now: Double) throws -> [OutboundMessage] {
        let offered = discovery?.offersTeaching == true
        guard engine is any TrainableEstimator, learning.unavailable == nil,
              offered || !learnedRooms.isEmpty || !activeLabels.isEmpty || learning.staleStateHeard else { return [] }
        return [try learnState(now: now)]
    }
}
