import RoomcastCLI
import Shared

extension AggregatorCLI {
    /// `aggregator check`: the config read and checked as `run` reads it, nothing connected. What
    /// lies outside the file (the environment variables of the password and the HTTP token, TLS
    /// files, the broker) is `run`'s to check at its start: a package upgrade runs this without
    /// the service's environment.
    static let checkSpec = CommandSpec(
        "check", abstract: "Check the config file as run reads it, without connecting; print what it describes.",
        discussion: """
            Every problem is printed with its path, and the exit code is 78, as run's would be. \
            The package runs this before it restarts a running aggregator on an upgrade, and leaves \
            the service running as it was when the config does not pass. The broker, the environment \
            variables of its password and HTTP token, and TLS files are checked by run when it starts.
            """,
        options: [StandardOptions.config, StandardOptions.broker]) { command, _ in
            await withConfig(command) { config, _ in
                StandardStream.output.write(checkSummary(config) + "\n")
                return .success
            }
        }

    /// One line on what the config describes, with no secret in it (the broker by its redacted URL).
    static func checkSummary(_ config: AggregatorConfig) -> String {
        func count(_ n: Int, _ noun: String, _ plural: String? = nil) -> String { "\(n) \(n == 1 ? noun : plural ?? noun + "s")" }
        var parts = [
            [count(config.rooms.count, "room"), count(config.nodes.count, "node"), count(config.beacons.count, "beacon"),
             count(config.people.count, "person", "people")].joined(separator: ", "),
            "broker \(config.mqtt.broker.redacted)",
            config.discovery.enabled ? "Home Assistant discovery (\(config.discovery.mode.rawValue) mode)" : "no Home Assistant discovery",
        ]
        if let partition = config.partitionName { parts.append("partition \(partition)") }
        if config.standby.enabled { parts.append("hot standby") }
        return "config ok: " + parts.joined(separator: "; ")
    }
}
