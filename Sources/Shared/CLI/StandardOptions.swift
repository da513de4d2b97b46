/// Options the Roomcast executables share, so their spelling and help agree.
public enum StandardOptions {
    public static let config = OptionSpec.option("config", short: "c", value: "file", help: "Config file (YAML or JSON).")
    public static let broker = OptionSpec.option("broker", value: "url", help: "MQTT broker, mqtt[s]://[user@]host[:port]; overrides mqtt.broker.")
    public static let node = OptionSpec.option("node", value: "name", help: "This node's name; overrides node.")
    public static let source = OptionSpec.option("source", value: "src", help: "BLE source: hci, hci:<dev>, h4:<tty> or btsnoop:<file>; overrides source.")
    public static let speed = OptionSpec.option("speed", value: "x", help: "Replay speed factor (0 = as fast as possible).", default: "1")
    public static let logLevel = OptionSpec.option("log-level", value: "level", help: "trace, debug, info, notice, warning, error or critical; overrides log.level.")
    public static let dryRun = OptionSpec.flag("dry-run", help: "Do everything except publish to MQTT.")
    public static let json = OptionSpec.flag("json", help: "Print machine-readable JSON.")

    /// Which option overrides which config path (`Overrides(command, paths: StandardOptions.overridePaths)`).
    public static let overridePaths: [String: String] = [
        "broker": "mqtt.broker",
        "node": "node",
        "source": "source",
        "log-level": "log.level",
    ]
}
