@testable import Shared

/// A command tree shaped like edge-agent's, for the CLI tests.
enum CLITestSpec {
    static let replay = CommandSpec(
        "replay", abstract: "Replay a btsnoop capture through the pipeline.",
        arguments: [ArgumentSpec("capture", help: "btsnoop file to replay.")],
        options: [StandardOptions.config, StandardOptions.speed, StandardOptions.json,
                  .option("beacon", short: "b", value: "id", help: "Only report this beacon; may be repeated.", repeating: true)])

    static let agent = CommandSpec(
        "edge-agent", abstract: "Scans BLE advertisements and publishes beacon readings to MQTT.",
        version: "0.1.0",
        subcommands: [
            CommandSpec("run", abstract: "Scan and publish until stopped.",
                        options: [StandardOptions.config, StandardOptions.broker, StandardOptions.node,
                                  StandardOptions.source, StandardOptions.logLevel, StandardOptions.dryRun,
                                  .flag("verbose", short: "v", help: "Log more; repeat for even more.")]),
            replay,
            CommandSpec("check-config", abstract: "Load the config, print every problem, and exit.",
                        arguments: [ArgumentSpec("file", help: "Config file to check.", optional: true)]),
            CommandSpec("send", abstract: "Publish raw payloads.",
                        arguments: [ArgumentSpec("topic", help: "Topic."),
                                    ArgumentSpec("payloads", help: "Payloads to publish.", optional: true, repeating: true)],
                        options: [.option("qos", value: "n", help: "QoS level.", required: true)]),
        ],
        defaultSubcommand: "run")
}
