import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Shared
import Synchronization
import RoomcastLogging
import Testing
@testable import RoomcastAgent

/// What the core decides reaches the sink in the order decided, whichever thread decided it.
extension AgentCoreTests {
    /// A sink slow to take a region's exit (a busy client library, a slow stdout): it waits,
    /// up to a second, for another send to come in meanwhile.
    final class SlowExitSink: AgentSink {
        private let events = Mutex<[RegionEvent.Kind]>([])
        private let exitWaiting = Atomic<Bool>(false)
        let exitSending = DispatchSemaphore(value: 0)
        private let otherSent = DispatchSemaphore(value: 0)

        func send(_ messages: [OutboundMessage], at ts: Double) {
            let batch = messages.compactMap { try? WireFormat.decode(RegionEvent.self, from: $0.payload).event }
            if batch.contains(.exit) {
                exitWaiting.store(true, ordering: .sequentiallyConsistent)
                exitSending.signal()
                _ = otherSent.wait(timeout: .now() + 1)
                events.withLock { $0 += batch }
            } else {
                events.withLock { $0 += batch }
                if exitWaiting.load(ordering: .sequentiallyConsistent), !batch.isEmpty { otherSent.signal() }
            }
        }

        var sent: [RegionEvent.Kind] { events.withLock { $0 } }
        var dropped: UInt64 { 0 }
        var reconnects: UInt64 { 0 }
        func shutdown(final: OutboundMessage?, at ts: Double) async {}
    }

    /// A core at node `n` with the region `office` (the beacons' uuid), left 10 s after the last sighting.
    func officeRegionCore() throws -> AgentCore {
        var config = AdvertisingConfig()
        config.regions = [RegionConfig(name: "office", uuid: "e2c56db5-dffb-48d2-b060-d0f5a71096e0")]
        return AgentCore(settings: AgentSettings(node: "n", regionExitDelay: 10), decoder: try AdvertisementDecoder(config: config),
                         startTime: 0)
    }

    /// The timer decides a region's exit and the radio, at once, the beacon's enter: the enter
    /// waits for the exit to be sent. Passing it, it would leave consumers with the beacon
    /// outside while the agent has it inside.
    @Test func aRegionsExitAndTheNextEnterAreSentInTheirOrder() throws {
        let core = try officeRegionCore()
        let sink = SlowExitSink()
        let runtime = AgentRuntime(core: core, sink: sink, counters: nil, ticksFromReports: false, startTime: 0)
        runtime.handle(report(t: 0, rssi: -60))
        let timer = Thread { runtime.tick(now: 11) }
        timer.start()
        sink.exitSending.wait()
        runtime.handle(report(t: 11.1, rssi: -60))
        // The timer's send ends within a second of its start; a bound, not a pace.
        for _ in 0..<1000 where sink.sent.count < 3 { Thread.sleep(forTimeInterval: 0.01) }
        #expect(sink.sent == [.enter, .exit, .enter])
    }
}

extension AgentCoreTests {
    /// A Pi boots on the time it last saved, then NTP steps the clock an hour forward while a
    /// beacon in a region is heard: no hour passed, so the region is not left and the beacon
    /// not forgotten. The runtime tells the step from time passing by the time since boot.
    @Test func aClockSteppedForwardIsNoSilence() throws {
        let core = try officeRegionCore()
        let sink = CollectingSink()
        let boot = ManualTimeSource(500)
        let logs = InMemoryLogHandler()
        let runtime = AgentRuntime(core: core, sink: sink, counters: nil, ticksFromReports: false, startTime: 0, elapsed: boot,
                                   logger: Logger(label: "agent", level: .info, handler: logs))
        func events() -> [String] { sink.topics.filter { $0.hasSuffix("/events") } }
        var t = 0.0
        /// The beacon heard twice a second for `seconds`, the timer ticking every second.
        func heard(for seconds: Int) {
            for _ in 0..<(2 * seconds) {
                runtime.handle(report(t: t, rssi: -60))
                t += 0.5
                boot.advance(by: 0.5)
                if t.truncatingRemainder(dividingBy: 1) == 0 { runtime.tick(now: t) }
            }
        }
        heard(for: 10)
        #expect(events().count == 1, "entered")
        // One second later by the monotonic clock, an hour later by the wall clock.
        t += 3600
        boot.advance(by: 1)
        runtime.tick(now: t)
        #expect(events().count == 1, "no exit on the step")
        #expect(runtime.stats.clockSteps == 1)
        // Said with how far and which way: the hour ahead, less the second that passed.
        let said = logs.records.filter { $0.message.hasPrefix("the wall clock stepped") }.map { "\($0.metadata["step_s"] ?? "")" }
        #expect(said == ["+3599.0"], "\(said)")
        // A report the radio captured just before the step, handled after the tick that saw it:
        // late, not a step back across the hour.
        runtime.handle(report(t: t - 3600 - 0.05, rssi: -60))
        #expect(runtime.stats.clockSteps == 1, "a late report is no step back")
        heard(for: 5)
        #expect(events().count == 1, "no exit, no enter again")
        #expect(runtime.metrics.trackedBeacons == 1)
        // Silent for real: the region is left after its delay, timed on the stepped clock.
        for _ in 0..<12 {
            t += 1
            boot.advance(by: 1)
            runtime.tick(now: t)
        }
        #expect(events().count == 2, "left 10 s after the beacon fell silent")
    }

    /// The service stops its ticker without waiting for it (its `onTick` may be stuck on a
    /// terminal): a tick the timer still delivers after the run's final one sends nothing, so
    /// nothing follows the `offline` status (a region exit held for that tick is the final
    /// tick's to send).
    @Test func noTickAfterTheFinalOne() async throws {
        let core = try officeRegionCore()
        let sink = CollectingSink()
        let runtime = AgentRuntime(core: core, sink: sink, counters: nil, ticksFromReports: false, startTime: 0)
        runtime.start(now: 0)
        for i in 0..<10 { runtime.handle(report(t: Double(i) * 0.5, rssi: -60)) }
        runtime.tick(now: 5)
        await runtime.finish()
        let sent = sink.topics
        #expect(sent.last?.hasSuffix("/status") == true, "\(sent.suffix(3))")
        runtime.tick(now: 30)
        #expect(sink.topics == sent, "after the final tick: \(sink.topics.dropFirst(sent.count))")
    }
}
