import Foundation
import Testing
@testable import Shared

func fixturePath(_ name: String) throws -> String {
    let url = try #require(Bundle.module.url(forResource: "Fixtures/" + name, withExtension: nil))
    return url.path
}

@Suite struct ConfigFixtureTests {
    @Test func dump() throws {
        for name in ["agent-broken.yaml", "aggregator-broken.yaml", "duplicate-keys.yaml", "alias-bomb.yaml"] {
            let path = try fixturePath(name)
            do {
                _ = try ConfigLoader.load(AgentConfig.self, from: path)
            } catch {
                print("DUMP", error.description)
            }
            do {
                _ = try ConfigLoader.load(AggregatorConfig.self, from: path)
            } catch {
                print("DUMP", error.description)
            }
        }
    }
}
