/// Options the Roomcast executables share, so their spelling, help and config paths agree.
public enum StandardOptions {
    public static let config = Option<String?>("config", short: "c", value: "file", help: "Config file (YAML or JSON).")
    public static let broker = Option<String?>("broker", value: "url", help: "MQTT broker, mqtt[s]://[user@]host[:port]; overrides mqtt.broker.")
        .overriding("mqtt.broker")
    public static let node = Option<String?>("node", value: "name", help: "This node's name; overrides node.")
        .overriding("node")
    public static let source = Option<String?>("source", value: "src", help: "BLE source: hci, hci:<dev>, h4:<tty> or btsnoop:<file>; overrides source.")
        .overriding("source")
    public static let speed = Option<Double>("speed", value: "x", help: "Replay speed factor (0 = as fast as possible).", default: 1)
    public static let logLevel = Option<String?>("log-level", value: "level", help: "trace, debug, info, notice, warning, error or critical; overrides log.level.")
        .overriding("log.level")
    public static let dryRun = Flag("dry-run", help: "Do everything except publish to MQTT.")
    public static let json = Flag("json", help: "Print machine-readable JSON.")
}
