import Shared

/// What the aggregator core keeps about learn commands: whose labels run (their `request`
/// tokens, to answer the right sender), how often refusals were published, and a revision
/// that moves whenever the learned rooms change (the service then writes its state file).
struct LearnSession: Sendable {
    /// The `request` token of each running label's command (nil: it carried none).
    var requests: [BeaconID: String?] = [:]
    var labelsRunning: Bool { !requests.isEmpty }
    /// Bumped whenever what was learned changes.
    var revision: UInt64 = 0
    /// Under `partition:`, the other partitions' part of the shared learn state, as last heard
    /// on its topic (one payload's worth: bounded by the payload limit).
    var othersPart = LearnState.Part()
    /// The learn state this aggregator published last (under `partition:`, its own part of
    /// it), as its summary; nil before the first.
    var publishedPart: LearnState.Part?
    /// Refusals published in the current window; more are only counted.
    var refusalWindowStart = -Double.infinity
    var refusalsInWindow = 0
    var refusalsSuppressed: UInt64 = 0

    static let refusalWindow = 10.0
    static let refusalsPerWindow = 5

    /// Commands taken in the current window: each one taken publishes its results and the whole
    /// retained state (up to 64 KiB), so a looping automation or any client the ACL lets write
    /// the learn topic must not make the aggregator publish 64 KiB per message it sends.
    var commandWindowStart = -Double.infinity
    var commandsInWindow = 0
    static let commandWindow = 10.0
    static let commandsPerWindow = 20

    /// Whether a command at `now` may be taken (at most `commandsPerWindow` every `commandWindow` s).
    mutating func admitCommand(now: Double) -> Bool {
        if !(0..<Self.commandWindow).contains(now - commandWindowStart) {
            commandWindowStart = now
            commandsInWindow = 0
        }
        guard commandsInWindow < Self.commandsPerWindow else { return false }
        commandsInWindow += 1
        return true
    }

    /// Whether a refusal at `now` may be published (at most `refusalsPerWindow` every
    /// `refusalWindow` seconds: a broken automation must not flood the result topic).
    mutating func admitRefusal(now: Double) -> Bool {
        // A window that starts in the future (the wall clock stepped back) is over as well.
        if !(0..<Self.refusalWindow).contains(now - refusalWindowStart) {
            refusalWindowStart = now
            refusalsInWindow = 0
        }
        guard refusalsInWindow < Self.refusalsPerWindow else { refusalsSuppressed &+= 1; return false }
        refusalsInWindow += 1
        return true
    }
}
