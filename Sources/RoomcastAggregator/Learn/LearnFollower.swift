import Foundation
import Synchronization
import RoomcastCLI
import RoomcastFusion
import Shared

/// A follower shared by the message reader, the deadline loop and the Ctrl-C handler.
final class LockedLearnFollower: Sendable {
    let state: Mutex<LearnFollower>
    init(_ follower: LearnFollower) { state = Mutex(follower) }
}

/// Follows one learn command's answers on the result and state topics (`aggregator learn`).
struct LearnFollower: Sendable {
    let request: LearnCommand
    /// When to give up waiting.
    var deadline: Double
    var outcome: (report: String, code: ExitCode)?
    /// The wait ended with no answer (else a signal ended it).
    var deadlinePassed = false
    private var lastProgress = -Double.infinity
    private var ends: Double?

    init(request: LearnCommand, now: Double = clock()) {
        self.request = request
        deadline = now + Self.answerTimeout
    }

    /// The clock the waits are timed on: monotonic seconds, so a wall clock set back an hour
    /// while waiting for a 30-s label does not keep the command waiting that hour. Only
    /// differences of it are used; the aggregator's own times come in its messages.
    static func clock() -> Double { Syscall.monotonicSeconds() }

    /// Seconds to wait for the aggregator to take a command, and for a label's result after its end.
    static let answerTimeout = 10.0

    /// Lines of progress for stderr, and whether the command is done.
    mutating func take(topic: String, payload: [UInt8], topics: Topics, now: Double) -> (lines: [String], done: Bool) {
        if topic == topics.aggregatorLearnState {
            guard let ends, now - lastProgress >= 5, case .label(_, let beacon, _) = request.action,
                  let state = try? WireFormat.decode(LearnState.self, from: payload),
                  let label = state.active.first(where: { $0.beacon == beacon }) else { return ([], false) }
            lastProgress = now
            let heard = label.nodes.isEmpty ? "no node hears it yet" : "heard by " + label.nodes.joined(separator: ", ")
            return (["  \(Self.whole(label.recorded)) s recorded, \(Self.whole(max(0, ends - state.ts))) s to go; \(heard)"], false)
        }
        guard topic == topics.aggregatorLearnResult, let result = try? WireFormat.decode(LearnResult.self, from: payload),
              result.request == request.request else { return ([], false) }
        switch result.status {
        case .started:
            // The label's times are the aggregator's wall clock: only their difference is used
            // here, and no longer than a label may last (anyone may publish a result).
            let seconds = if let end = result.ends, let start = result.started { end - start } else { 0.0 }
            ends = result.ends
            deadline = max(deadline, now + min(max(0, seconds), FusionEngine.labelSeconds.upperBound) + Self.answerTimeout)
            lastProgress = now
            return (["Learning \(result.room ?? "?") from \(result.beacon?.rawValue ?? "?") for \(Self.whole(seconds)) s: keep the beacon on you and walk round the room."], false)
        case .learned:
            outcome = (Self.describe(result), .success)
        case .notLearned:
            outcome = (Self.describe(result) + "\nNot learned: \(result.error ?? "too little heard")", .dataError)
        case .rejected:
            outcome = ("Refused: \(result.error ?? "no reason given")", .dataError)
        case .replaced:
            outcome = ("Replaced by a newer label for \(result.beacon?.rawValue ?? "the beacon"); nothing learned from this one.", .dataError)
        case .cancelled:
            outcome = ("Cancelled: nothing learned from the label for \(result.beacon?.rawValue ?? "the beacon") in \(result.room ?? "?").", .success)
        case .forgotten:
            outcome = ("Forgot what was learned for \(result.room ?? "?").", .success)
        }
        return ([], true)
    }

    /// One decimal of the value as the retained state carries it (`LearnState.rounded`), so
    /// `--show` prints the same figures from the retained state and from the state file:
    /// rounding 4.949 to one decimal gives 4.9, but its retained 4.95 gives 5.0.
    static func number(_ x: Double) -> String { String(format: "%.1f", LearnState.rounded(x)) }

    /// Whole seconds from a message the broker delivered: anyone may publish on these topics,
    /// and `Int(_:)` traps on a value past its range (`1e300`), so such a value shows as `?`.
    static func whole(_ x: Double) -> String {
        x.isFinite && abs(x) < 1e15 ? "\(Int(x.rounded()))" : "?"
    }

    static func describe(_ result: LearnResult) -> String {
        let recorded = result.recorded ?? 0
        let length = (result.ends ?? 0) - (result.started ?? 0)
        var text = "\(result.room ?? "?"): \(number(recorded)) of \(number(length)) s heard, beacon \(result.beacon?.rawValue ?? "?")\n"
        text += table(result.nodes ?? [])
        return text
    }

    static func table(_ nodes: [LearnedRooms.NodeLevel]) -> String {
        guard !nodes.isEmpty else { return "  (no node heard it)\n" }
        let width = max(4, nodes.map(\.node.count).max() ?? 4)
        var text = "  " + "node".padding(toLength: width, withPad: " ", startingAt: 0) + "  heard s  level dB (vs its 1 m power)\n"
        for n in nodes {
            let heard = number(n.seconds)
            text += "  " + n.node.padding(toLength: width, withPad: " ", startingAt: 0)
                + "  " + String(repeating: " ", count: max(0, 7 - heard.count)) + heard
                + "  \(number(n.mean)) ± \(number(n.spread))\n"
        }
        return text
    }

    /// What `--show` prints; `departures` only from a state file (the retained state leaves them out).
    static func describe(_ rooms: [LearnedRooms.Room], active: [ActiveLabel], departures: [LearnedRooms.Departures] = []) -> String {
        var text = rooms.isEmpty ? "No room taught yet.\n" : ""
        for room in rooms {
            text += "\(room.name): \(number(room.seconds)) s taught\n" + table(room.nodes)
        }
        for label in active {
            text += "Learning now: \(label.room) from \(label.beacon.rawValue), \(number(label.recorded)) s recorded\n"
        }
        if !departures.isEmpty {
            // Why a beacon silent in one room is shown away within seconds and in another only after the timeout.
            text += "Silences that ended in leaving the site / in coming back, per room:\n"
            let width = departures.map(\.room.count).max() ?? 0
            for d in departures {
                let leaves = d.left >= d.returned + 1 ? "  (beacons leave from here)" : ""
                text += "  " + d.room.padding(toLength: width, withPad: " ", startingAt: 0) + "  \(d.left) left, \(d.returned) back\(leaves)\n"
            }
        }
        return String(text.dropLast())
    }
}
