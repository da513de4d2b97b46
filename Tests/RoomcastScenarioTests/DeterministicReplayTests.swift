import Foundation
import Testing
import RoomcastSimulation

/// A whole recording replayed twice through the agents and the aggregator decides the same.
@Suite struct DeterministicReplayTests {
    @Test func deterministicReplay() async throws {
        let run = try await SimulationFixtures.run("kolakowski-robot")
        let first = try run.roomcast(), second = try run.roomcast()
        #expect(first.published.count > 3)
        #expect(first.published == second.published)
    }
}
