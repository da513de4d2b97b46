import RoomcastAdvertising
import Shared
import RoomcastAgent
import RoomcastAggregator
import RoomcastConfig
import RoomcastYAML

/// Fuzzes the config loader (libyaml through `YAMLReader`, `ConfigDecoder`, validation) with the
/// three configs a user writes: the agent's, the aggregator's, and the advertising section.
///
/// Input: the file's text (JSON is YAML too).
enum ConfigHarness {
    static func run(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        if let agent = try? ConfigLoader.parse(AgentConfig.self, yaml: text) {
            // What loads has passed validation; validating again must agree.
            FuzzCheck.require((try? ConfigLoader.validate(agent)) != nil, "loaded agent config does not validate")
        }
        if let aggregator = try? ConfigLoader.parse(AggregatorConfig.self, yaml: text) {
            FuzzCheck.require((try? ConfigLoader.validate(aggregator)) != nil, "loaded aggregator config does not validate")
        }
        if let advertising = try? ConfigLoader.parse(AdvertisingConfig.self, yaml: text) {
            // The agent builds its decoder from this; invalid config must throw, never trap.
            if let decoder = try? AdvertisementDecoder(config: advertising) {
                _ = decoder.decode([0x02, 0x01, 0x06])
            }
        }
    }
}
