import Foundation
import Synchronization
import Testing
import TestSupport
@testable import RoomcastAggregator

/// The HTTP answers' passes over the runtime: anyone can ask `/healthz` as often as they like.
@Suite struct SingleFlightTests {
    final class Pass: Sendable {
        let started = Atomic<Int>(0)
        let open = Atomic<Bool>(false)
        /// One pass: counted, then held until the test opens it.
        func run() async -> Int {
            let n = started.add(1, ordering: .relaxed).newValue
            while !open.load(ordering: .relaxed) { try? await Task.sleep(for: .milliseconds(5)) }
            return n
        }
    }

    /// Requests that come while a pass is being worked out join it, also those that give up
    /// waiting: a slow runtime is not handed one more pass per request. Each request worked out
    /// its own pass, queued on the actor ahead of the readings.
    @Test func requestsWhileAPassRunsJoinIt() async throws {
        let pass = Pass()
        let flight = SingleFlight { await pass.run() }
        // Generous bounds: a pass runs on the cooperative pool, which a sanitizer's whole-suite
        // run on two cores can keep busy for tens of seconds.
        let first = Task { await onOwnThread { flight.value(timeout: 600) } }
        try await eventually("the first pass to start", timeout: .seconds(300)) { pass.started.load(ordering: .relaxed) == 1 }
        for _ in 0..<8 {
            let gaveUp = await onOwnThread { flight.value(timeout: 0.05) }
            #expect(gaveUp == nil)
        }
        #expect(pass.started.load(ordering: .relaxed) == 1, "one pass however many asked")
        pass.open.store(true, ordering: .relaxed)
        #expect(try await first.value == 1)
        // Once it is done, the next request has a fresh pass.
        #expect(await onOwnThread { flight.value(timeout: 600) } == 2)
    }

    /// As a connection thread asks (`offPool` would queue these behind the first, which waits).
    func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }
}
