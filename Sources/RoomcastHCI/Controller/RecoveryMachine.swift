/// The radio's recovery logic as a pure, clock-driven state machine: the
/// supervisor feeds it what happened and the time, and performs the action it
/// returns. No I/O and no clock inside, so every path is unit-tested.
///
/// Escalation: a scan silent for `stallTimeout` is restarted; after
/// `restartsBeforeReset` restarts with no report in between (or a failed
/// restart) the adapter is reset; a failed reset or a lost transport closes it
/// and reopens after an exponential backoff, for as long as the error is
/// transient. Permission and configuration errors stop the source.
public struct RecoveryMachine: Sendable, Hashable {
    public enum Phase: Sendable, Hashable {
        /// Not open; waiting for the supervisor to open it.
        case opening
        case scanning
        /// Closed; reopen once `now >= until`.
        case waitingToReopen(until: Double)
        /// Gave up on a non-transient error.
        case stopped
    }

    public enum Event: Sendable, Hashable {
        case opened
        case openFailed(transient: Bool)
        case reportReceived
        case tick
        case scanRestartFailed
        case resetSucceeded
        case resetFailed
        case transportLost
    }

    public enum Action: Sendable, Hashable {
        case open
        case restartScan
        case resetAdapter
        /// Close the transport; the machine then waits and asks for `.open`.
        case close
        case giveUp
    }

    public let policy: RecoveryPolicy
    public private(set) var phase: Phase = .opening
    /// When the last report (or the last recovery step) happened.
    public private(set) var lastActivity: Double = 0
    /// Restarts since the last report.
    public private(set) var restartsWithoutReport = 0
    /// Failed opens since the last successful one.
    public private(set) var reopenAttempt = 0

    public init(policy: RecoveryPolicy) { self.policy = policy }

    /// The first action: open the adapter.
    public mutating func start(now: Double) -> Action {
        phase = .opening
        lastActivity = now
        return .open
    }

    /// Feeds one event at `now`; returns what to do, if anything.
    public mutating func handle(_ event: Event, now: Double) -> Action? {
        switch (event, phase) {
        case (_, .stopped):
            return nil
        case (.opened, _):
            phase = .scanning
            lastActivity = now
            restartsWithoutReport = 0
            reopenAttempt = 0
            return nil
        case let (.openFailed(transient), _):
            guard transient else {
                phase = .stopped
                return .giveUp
            }
            waitToReopen(now: now)
            return nil
        case (.reportReceived, .scanning):
            lastActivity = max(lastActivity, now)
            restartsWithoutReport = 0
            return nil
        case (.tick, .scanning):
            guard policy.watchesStalls, now - lastActivity >= policy.stallTimeout else { return nil }
            lastActivity = now
            if restartsWithoutReport < policy.restartsBeforeReset {
                restartsWithoutReport += 1
                return .restartScan
            }
            restartsWithoutReport = 0
            return .resetAdapter
        case let (.tick, .waitingToReopen(until)):
            guard now >= until else { return nil }
            phase = .opening
            return .open
        case (.scanRestartFailed, .scanning):
            lastActivity = now
            restartsWithoutReport = 0
            return .resetAdapter
        case (.resetSucceeded, .scanning):
            lastActivity = now
            return nil
        case (.resetFailed, _), (.transportLost, .scanning), (.transportLost, .opening):
            waitToReopen(now: now)
            return .close
        default:
            return nil
        }
    }

    private mutating func waitToReopen(now: Double) {
        phase = .waitingToReopen(until: now + policy.backoff(attempt: reopenAttempt))
        reopenAttempt += 1
    }
}
