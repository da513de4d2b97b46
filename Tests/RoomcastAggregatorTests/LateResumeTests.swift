import Shared
import Testing
@testable import RoomcastAggregator

/// A big site's retained presence can still be arriving when the refresh after resuming goes
/// out. A beacon resumed after it was republished on its own, and its room's occupancy and its
/// person stayed as the refresh had them (without it) until the next refresh, a minute later.
@Suite struct LateResumeTests {
    static let tag = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-1")!
    static let site = SiteModel(
        rooms: [.init(name: "kitchen"), .init(name: "office", floor: 1)],
        nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "office-pi", room: "office")],
        beacons: [.init(id: tag, name: "Tag")],
        people: [.init(name: "Alice", beacons: [tag])])

    @Test func aPresenceResumedAfterTheRefreshBringsItsOccupancyAndPerson() async throws {
        let core = AggregatorConfig(site: Self.site, discovery: .init(enabled: false)).makeCore()
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: 60, startedAt: 0, logger: .silent)
        await runtime.brokerConnected(now: 0)
        var refreshed = false
        for t in stride(from: 0.0, through: 5, by: 0.5) {
            refreshed = await runtime.tickAnswered(now: t).contains { $0.topic == Topics().room("kitchen") } || refreshed
        }
        #expect(refreshed, "the refresh after resuming went out")
        let retained = PresenceDecision(id: Self.tag, name: "Tag", room: "kitchen", floor: 0, distance: 1, confidence: 1,
                                        node: "kitchen-pi", since: -100, lastSeen: -1, evidence: [], ts: -1)
        let out = await runtime.handle(topic: Topics().presence(Self.tag), payload: try WireFormat.encode(retained), now: 5.2, retained: true)
        #expect(out.contains { $0.topic == Topics().presence(Self.tag) })
        let kitchen = out.last { $0.topic == Topics().room("kitchen") }.flatMap { try? WireFormat.decode(RoomOccupancy.self, from: $0.payload) }
        #expect(kitchen?.people == ["alice"], "\(String(describing: kitchen))")
        #expect(kitchen?.beacons == [Self.tag])
        let alice = out.last { $0.topic == Topics().person("alice") }.flatMap { try? WireFormat.decode(PersonPresence.self, from: $0.payload) }
        #expect(alice?.room == "kitchen", "\(String(describing: alice))")
    }
}
