import Foundation
import RoomcastAdvertising
import RoomcastHCI
import RoomcastMQTT
import Shared
import RoomcastCLI
import RoomcastConfig
import RoomcastLifecycle
import RoomcastLogging
import RoomcastYAML

/// The `edge-agent` command line: its spec and what each subcommand does.
/// The executable only calls `EdgeAgentCLI.main()`.
public enum EdgeAgentCLI {
    static let speed = Option<String?>("speed", value: "speed",
                                       help: "Replay speed for btsnoop sources: realtime, max or a factor.", shownDefault: "realtime")
    static let dryRun = Flag("dry-run", help: "Print every message as JSONL on stdout instead of connecting to a broker.")
    static let record = Option<String?>("record", value: "file", help: "Also write what the radio delivers to a btsnoop file (btmon -r reads it).")
    static let recordLimit = Option<UInt64>("record-limit", value: "MB",
                                            help: "Past this size the --record file becomes <file>.1 (replacing the one before) and a new one begins.",
                                            default: 64)
    static let scanJSON = Flag("json", help: "Print one JSON reading per line instead of the table.")
    static let hex = Argument<String>("hex", help: "The bytes in hex (spaces and ':' allowed).")
    static let uuid = Option<String?>("uuid", value: "uuid", help: "Proximity UUID.", required: true)
    static let major = Option<UInt16>("major", value: "n", help: "Major, 0-65535.", default: 0)
    static let minor = Option<UInt16>("minor", value: "n", help: "Minor, 0-65535.", default: 0)
    static let power = Option<Int8>("power", value: "dBm", help: "Measured power at 1 m.", default: -59)
    static let interval = Option<Double>("interval-ms", value: "ms", help: "Advertising interval.", default: 100)
    static let bluetoothDir = Option<String>("bluetooth-dir", value: "dir", help: "BlueZ's pairing store.",
                                             default: BlueZPairingStore.defaultDirectory)
    static let write = Flag("write", help: "Add the keys to the --config file instead of printing them.")

    public static let spec = CommandSpec(
        "edge-agent",
        abstract: "Scan BLE beacons, range them and publish readings to MQTT.",
        version: RoomcastVersion.current,
        subcommands: [
            CommandSpec("run", abstract: "Run the agent (the default).",
                        options: [StandardOptions.config, StandardOptions.broker, StandardOptions.node, StandardOptions.source,
                                  speed, record, recordLimit, dryRun, StandardOptions.logLevel]) { command, _ in
                await agent(command, scan: false)
            },
            CommandSpec("scan", abstract: "Show the beacons in view, nearest first (the ranging table).",
                        options: [StandardOptions.config, StandardOptions.source, speed, scanJSON,
                                  StandardOptions.logLevel]) { command, _ in
                await agent(command, scan: true)
            },
            CommandSpec("decode", abstract: "Decode an HCI event, an advertising report or AD structures given in hex.",
                        arguments: [hex],
                        options: [StandardOptions.config]) { command, _ in decode(command) },
            CommandSpec("advertise", abstract: "Transmit as an iBeacon (non-connectable) until stopped.",
                        options: [uuid, major, minor, power, interval,
                                  StandardOptions.source, StandardOptions.logLevel]) { command, _ in await advertise(command) },
            CommandSpec("irks", abstract: "Identity resolving keys of phones and watches.",
                        subcommands: [
                            CommandSpec("import", abstract: "Print the IRKs of the devices paired with this computer (BlueZ) as agent.yaml irks entries.",
                                        discussion: "Pair the phone first (bluetoothctl; docs/fingerprints.md). BlueZ's pairing store is readable by root only: run with sudo. With --write the keys not yet in the --config file are added to its irks list; the old file is kept as <file>.bak.",
                                        options: [bluetoothDir, StandardOptions.config, write]) { command, _ in importIRKs(command) },
                        ]),
            checkSpec,
        ],
        defaultSubcommand: "run")

    /// Parses the command line, runs the command and exits with its code.
    public static func main() async -> Never {
        await CommandLineTool.main(spec)
    }

    static func fail(_ message: String, _ code: ExitCode) -> ExitCode {
        StandardStream.error.write("edge-agent: \(message)\n")
        return code
    }

    static func loadConfig(_ command: ParsedCommand, requireNode: Bool) throws(ConfigError) -> AgentConfig {
        var overrides = Overrides(command)
        if let path = command[StandardOptions.config] {
            return try ConfigLoader.load(AgentConfig.self, from: path, overrides: overrides)
        }
        if !requireNode && command[StandardOptions.node] == nil {
            overrides.set("node", to: ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "node",
                          from: "the host name")
        }
        return try ConfigLoader.fromOverrides(AgentConfig.self, overrides)
    }

    static func decode(_ command: ParsedCommand) -> ExitCode {
        let hex = command[Self.hex]
        do {
            let config = try command[StandardOptions.config].map { try ConfigLoader.load(AgentConfig.self, from: $0).advertising }
            let output = try DecodeCommand.decode(hex, config: config ?? AdvertisingConfig())
            StandardStream.output.write(try DecodeCommand.json(output) + "\n")
            return .success
        } catch let e as ConfigError {
            return fail("bad config:\n\(e)", .config)
        } catch {
            return fail("\(error)", .dataError)
        }
    }

    /// `irks import`: print the paired devices' keys, or merge them into the config file.
    static func importIRKs(_ command: ParsedCommand, output: (String) -> Void = { StandardStream.output.write($0) }) -> ExitCode {
        let contents: BlueZPairingStore.Contents
        do { contents = try BlueZPairingStore.read(directory: command[bluetoothDir]) } catch {
            return fail(error.description, .failure)
        }
        if !contents.withoutKey.isEmpty {
            StandardStream.error.write("edge-agent: skipped \(contents.withoutKey.count) paired device(s) without an identity resolving key: \(contents.withoutKey.joined(separator: ", "))\n")
        }
        if !contents.badKey.isEmpty {
            StandardStream.error.write("edge-agent: skipped \(contents.badKey.count) paired device(s) whose identity resolving key is not 32 hex digits (a damaged pairing store; pair them again): \(contents.badKey.joined(separator: ", "))\n")
        }
        if contents.devices.isEmpty {
            StandardStream.error.write("edge-agent: no paired device gave an identity resolving key; pair the phone first (docs/fingerprints.md)\n")
            if command[write] { return .success }
        }
        guard command[write] else {
            output(IRKImport.yaml(IRKImport.entries(contents.devices)))
            return .success
        }
        guard let path = command[StandardOptions.config] else { return fail("--write needs --config <file>: the agent.yaml to add the keys to", .usage) }
        let text: String
        let config: AgentConfig
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
            config = try ConfigLoader.load(AgentConfig.self, from: path)
        } catch let e as ConfigError {
            return fail("not changing \(path): it does not load:\n\(e)", .config)
        } catch {
            return fail("cannot read \(path): \(error.localizedDescription)", .config)
        }
        let (names, keys) = IRKImport.existing(config)
        let entries = IRKImport.entries(contents.devices, taken: names, existingKeys: keys)
        guard !entries.isEmpty else {
            StandardStream.error.write("edge-agent: \(path) already has every paired device's key; nothing to add\n")
            return .success
        }
        do {
            let merged = try IRKImport.merge(entries, into: text)
            let backup = try IRKImport.replace(path, with: merged)
            StandardStream.error.write("edge-agent: added \(entries.map(\.name).joined(separator: ", ")) to \(path) (previous version: \(backup)); restart the agent to use them\n")
            return .success
        } catch let e as IRKImport.MergeError {
            if let byHand = e.byHand { output(byHand) }
            return fail(e.description, .config)
        } catch {
            return fail("cannot write \(path): \((error as? SystemCallError)?.description ?? error.localizedDescription)", .failure)
        }
    }

    static func radioSpec(_ config: AgentConfig, _ command: ParsedCommand) throws(RadioError) -> RadioSourceSpec {
        var spec = config.source.radio
        if let text = command[speed] {
            guard case .btsnoop = spec else { throw .invalidSettings("--speed sets a btsnoop replay's pace; the source is \(spec)") }
            guard let speed = ReplaySpeed(text) else { throw .invalidSettings("--speed '\(text)': use realtime, max or a factor above 0") }
            spec = spec.with(speed: speed)
        }
        return spec
    }

    /// What `run` and `scan` build from the command line before the radio starts.
    struct Prepared {
        var config: AgentConfig
        var logger: Logger
        var decoder: AdvertisementDecoder
        var spec: RadioSourceSpec
        var options: RadioOptions
    }

    /// A reason `prepare` gave up: the message and the exit code.
    struct Refusal: Error {
        var message: String
        var code: ExitCode
    }

    static func prepare(_ command: ParsedCommand, scan: Bool) throws(Refusal) -> Prepared {
        let config: AgentConfig
        do { config = try loadConfig(command, requireNode: !scan) } catch { throw Refusal(message: "bad config:\n\(error)", code: .config) }
        // The scan table owns the terminal: only warnings and worse on stderr there.
        var logger = Logger(label: "edge-agent", level: scan && !command[scanJSON] ? max(config.log.level, .warning) : config.log.level)
        logger[metadataKey: "node"] = config.node
        let decoder: AdvertisementDecoder
        do { decoder = try AdvertisementDecoder(config: config.advertising) } catch {
            throw Refusal(message: "bad config:\n\(error)", code: .config)
        }
        let spec: RadioSourceSpec
        var options: RadioOptions
        do {
            spec = try radioSpec(config, command)
            options = try config.radioOptions(record: command[record])
            if options.recordPath != nil {
                let megabytes = try command[recordLimit]
                guard megabytes >= 1, megabytes <= 1_000_000 else { throw command.usageError("--record-limit must be 1…1000000 (MB)") }
                options.recordFileLimit = megabytes * 1_000_000
            }
        } catch let e as ConfigError { throw Refusal(message: "bad config:\n\(e)", code: .config) }
        catch { throw Refusal(message: "\(error)", code: .usage) }
        // A scan is a look at the radio: a radio that cannot be opened (an adapter missing, down
        // or blocked; a UART controller that does not answer) is said at once, with what to do,
        // and the scan ends; run it again. Waiting for it as the service does, its warning was
        // wiped by the table's first redraw, leaving "no beacons in view".
        if scan { options.waitForAdapter = false }
        return Prepared(config: config, logger: logger, decoder: decoder, spec: spec, options: options)
    }

    /// Why an in-process `edge-agent` run failed: the message the binary would print, and its exit code.
    public struct RunFailure: Error, CustomStringConvertible, ExitCodeProviding {
        public var message: String
        public var code: ExitCode
        public var description: String { "edge-agent: \(message) (exit \(code.rawValue))" }
        /// A tool that runs the agent in process (`roomcast-sim score`) ends as the binary would.
        public var exitCode: ExitCode { code }
    }

    /// `edge-agent <arguments>` with `--dry-run`, in this process: the same config loading,
    /// radio source and service as the binary, with the JSONL it would print on stdout handed
    /// to `write` instead. For replays (`--source btsnoop:FILE --speed max`), which end on
    /// their own; evaluations run every node's capture this way (docs/simulator.md).
    public static func dryRun(arguments: [String], logLevel: Logger.Level = .warning,
                              write: @escaping @Sendable (Data) -> Void) async throws(RunFailure) -> AgentCore.Stats {
        let command: ParsedCommand
        do {
            guard case .run(let c) = try spec.parse(arguments) else {
                throw RunFailure(message: "\(arguments) asks for help or the version", code: .usage)
            }
            command = c
        } catch let e as UsageError { throw RunFailure(message: e.description, code: .usage) }
        catch let e as RunFailure { throw e }
        catch { throw RunFailure(message: "\(error)", code: .usage) }
        guard command.command == "run", command[dryRun] else {
            throw RunFailure(message: "only `run --dry-run` runs in process", code: .usage)
        }
        var prepared: Prepared
        do { prepared = try prepare(command, scan: false) } catch { throw RunFailure(message: error.message, code: error.code) }
        prepared.logger.logLevel = max(prepared.logger.logLevel, logLevel)
        let source = RadioSourceFactory.make(prepared.spec, options: prepared.options, logger: prepared.logger)
        let service = EdgeAgentService(settings: prepared.config.agentSettings, decoder: prepared.decoder, source: source,
                                       sink: DryRunSink(write: write), mqtt: nil, logger: prepared.logger)
        do { return try await service.run() } catch {
            throw RunFailure(message: error.description, code: AgentStartError(error: error, isReplay: prepared.spec.isReplay).exitCode)
        }
    }

    static func agent(_ command: ParsedCommand, scan: Bool) async -> ExitCode {
        let prepared: Prepared
        do { prepared = try prepare(command, scan: scan) } catch { return fail(error.message, error.code) }
        let (config, logger, decoder, spec, options) = (prepared.config, prepared.logger, prepared.decoder, prepared.spec,
                                                        prepared.options)
        logger.info("effective config", metadata: ["config": ConfigLoader.describe(config)])

        // `scan` opens no listener: a token it would never use (its variable not passed by sudo) is no problem.
        if !scan, let problem = config.http.tokenProblem() { return fail("bad config:\n\(ConfigError(problems: [problem]))", .config) }
        let source = RadioSourceFactory.make(spec, options: options, logger: logger)
        let sink: any AgentSink
        var mqtt: MQTTClient?
        let json = command[scanJSON]
        let scanView = scan ? ScanView(json: json, topics: config.agentSettings.topics) : nil
        if let scanView {
            sink = scanView
        } else if command[dryRun] {
            sink = DryRunSink()
        } else {
            do {
                let settings = config.agentSettings
                let will = OutboundMessage(topic: settings.topics.nodeStatus(config.node), text: "offline", retain: true, qos: 1)
                let client = try MQTTClient(configuration: try config.mqtt.clientConfiguration(clientID: "roomcast-\(config.node)", will: will),
                                            logger: logger, refusalFamily: DeliveryCheck.family(of:))
                mqtt = client
                sink = MQTTSink(client: client, logger: logger)
            } catch let e as ConfigError { return fail("bad config:\n\(e)", .config) }
            catch { return fail("\(error)", .config) }
        }
        var onTick: (@Sendable (ScanTable, Double) -> Void)?
        if let scanView { onTick = { table, now in scanView.render(table, now: now) } }
        let serviceLogger = scan && !json ? Logger(label: "edge-agent", level: .error) : logger
        // A capture replayed in real time to a broker stands in for a live node: its clock is shifted to now.
        let rebase: Bool = { if case .btsnoop(_, .max) = spec { false } else { mqtt != nil } }()
        let service = EdgeAgentService(settings: config.agentSettings, decoder: decoder, source: source, sink: sink, mqtt: mqtt,
                                       logger: serviceLogger, rebaseReplayToNow: rebase, http: scan ? nil : config.http,
                                       onTick: onTick)
        let lifecycle = ServiceLifecycle(logger: logger)
        lifecycle.onShutdown("stop the radio") { await service.stop() }
        let isReplay = spec.isReplay
        return await lifecycle.run {
            do {
                _ = try await service.run()
            } catch let error as RadioError {
                throw AgentStartError(error: error, isReplay: isReplay)
            }
        }
    }

    static func advertise(_ command: ParsedCommand) async -> ExitCode {
        guard let uuid = command[Self.uuid] else { return fail("missing --uuid", .usage) }
        let major: UInt16, minor: UInt16, power: Int8, interval: Double
        do {
            major = try command[Self.major]
            minor = try command[Self.minor]
            power = try command[Self.power]
            interval = try command[Self.interval]
        } catch { return fail(error.description, .usage) }
        guard let data = IBeaconAdvertisement.encode(uuidString: uuid, major: major, minor: minor, power: power) else {
            return fail("--uuid '\(uuid)' is not a UUID", .usage)
        }
        guard (20...10240).contains(interval) else { return fail("--interval-ms must be 20...10240", .usage) }
        guard Beacon.plausibleReferencePower.contains(Int(power)) else {
            return fail("--power must be -127...-1 dBm: the level at 1 m receivers range by, not the transmit power", .usage)
        }
        let levelName = command[StandardOptions.logLevel] ?? "info"
        guard let level = Logger.Level(name: levelName) else {
            let names = Logger.Level.allCases.map(\.description)
            var message = "--log-level '\(ConfigNode.excerpt(levelName))' is not one of \(names.joined(separator: ", "))"
            if let guess = Suggestion.closest(to: levelName, in: names) { message += "; did you mean '\(guess)'?" }
            return fail(message, .usage)
        }
        let logger = Logger(label: "edge-agent", level: level)
        let spec: RadioSourceSpec
        do { spec = try RadioSourceSpec.parse(command[StandardOptions.source] ?? "hci") } catch { return fail("\(error)", .usage) }
        if spec.isReplay { return fail("advertise needs a radio (hci or h4), not a capture: '\(spec)' transmits nothing", .usage) }
        var options = RadioOptions()
        options.advertise = AdvertisingSettings(data: data, interval: interval / 1000)
        options.advertisingRequired = true
        let source = RadioSourceFactory.make(spec, options: options, logger: logger)
        let lifecycle = ServiceLifecycle(logger: logger)
        lifecycle.onShutdown("stop advertising") { await source.shutdown() }
        return await lifecycle.run {
            try await advertise(on: source) {
                logger.notice("advertising", metadata: ["ibeacon.uuid": uuid.lowercased(), "ibeacon.major": "\(major)",
                                                        "ibeacon.minor": "\(minor)", "ibeacon.power": "\(power)"])
            }
        }
    }

    /// Starts `source` and keeps the controller open (advertising, and scanning) until stopped;
    /// `started` says so. A radio that gives up ends the run with its error: a clean end would
    /// tell systemd not to restart a beacon that no longer transmits.
    static func advertise(on source: any RadioSource, started: () -> Void) async throws {
        do throws(RadioError) { try await source.start() } catch { throw AgentStartError(error: error, isReplay: false) }
        started()
        for await _ in source.reports {}
        if let error = source.terminationError { throw error }
    }
}

/// The radio could not start; a replay file that cannot be read is bad input data (65). A
/// radio source, settings or `--record` file that cannot be used is the config's fault (78), and
/// a missing capability (CAP_NET_RAW) a permission not given (77): the unit's
/// `RestartPreventExitStatus` starts neither again (each start would fail alike, every 5 s, each
/// with its config logged). An adapter absent, busy or not yet given to the service's group (udev
/// after a USB reset) may come right: the service waits for it; a failure otherwise (1).
struct AgentStartError: Error, CustomStringConvertible, ExitCodeProviding {
    let error: RadioError
    let isReplay: Bool
    var description: String { error.description }
    var exitCode: ExitCode {
        if isReplay { return .dataError }
        switch error {
        case .invalidSource, .invalidSettings, .capture, .readOnly: return .config
        case .permissionDenied where !error.isTransient: return .noPermission
        default: return .failure
        }
    }
}
