@testable import Shared
@testable import RoomcastCLI

/// A command tree shaped like edge-agent's, for the CLI tests.
enum CLITestSpec {
    static let beacon = Option<[String]>("beacon", short: "b", value: "id", help: "Only report this beacon; may be repeated.")
    static let verbose = Flag("verbose", short: "v", help: "Log more; repeat for even more.")
    static let qos = Option<Int?>("qos", value: "n", help: "QoS level.", required: true)
    static let capture = Argument<String>("capture", help: "btsnoop file to replay.")
    static let file = Argument<String?>("file", help: "Config file to check.")
    static let topic = Argument<String>("topic", help: "Topic.")
    static let payloads = Argument<[String]>("payloads", help: "Payloads to publish.", optional: true)

    static let replay = CommandSpec(
        "replay", abstract: "Replay a btsnoop capture through the pipeline.",
        arguments: [capture],
        options: [StandardOptions.config, StandardOptions.speed, StandardOptions.json, beacon])

    static let agent = CommandSpec(
        "edge-agent", abstract: "Scans BLE advertisements and publishes beacon readings to MQTT.",
        version: "0.1.0",
        subcommands: [
            CommandSpec("run", abstract: "Scan and publish until stopped.",
                        options: [StandardOptions.config, StandardOptions.broker, StandardOptions.node,
                                  StandardOptions.source, StandardOptions.logLevel, StandardOptions.dryRun, verbose]),
            replay,
            CommandSpec("check-config", abstract: "Load the config, print every problem, and exit.",
                        arguments: [file]),
            CommandSpec("send", abstract: "Publish raw payloads.",
                        arguments: [topic, payloads],
                        options: [qos]),
        ],
        defaultSubcommand: "run")
}
