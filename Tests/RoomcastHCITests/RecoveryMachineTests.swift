@testable import RoomcastHCI
import Shared
import Testing

@Suite struct RecoveryMachineTests {
    static let policy = RecoveryPolicy(stallTimeout: 10, restartsBeforeReset: 2, initialBackoff: 1, maxBackoff: 8)

    func scanning(at t: Double = 0) -> RecoveryMachine {
        var m = RecoveryMachine(policy: Self.policy)
        #expect(m.start(now: t) == .open)
        #expect(m.handle(.opened, now: t) == nil)
        return m
    }

    @Test func reportsKeepTheScanAlive() {
        var m = scanning()
        for t in stride(from: 1.0, through: 100, by: 5) {
            #expect(m.handle(.reportReceived, now: t) == nil)
            #expect(m.handle(.tick, now: t + 4) == nil)
        }
        #expect(m.phase == .scanning)
    }

    @Test func aSilentScanIsRestartedThenTheAdapterReset() {
        var m = scanning()
        #expect(m.handle(.tick, now: 9.9) == nil)
        #expect(m.handle(.tick, now: 10) == .restartScan)
        #expect(m.handle(.tick, now: 15) == nil, "the restart counts as activity")
        #expect(m.handle(.tick, now: 20) == .restartScan)
        #expect(m.handle(.tick, now: 30) == .resetAdapter, "after 2 restarts with no report")
        #expect(m.handle(.resetSucceeded, now: 31) == nil)
        #expect(m.handle(.tick, now: 41) == .restartScan, "the count starts again after a reset")
    }

    /// `scan.restart_after_s: 0` disables the restarts: a scan silent for an hour is left alone
    /// (it was restarted at every tick, and the adapter reset every few of them).
    @Test func aZeroStallTimeoutNeverRestartsTheScan() {
        var m = RecoveryMachine(policy: RecoveryPolicy(stallTimeout: 0))
        #expect(m.start(now: 0) == .open)
        #expect(m.handle(.opened, now: 0) == nil)
        for t in stride(from: 0.5, through: 3600, by: 0.5) {
            #expect(m.handle(.tick, now: t) == nil)
        }
        #expect(m.phase == .scanning)
        #expect(m.handle(.transportLost, now: 3601) == .close, "recovery from a lost adapter still works")
    }

    @Test func aReportBetweenRestartsStartsTheCountAgain() {
        var m = scanning()
        #expect(m.handle(.tick, now: 10) == .restartScan)
        #expect(m.handle(.tick, now: 20) == .restartScan)
        _ = m.handle(.reportReceived, now: 21)
        #expect(m.restartsWithoutReport == 0)
        #expect(m.handle(.tick, now: 31) == .restartScan)
    }

    @Test func aFailedRestartEscalatesToReset() {
        var m = scanning()
        #expect(m.handle(.tick, now: 10) == .restartScan)
        #expect(m.handle(.scanRestartFailed, now: 10.1) == .resetAdapter)
    }

    @Test func aVanishedAdapterIsReopenedWithBackoff() {
        var m = scanning()
        #expect(m.handle(.transportLost, now: 100) == .close)
        #expect(m.phase == .waitingToReopen(until: 101))
        #expect(m.handle(.tick, now: 100.5) == nil)
        #expect(m.handle(.tick, now: 101) == .open)
        #expect(m.handle(.openFailed(transient: true), now: 101) == nil)
        #expect(m.phase == .waitingToReopen(until: 103))
        #expect(m.handle(.tick, now: 103) == .open)
        #expect(m.handle(.openFailed(transient: true), now: 103) == nil)
        #expect(m.phase == .waitingToReopen(until: 107))
        #expect(m.handle(.tick, now: 107) == .open)
        #expect(m.handle(.openFailed(transient: true), now: 107) == nil)
        #expect(m.phase == .waitingToReopen(until: 115), "8 s cap")
        #expect(m.handle(.tick, now: 115) == .open)
        #expect(m.handle(.openFailed(transient: true), now: 115) == nil)
        #expect(m.phase == .waitingToReopen(until: 123), "stays at the cap")
        #expect(m.handle(.tick, now: 123) == .open)
        #expect(m.handle(.opened, now: 123.5) == nil)
        #expect(m.phase == .scanning)
        #expect(m.reopenAttempt == 0)
        #expect(m.handle(.tick, now: 130) == nil, "fresh stall window after reopening")
    }

    @Test func aFailedResetClosesAndReopens() {
        var m = scanning()
        #expect(m.handle(.tick, now: 10) == .restartScan)
        #expect(m.handle(.scanRestartFailed, now: 10) == .resetAdapter)
        #expect(m.handle(.resetFailed, now: 11) == .close)
        #expect(m.handle(.tick, now: 12) == .open)
    }

    @Test func permanentErrorsStopTheSource() {
        var m = scanning()
        #expect(m.handle(.transportLost, now: 1) == .close)
        #expect(m.handle(.tick, now: 2) == .open)
        #expect(m.handle(.openFailed(transient: false), now: 2) == .giveUp)
        #expect(m.phase == .stopped)
        #expect(m.handle(.tick, now: 1000) == nil)
        #expect(m.handle(.opened, now: 1000) == nil)
    }

    @Test(arguments: [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (4, 8.0), (60, 8.0)])
    func backoffDoublesUpToTheCap(attempt: Int, expected: Double) {
        #expect(Self.policy.backoff(attempt: attempt) == expected)
    }

    /// The live supervisor timed the stall watchdog and the reopen backoff on the wall clock:
    /// stepped back an hour, a stalled scan was not restarted for an hour. It runs on the
    /// monotonic clock now; tests that drive a manual clock keep driving it.
    @Test func theLiveSupervisorTimesItsWaitsOnTheMonotonicClock() {
        #expect(LiveRadioSource.deadlineClock(for: SystemTimeSource()) is MonotonicTimeSource)
        let manual = ManualTimeSource(5)
        #expect((LiveRadioSource.deadlineClock(for: manual) as? ManualTimeSource) === manual)
        let a = MonotonicTimeSource().now(), b = MonotonicTimeSource().now()
        #expect(b >= a)
    }
}
