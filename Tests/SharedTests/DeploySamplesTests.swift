import Foundation
import Shared
import Testing

/// The commented samples in deploy/ must load as they are.
@Suite struct DeploySamplesTests {
    static func path(_ name: String, file: String = #filePath) -> String {
        var url = URL(fileURLWithPath: file)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("deploy/\(name)").path
    }

    @Test func agentSampleLoads() throws {
        let c = try ConfigLoader.load(AgentConfig.self, from: Self.path("agent.yaml"))
        #expect(c.node == "kitchen-pi" && c.regions.count == 1 && c.beacons.count == 1)
        #expect(c.advertising.validate() == [])
    }

    @Test func aggregatorSampleLoads() throws {
        let c = try ConfigLoader.load(AggregatorConfig.self, from: Self.path("aggregator.yaml"))
        #expect(c.site.rooms.count == 3 && c.site.nodes.count == 3)
        #expect(c.discovery.enabled)
    }
}
