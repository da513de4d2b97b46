import RoomcastAdvertising
import RoomcastCLI
import Shared

extension EdgeAgentCLI {
    /// `edge-agent check`: the config read and checked as `run` reads it (the node required, the
    /// advertising decoder built from it), nothing opened. The radio, the broker, the environment
    /// variables of its password and HTTP token, and TLS files are `run`'s to check at its start.
    static let checkSpec = CommandSpec(
        "check", abstract: "Check the config file as run reads it, without the radio or the broker; print what it describes.",
        discussion: """
            Every problem is printed with its path, and the exit code is 78, as run's would be. \
            The package runs this before it restarts a running agent on an upgrade, and leaves the \
            service running as it was when the config does not pass.
            """,
        options: [StandardOptions.config, StandardOptions.broker, StandardOptions.node, StandardOptions.source]) { command, _ in
            let config: AgentConfig
            do {
                config = try loadConfig(command, requireNode: true)
                _ = try AdvertisementDecoder(config: config.advertising)
            } catch {
                return fail("bad config:\n\(error)", .config)
            }
            StandardStream.output.write(checkSummary(config) + "\n")
            return .success
        }

    /// One line on what the config describes, with no secret in it (the broker by its redacted
    /// URL, the IRKs counted).
    static func checkSummary(_ config: AgentConfig) -> String {
        func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
        let node = "node \(config.node)" + (config.room.map { " in room \($0)" } ?? "")
        return "config ok: " + [node, "broker \(config.mqtt.broker.redacted)", "source \(config.source)",
                                [count(config.beacons.count, "beacon"), count(config.irks.count, "IRK"),
                                 count(config.regions.count, "region")].joined(separator: ", ")].joined(separator: "; ")
    }
}
