import Shared

/// Rooms the user teaches: while a label runs ("the beacon is in the kitchen for 30 s"),
/// every evaluation of its beacon records how each fresh node hears it; when the label
/// ends, what was heard is pooled into `learnedRooms`. Recording only: how rooms are
/// decided does not depend on anything here.
extension FusionEngine {
    /// How long a label may last, in seconds: a shorter or longer one is refused.
    public static var labelSeconds: ClosedRange<Double> { RoomTraining.secondsRange }

    /// Starts a label: `beacon` is carried in `room` for the next `seconds`. A label running
    /// for the same beacon is replaced (the person moved on).
    public mutating func beginLabel(room: String, beacon: BeaconID, seconds: Double, now: Double) throws(LabelError) {
        guard now.isFinite else { throw .badTime }
        guard roomIndex[room] != nil else {
            throw .unknownRoom(room, suggestion: Suggestion.closest(to: room, in: roomNames), rooms: roomNames)
        }
        if let problem = labelProblem(beacon: beacon, seconds: seconds, now: now) { throw problem }
        training.labels.removeAll { $0.beacon == beacon }
        guard training.labels.count < RoomTraining.maximumLabels else { throw .tooManyLabels(RoomTraining.maximumLabels) }
        training.labels.append(.init(room: room, beacon: beacon, started: now, ends: now + seconds))
    }

    /// What refuses a label whatever room it is for: a time or length out of range, a node's own
    /// beacon, one the site does not track. A partition asks before a label for another
    /// partition's room replaces one of its own: one that no partition starts replaces none.
    public func labelProblem(beacon: BeaconID, seconds: Double, now: Double) -> LabelError? {
        guard now.isFinite else { return .badTime }
        guard seconds.isFinite, RoomTraining.secondsRange.contains(seconds) else { return .secondsOutOfRange(seconds) }
        if let n = nodeOfBeacon[beacon] { return .nodeBeacon(beacon, node: nodes[n].name) }
        if !known.isEmpty && known[beacon] == nil { return .untrackedBeacon(beacon) }
        return nil
    }

    /// Stops the label running for `beacon`, if any, without learning from it.
    public mutating func cancelLabel(beacon: BeaconID) {
        training.labels.removeAll { $0.beacon == beacon }
    }

    /// The labels running, in the order they began.
    public var activeLabels: [ActiveLabel] {
        training.labels.map { label in
            ActiveLabel(room: label.room, beacon: label.beacon, started: label.started, ends: label.ends,
                        recorded: label.recorded, nodes: heardNodes(label).map(\.node))
        }
    }

    /// The labels that finished since the last call.
    public mutating func takeFinishedLabels() -> [FinishedLabel] {
        defer { training.finished.removeAll() }
        return training.finished
    }

    /// Everything learned so far (restored and taught), with where beacons left the site from.
    public var learnedRooms: LearnedRooms {
        var learned = training.learned
        learned.departures = departures.record(names: roomNames)
        return learned
    }

    /// Moves whenever a departure count changes (`RoomDepartures`).
    public var departuresRevision: UInt64 { departures.revision }

    /// Replaces what was learned with `learned` (read back from the state file at start-up).
    public mutating func restore(_ learned: LearnedRooms) {
        training.learned = learned
        training.learned.departures = []
        // The rooms last published are the aggregator's to resume, not what was learned.
        training.learned.placed = []
        departures.restore(learned.departures, roomIndex: roomIndex, roomsComeLater: site.nodes.isEmpty && settings.autoNodes)
    }

    /// Forgets what was learned about `room`.
    public mutating func forgetLearned(room: String) {
        training.learned.forget(room: room)
    }

    /// Records this evaluation of beacon `b` into its label, if one runs: each fresh node
    /// (`scratchNodes`) adds its fast average less the beacon's measured power, weighted by
    /// the part of the time its news speaks for, (`now` − `span`, `now`], inside the label.
    /// Evaluations bunched behind a backlog can speak for overlapping times: a label never
    /// records more than the time it has run.
    mutating func recordTraining(_ b: Int, base: Int, now: Double, span: Double) {
        guard !training.labels.isEmpty, !scratchNodes.isEmpty else { return }
        let id = beacons[b].id
        guard let l = training.labels.firstIndex(where: { $0.beacon == id }) else { return }
        let label = training.labels[l]
        let end = min(now, label.ends)
        let weight = min(end - max(now - span, label.started), end - label.started - label.recorded)
        guard weight > 0 else { return }
        let power = beacons[b].power
        training.labels[l].recorded += weight
        for n in scratchNodes {
            training.labels[l].add(node: n, value: slots[base + n].fast - power, weight: weight)
        }
    }

    /// Ends the labels whose time is up at `now` (called from `tick`).
    mutating func finishLabels(now: Double) {
        guard !training.labels.isEmpty else { return }
        var running: [RoomTraining.Label] = []
        for label in training.labels {
            guard now >= label.ends else { running.append(label); continue }
            finish(label)
        }
        training.labels = running
    }

    private mutating func finish(_ label: RoomTraining.Label) {
        let levels = heardNodes(label)
        var outcome = FinishedLabel.Outcome.learned
        let needed = RoomTraining.minimumCoverage * label.seconds
        if label.recorded < needed {
            outcome = .rejected("a node heard the beacon for \(Self.whole(label.recorded)) s of the \(Self.whole(label.seconds)) s"
                + " (needs \(Self.whole(needed)) s); nothing learned: keep the beacon on you, in the room, and try again")
        } else if training.learned.room(named: label.room) == nil && training.learned.rooms.count >= LearnedRooms.maximumRooms {
            outcome = .rejected("\(LearnedRooms.maximumRooms) rooms are learned already; forget one first")
        } else {
            training.learned.merge(LearnedRooms(rooms: [.init(name: label.room, seconds: label.recorded, nodes: levels)]))
        }
        if training.finished.count >= RoomTraining.maximumFinished { training.finished.removeFirst() }
        training.finished.append(FinishedLabel(room: label.room, beacon: label.beacon, started: label.started, ends: label.ends,
                                               recorded: label.recorded, levels: levels, outcome: outcome))
    }

    /// What each node heard during `label`, sorted by node name.
    private func heardNodes(_ label: RoomTraining.Label) -> [LearnedRooms.NodeLevel] {
        label.levels.indices.compactMap { n -> LearnedRooms.NodeLevel? in
            let level = label.levels[n]
            guard level.weight > 0, n < nodes.count else { return nil }
            return .init(node: nodes[n].name, seconds: level.weight, mean: level.mean, spread: level.spread,
                         room: roomName(ofNode: n))
        }.sorted { $0.node < $1.node }
    }

    private static func whole(_ seconds: Double) -> String { String(Int(seconds.rounded())) }
}
