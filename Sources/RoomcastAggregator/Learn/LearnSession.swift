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
    /// Under `partition:`, this partition's answers to a shared state that left out its part.
    var stateAnswer = PacedAnswer()
    /// A retained learn state that is not this run's was heard before the start: the start
    /// publishes this run's over it.
    var staleStateHeard = false
    /// Why rooms cannot be taught in this run (its state file could not be read): every command is
    /// refused with it, and no learn state published over the one retained, the only other copy
    /// of what was taught.
    var unavailable: String?
    /// Refusals published: at most `refusalsPerWindow` every `refusalWindow` seconds (a broken
    /// automation must not flood the result topic); more are only counted.
    var refusals = WindowLimit(most: Self.refusalsPerWindow, every: Self.refusalWindow)
    var refusalsSuppressed: UInt64 = 0
    /// The newest refusal's reason, published or not, until the service logs it: a command from
    /// Home Assistant's teaching select or an automation has nobody reading its result topic.
    var unloggedRefusal: String?

    static let refusalWindow = 10.0
    static let refusalsPerWindow = 5

    /// Commands taken: each one publishes its results and the whole retained state (up to
    /// 64 KiB), so a looping automation or any client the ACL lets write the learn topic must
    /// not make the aggregator publish 64 KiB per message it sends.
    var commands = WindowLimit(most: Self.commandsPerWindow, every: Self.commandWindow)
    static let commandWindow = 10.0
    static let commandsPerWindow = 20

    /// Whether a command at `now` may be taken.
    mutating func admitCommand(now: Double) -> Bool { commands.admit(now: now) }

    /// Whether a refusal at `now` may be published.
    mutating func admitRefusal(now: Double) -> Bool {
        guard refusals.admit(now: now) else { refusalsSuppressed &+= 1; return false }
        return true
    }

    /// At most `most` events in a window of `every` seconds that starts with the first of them.
    struct WindowLimit: Sendable {
        let most: Int
        let every: Double
        private var start = -Double.infinity
        private var count = 0

        init(most: Int, every: Double) {
            self.most = most
            self.every = every
        }

        mutating func admit(now: Double) -> Bool {
            // A window that starts in the future (the wall clock stepped back) is over as well.
            if !(0..<every).contains(now - start) {
                start = now
                count = 0
            }
            guard count < most else { return false }
            count += 1
            return true
        }
    }
}
