import Testing
@testable import Shared
@testable import RoomcastAgent
@testable import RoomcastAggregator
@testable import RoomcastConfig
@testable import RoomcastMQTT
@testable import RoomcastYAML

@Suite struct OverridesTests {
    let file = """
        node: from-file
        mqtt:
          broker: mqtt://file-broker
          keepalive: 20
        """

    @Test func flagsOverrideFileValues() throws {
        guard case .run(let command) = try CLITestSpec.agent.parse(["--broker", "mqtts://cli-broker:9000", "--node", "from-cli",
                                                                    "--log-level=debug"]) else {
            Issue.record("expected run")
            return
        }
        let overrides = Overrides(command)
        let config = try ConfigLoader.parse(AgentConfig.self, yaml: file, overrides: overrides)
        #expect(config.node == "from-cli")
        #expect(config.mqtt.broker == BrokerURL(isTLS: true, host: "cli-broker", port: 9000))
        #expect(config.mqtt.keepalive == 20)
        #expect(config.log.level == .debug)
    }

    /// Only options on the command line reach the config: with none of the override options
    /// given (`--dry-run` has no config path) the file loads exactly as without overrides.
    @Test func optionsNotGivenLeaveTheFileAlone() throws {
        guard case .run(let command) = try CLITestSpec.agent.parse(["--dry-run"]) else {
            Issue.record("expected run")
            return
        }
        let overrides = Overrides(command)
        #expect(overrides.isEmpty)
        let config = try ConfigLoader.parse(AgentConfig.self, yaml: file, overrides: overrides)
        #expect(config == (try ConfigLoader.parse(AgentConfig.self, yaml: file)))
        #expect(config.node == "from-file")
        #expect(config.mqtt.broker == BrokerURL(isTLS: false, host: "file-broker", port: 1883))
        #expect(config.mqtt.keepalive == 20)
    }

    @Test func overridesCreateMissingSectionsAndListsAndFlags() throws {
        var o = Overrides()
        o.set("mqtt.tls.insecure", flag: true, from: "--insecure")
        o.set("mqtt.broker", to: "mqtts://h", from: "--broker")
        o.set("advertise.enabled", flag: true, from: "--advertise")
        o.set("advertise.uuid", to: "e2c56db5-dffb-48d2-b060-d0f5a71096e0", from: "--uuid")
        o.set("node", to: "n", from: "--node")
        let config = try ConfigLoader.fromOverrides(AgentConfig.self, o)
        #expect(config.mqtt.tls?.insecure == true)
        #expect(config.advertise.enabled)

        var site = Overrides()
        site.set("partition.rooms", toList: ["kitchen"], from: "--room")
        site.set("rooms[0].floor", to: "3", from: "--floor")
        let agg = try ConfigLoader.parse(AggregatorConfig.self, yaml: "rooms: [{name: kitchen}]\nnodes: [{name: kitchen-pi, room: kitchen}]\n",
                                         overrides: site)
        #expect(agg.partition.rooms == ["kitchen"])
        #expect(agg.rooms[0].floor == 3)
    }

    @Test func repeatedOptionsBecomeListsAndFlagsBecomeTrue() throws {
        guard case .run(let command) = try CLITestSpec.agent.parse(["replay", "-b", "kitchen", "--beacon", "hall", "--json", "f"]) else {
            Issue.record("expected run")
            return
        }
        let overrides = Overrides(command, paths: ["beacon": "partition.rooms", "json": "output.mqtt_room", "speed": "fusion.min_dwell_s"])
        #expect(overrides.entries.map(\.source) == ["--beacon", "--json"])
        let config = try ConfigLoader.parse(AggregatorConfig.self, yaml: "rooms: [{name: kitchen}, {name: hall}]\nnodes: [{name: hall-pi, room: hall}]\n",
                                            overrides: overrides)
        #expect(config.partition.rooms == ["kitchen", "hall"])
        #expect(config.output.enabled == [.mqttRoom])
    }

    @Test func badOverrideValuesNameTheFlag() {
        var o = Overrides()
        o.set("mqtt.broker", to: "tcp://x", from: "--broker")
        o.set("node", to: "a/b", from: "--node")
        do {
            _ = try ConfigLoader.parse(AgentConfig.self, yaml: file, overrides: o)
            Issue.record("loaded")
        } catch {
            #expect(error.problems.map(\.location) == [.override("--broker"), .override("--node")])
            #expect(error.problems[1].description == "node: must not contain '/' (from --node)")
        }
    }

    @Test func impossiblePathsAreReported() {
        var o = Overrides()
        o.set("node.name", to: "x", from: "--x")
        o.set("rooms[5].name", to: "x", from: "--y")
        o.set("a..b", to: "x", from: "--z")
        do {
            _ = try ConfigLoader.parse(AggregatorConfig.self, yaml: "node: n\nrooms: []\n", overrides: o)
            Issue.record("loaded")
        } catch {
            #expect(error.messages == ["node.name: cannot set a key inside 'n'",
                                       "rooms[5].name: the list has only 0 elements",
                                       "a..b: not a config path"])
        }
    }
}
