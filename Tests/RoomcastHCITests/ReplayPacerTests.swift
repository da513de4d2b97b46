import Testing
@testable import RoomcastHCI

/// Pacing a capture replayed at its own speed.
@Suite struct ReplayPacerTests {
    /// A record whose timestamp jumps a day ahead (a clock stepped forward while recording, a
    /// corrupt record) held a realtime replay for that day. The jump is paced as no gap; an
    /// ordinary gap is still waited out.
    @Test func aJumpInTheCapturesClockIsNotWaitedOut() {
        var pacer = ReplayPacer(speed: .realtime)
        let first = pacer.wait(until: 1000, stopped: { false })
        let second = pacer.wait(until: 1000.05, stopped: { false })
        #expect(first && second)
        let dueBeforeTheJump = pacer.dueTime(1000.05)
        var looks = 0
        // Were it waited out, `stopped` would be asked every 100 ms, and after 20 the wait gives up.
        let done = pacer.wait(until: 1000.05 + 86_400, stopped: { looks += 1; return looks > 20 })
        #expect(done && looks <= 20, "the jump was waited on: \(looks) looks")
        // Due times, not a look at the clock: the jumped record was due with the one before it,
        // and the next, 2 s on in the capture, is due 2 s after it.
        #expect(abs(pacer.dueTime(1000.05 + 86_400) - dueBeforeTheJump) < 1e-6, "the jump is paced as no gap")
        #expect(abs(pacer.dueTime(1000.05 + 86_400 + 2) - pacer.dueTime(1000.05 + 86_400) - 2) < 1e-6, "the next record waits its 2 s")
    }

    /// One corrupt record a day ahead, the rest back on the capture's true clock: the records
    /// after it are paced as before it, not let out at once (a day in the past).
    @Test func aSingleRecordOffTheClockLeavesTheRestPaced() {
        var pacer = ReplayPacer(speed: .realtime)
        let first = pacer.wait(until: 1000, stopped: { false })
        let dueBefore = pacer.dueTime(1000)
        let outlier = pacer.wait(until: 1000 + 86_400, stopped: { false })
        let after = pacer.wait(until: 1000.05, stopped: { false })
        #expect(first && outlier && after, "none of them is waited out")
        #expect(abs(pacer.dueTime(1002.05) - (dueBefore + 2)) < 1e-6,
                "2 s on in the capture is 2 s on: \(pacer.dueTime(1002.05) - dueBefore)")
        // A clock stepped back a day: due with the newest record before it, paced on from there.
        let back = pacer.wait(until: 1001.05 - 86_400, stopped: { false })
        #expect(back && abs(pacer.dueTime(1003.05 - 86_400) - (dueBefore + 2)) < 1e-6)
    }
}
