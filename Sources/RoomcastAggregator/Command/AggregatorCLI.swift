import Foundation
import Synchronization
import RoomcastFusion
import RoomcastHTTP
import RoomcastMQTT
import Shared
import RoomcastCLI
import RoomcastConfig
import RoomcastLifecycle
import RoomcastLogging
import RoomcastYAML

/// The `aggregator` command line: its spec and what each subcommand does.
/// The executable only calls `AggregatorCLI.main()`.
public enum AggregatorCLI {
    /// `aggregator run`'s own options.
    enum RunOptions {
        static let instance = Option<String?>("instance", value: "name", help: "This instance's name for hot standby.",
                                              shownDefault: "the host name")
        static let http = Option<String?>("http", value: "host:port",
                                          help: "Serve the dashboard, /metrics and /healthz here (e.g. \(HTTPConfig.suggestedListen)).")
            .overriding("http.listen")
    }

    /// `aggregator replay`'s own options and arguments.
    enum ReplayOptions {
        static let inputs = Argument<[String]>("input", help: "JSONL files as edge-agent --dry-run writes them.")
        static let learned = Option<String?>("learned", value: "file", help: "Start from the learned rooms in this state file.")
        static let saveLearned = Option<String?>("save-learned", value: "file", help: "Write the learned rooms here at the end.")
    }

    public static let spec = CommandSpec(
        "aggregator",
        abstract: "Fuse the readings of every node into one room per beacon and publish presence.",
        version: RoomcastVersion.current,
        subcommands: [
            CommandSpec("run", abstract: "Run the live service against a broker (the default).",
                        options: [StandardOptions.config, StandardOptions.broker, StandardOptions.logLevel,
                                  RunOptions.instance, RunOptions.http]) { command, _ in
                await withConfig(command) { await live(command, config: $0, logger: $1) }
            },
            CommandSpec("replay", abstract: "Run the engine over JSONL message logs on a virtual clock; print what it would publish.",
                        arguments: [ReplayOptions.inputs],
                        options: [StandardOptions.config, StandardOptions.logLevel,
                                  ReplayOptions.learned, ReplayOptions.saveLearned]) { command, _ in
                await withConfig(command) { replay(command, config: $0, logger: $1) }
            },
            CommandSpec("watch", abstract: "Show who is in which room, live, from the retained presence topics.",
                        options: [StandardOptions.config, StandardOptions.broker, StandardOptions.logLevel]) { command, _ in
                await withConfig(command) { await watch(config: $0, logger: $1) }
            },
            CommandSpec("calibrate", abstract: "Suggest a node's rx_adjust from a beacon held 1 m from it.",
                        discussion: """
                            Carry one beacon slowly round the node at 1 m, at the node's height, while \
                            this listens; then the next node, with the same beacon. It prints the \
                            rx_adjust that makes the node read what the beacon's 1 m power predicts. \
                            Worth it for a receiver of another kind (an external antenna, another \
                            adapter), which reads many dB off the others. Between receivers of one kind \
                            the spots round a node differ about as much; teaching the rooms (learn) \
                            gains more there.
                            """,
                        options: [StandardOptions.config, StandardOptions.broker, StandardOptions.logLevel,
                                  CalibrateOptions.node, CalibrateOptions.beacon, CalibrateOptions.seconds,
                                  CalibrateOptions.distance]) { command, _ in
                await withConfig(command) { await calibrate(command, config: $0, logger: $1) }
            },
            CommandSpec("learn", abstract: "Teach the aggregator a room: what every node hears of a beacon carried there.",
                        discussion: """
                            With --room and --beacon, carry the beacon round the room (at the height \
                            you carry it every day) while the running aggregator records what each node \
                            hears; it keeps what it learned in its state file. --show prints what was \
                            learned; --forget drops a room. Talks to the aggregator over the broker \
                            (<prefix>/aggregator/learn), so it works from any machine with access.
                            """,
                        options: [StandardOptions.config, StandardOptions.broker, StandardOptions.logLevel,
                                  LearnOptions.room, LearnOptions.beacon, LearnOptions.seconds, LearnOptions.cancel,
                                  LearnOptions.forget, LearnOptions.show, LearnOptions.file]) { command, _ in
                await withConfig(command) { await learn(command, config: $0, logger: $1) }
            },
            checkSpec,
        ],
        defaultSubcommand: "run")

    public static func main() async -> Never {
        await CommandLineTool.main(spec)
    }

    /// Loads the config every subcommand starts from (the file, or the options alone; the
    /// options override it), then runs `body` with it and a logger at its level.
    static func withConfig(_ command: ParsedCommand,
                           _ body: (AggregatorConfig, Logger) async -> ExitCode) async -> ExitCode {
        let config: AggregatorConfig
        do {
            let overrides = Overrides(command)
            if let path = command[StandardOptions.config] {
                config = try ConfigLoader.load(AggregatorConfig.self, from: path, overrides: overrides)
            } else {
                config = try ConfigLoader.fromOverrides(AggregatorConfig.self, overrides)
            }
        } catch {
            return fail("bad config:\n\(error)", .config)
        }
        return await body(config, Logger(label: "aggregator", level: config.log.level))
    }

    static func fail(_ message: String, _ code: ExitCode) -> ExitCode {
        StandardStream.error.write("aggregator: \(message)\n")
        return code
    }

    static func replay(_ command: ParsedCommand, config: AggregatorConfig, logger: Logger) -> ExitCode {
        let inputs = command[ReplayOptions.inputs]
        guard !inputs.isEmpty else { return fail("give at least one input file", .usage) }
        var report = ReplayRunner.Report()
        let lines: [MessageLogLine]
        do { lines = try ReplayRunner.mergedInputs(paths: inputs, report: &report) } catch {
            return fail("cannot read input: \(error)", .dataError)
        }
        if lines.isEmpty {
            // Nothing to replay: a wrong or empty file, not a run where nothing happened (an
            // agent's dry run writes its status line at least).
            let first = report.badLines.first.map { ", first: \($0)" } ?? ""
            return fail("no line of the input could be read (\(report.badLineCount) bad of \(report.linesRead))\(first)", .dataError)
        }
        var core = config.makeCore()
        if let file = command[ReplayOptions.learned] {
            do {
                guard let learned = try LearnedRoomsStore(path: file).load() else { return fail("\(file): no such file", .dataError) }
                core.restoreLearned(learned)
            } catch {
                return fail("\(error)", .dataError)
            }
        } else if let file = config.learn.resolvedStateFile(environment: ProcessInfo.processInfo.environment) {
            // The live aggregator starts from it: a replay that did not would place beacons
            // otherwise, and the difference would look like the recording's.
            logger.notice("replay starts from no learned rooms: the state file the config names is not read", metadata: [
                "learn.state_file": file,
                "hint": "give --learned " + (ShellWord.quotedForLog(file) ?? "with the path of learn.state_file") + " to start from what the live aggregator learned"])
        }
        var buffer = ""
        do {
            try ReplayRunner.run(core: &core, inputs: lines, report: &report) { line in
                buffer += line.encoded()
                buffer += "\n"
                if buffer.utf8.count > 64 * 1024 { StandardStream.output.write(buffer); buffer = "" }
            }
        } catch {
            return fail("\(error)", .failure)
        }
        StandardStream.output.write(buffer)
        if let file = command[ReplayOptions.saveLearned] {
            do { try LearnedRoomsStore(path: file).save(core.learnedRooms) } catch { return fail("\(error)", .failure) }
        }
        for bad in report.badLines.prefix(10) { logger.warning("skipped a bad input line", metadata: ["line": bad]) }
        for gap in report.longGaps {
            logger.warning("more than a day between two input lines: a line stamped before its Pi's clock was set starts the replay early",
                           metadata: ["gap": gap])
        }
        if report.deafGapCount > 0 {
            logger.warning("the recording heard nothing at all for a while, though its nodes send heartbeats: replayed as the aggregator's own deafness, as live",
                           metadata: ["gaps": "\(report.deafGapCount)", "first": report.deafGaps.prefix(3).joined(separator: "; ")])
        }
        if report.retainedLearnRefused > 0 {
            logger.warning("ignored retained learn commands, as the aggregator does live; learn commands are published without the retain flag",
                           metadata: ["count": "\(report.retainedLearnRefused)"])
        }
        logger.info("replay done", metadata: ["lines": "\(report.linesRead)", "bad_lines": "\(report.badLineCount)",
                                              "rejected": "\(report.rejected.values.reduce(0, +))", "published": "\(report.published)"])
        return .success
    }

    /// The main connection's client id: `mqtt.client_id`, or one derived from the instance. Under
    /// hot standby the instances of a site share a config, and one id would make them evict each
    /// other from the broker (each connection firing the other's will): each adds its name.
    static func clientID(_ config: AggregatorConfig, instance: String) -> String {
        guard let id = config.mqtt.clientID else { return "roomcast-aggregator-\(instance)" }
        return config.standby.enabled ? "\(id)-\(instance)" : id
    }

    static func live(_ command: ParsedCommand, config: AggregatorConfig, logger: Logger) async -> ExitCode {
        let topics = config.mqtt.topics
        let instance = command[RunOptions.instance] ?? ProcessInfo.processInfo.hostName
        // The name is a level of its liveness topic and part of its client id.
        if let problem = TopicName.problem(with: instance) {
            return fail("--instance '\(ConfigNode.excerpt(instance))' \(problem) (it names the instance's topic)", .usage)
        }
        let election = config.standby.enabled
            ? LeaseElection(me: instance, topics: topics, duration: config.standby.leaseS, scope: config.partitionName,
                            configDigest: config.decisionDigest) : nil
        // Under hot standby the Last Will marks this instance offline (a standby then takes the lease
        // at once), and the site status is left to the status guard, a second connection that only
        // the last live instance keeps; without standby the will marks the aggregator offline.
        let siteOffline = OutboundMessage(topic: topics.aggregatorStatus, text: "offline", retain: true, qos: 1)
        let will = election.map { OutboundMessage(topic: topics.aggregatorInstance($0.me), text: "offline", retain: true, qos: 1) }
            ?? siteOffline
        let client: MQTTClient
        let guardConfiguration: MQTTClientConfiguration?
        do {
            let id = clientID(config, instance: instance)
            var configuration = try config.mqtt.clientConfiguration(clientID: id, will: will)
            configuration.clientID = id  // a configured id too, which gets the instance under standby
            configuration.inboundBufferSize = Self.inboundBuffer
            configuration.batchInbound = true
            client = try MQTTClient(configuration: configuration, logger: logger)
            var guardConfig = try config.mqtt.clientConfiguration(clientID: "roomcast-aggregator-\(instance)-guard", will: siteOffline)
            // Its own client id even when the config names one: a second connection with the same id would evict the first.
            guardConfig.clientID = configuration.clientID + "-guard"
            // And its own account: a broker that ties client ids to usernames (deploy/mosquitto sets
            // use_username_as_clientid) gives each account one connection, so under one account the
            // guard and the main connection would evict each other and fire their wills.
            guardConfig.username = config.standby.guardUsername(mainUsername: configuration.username)
            guardConfig.inboundBufferSize = 16
            guardConfiguration = election == nil ? nil : guardConfig
            if let problem = config.http.tokenProblem() { throw ConfigError(problems: [problem]) }
        } catch let e as ConfigError { return fail("bad config:\n\(e)", .config) }
        catch { return fail("\(error)", .config) }
        var statusGuard: (@Sendable () throws -> MQTTClient)?
        if let guardConfiguration {
            statusGuard = { [logger] () throws -> MQTTClient in try MQTTClient(configuration: guardConfiguration, logger: logger) }
        }
        logger.info("effective config", metadata: ["config": ConfigLoader.describe(config)])
        let clock = SystemTimeSource()
        let core = config.makeCore()
        logger.info("fusion", metadata: ["mode": "\(core.engine.modeSummary)"])
        let stateFile = config.learn.resolvedStateFile(environment: ProcessInfo.processInfo.environment)
        if stateFile == nil {
            logger.notice("no learn.state_file: rooms taught with aggregator learn last until the aggregator stops")
        }
        let runtime = AggregatorRuntime(core: core, election: election,
                                        refreshInterval: config.output.refreshIntervalS > 0 ? config.output.refreshIntervalS : .infinity,
                                        startedAt: clock.now(), learnedStore: stateFile.map(LearnedRoomsStore.init(path:)),
                                        logger: logger)
        let http = HTTPServer.Configuration(config.http).map { server in
            AggregatorHTTP(configuration: server, config: config.http, readers: .init(
                snapshot: { await runtime.dashboardSnapshot(now: clock.now(), connected: client.isConnected) },
                metrics: {
                    var sample = await runtime.metricsSample(now: clock.now())
                    sample.mqttConnected = client.isConnected
                    sample.mqttReconnects = client.reconnects
                    sample.mqttDroppedInbound = client.droppedInbound
                    sample.mqttReceived = client.receivedInbound
                    sample.mqttPublishFailures = client.publishFailures
                    return sample
                }), logger: logger)
        }
        if let http {
            // Presence goes on while the dashboard's port is taken (the run before still closing,
            // another service): the listen is tried again, not the whole aggregator restarted.
            do { try http.server.startOrKeepTrying() } catch { return fail("\(error)", .failure) }
            if config.http.exposesReads() {
                logger.warning("the dashboard and /metrics are readable from the network without a token",
                               metadata: ["http.listen": config.http.listen ?? "", "hint": "\(HTTPConfig.exposureHint)"])
            }
        }
        let service = AggregatorService(runtime: runtime, mqtt: client, topics: topics,
                                        // Read with discovery off too: this site's configs left on the broker are cleared.
                                        discoveryFilter: HomeAssistantDiscovery.configFilter(prefix: config.discovery.prefix),
                                        extraFilters: config.inputs.espresense ? ESPresenseInput.filters : [],
                                        clock: clock, statusGuard: statusGuard, http: http, logger: logger)
        let lifecycle = ServiceLifecycle(logger: logger)
        lifecycle.onShutdown("stop the aggregator") { service.stop() }
        return await lifecycle.run { await service.run() }
    }

    /// Inbound messages buffered between the MQTT thread and fusion. A restart of a big site
    /// receives every retained presence and discovery config at once (3 per beacon: 30 000 for
    /// 10 000 beacons) plus the readings; the client's default of 1024 would drop most of them.
    public static let inboundBuffer = 65_536

    /// A client of the site's broker for a command that only listens (`watch`, `calibrate`):
    /// its own client id, no will, and nothing below `quietest` logged. Nil when the config's
    /// MQTT settings cannot work, after saying why (the command then exits with `.config`).
    static func listeningClient(_ config: AggregatorConfig, command: String, logger: Logger,
                                quietest: Logger.Level) -> MQTTClient? {
        do {
            return try MQTTClient(configuration: try config.mqtt.clientConfiguration(
                clientID: "roomcast-\(command)-\(ProcessInfo.processInfo.processIdentifier)", will: nil),
                                  logger: Logger(label: "aggregator", level: max(logger.logLevel, quietest)))
        } catch let e as ConfigError { _ = fail("bad config:\n\(e)", .config) }
        catch { _ = fail("\(error)", .config) }
        return nil
    }

    static func watch(config: AggregatorConfig, logger: Logger) async -> ExitCode {
        let topics = config.mqtt.topics
        // The board owns the terminal: only errors on stderr, and a broker that cannot
        // be reached at the start is an error, not a board redrawn over the reason every second.
        guard let client = listeningClient(config, command: "watch", logger: logger, quietest: .error) else { return .config }
        client.start()
        do { try await client.waitUntilConnected(timeout: .seconds(10)) } catch {
            await client.shutdown()
            return fail("cannot reach the broker at \(config.mqtt.broker.redacted): \(error)", .failure)
        }
        let lifecycle = ServiceLifecycle(logger: Logger(label: "aggregator", level: .warning))
        lifecycle.onShutdown("disconnect") { await client.shutdown() }
        return await lifecycle.run {
            // Refused (an account the broker's ACL does not let read them): the board would
            // stay empty for good, so the refusal ends the command.
            try await client.subscribe(topics.allPresence)
            try await client.subscribe(topics.allRooms)
            let board = Mutex(PresenceBoard(limit: config.fusion.maxBeacons))
            let reader = Task {
                for await m in client.messages { board.withLock { $0.take(topic: m.topic, payload: m.payload, topics: topics) } }
            }
            defer { reader.cancel() }
            var last = ""
            while !lifecycle.isShuttingDown {
                let status = client.isConnected ? "connected to \(config.mqtt.broker.redacted)" : "waiting for \(config.mqtt.broker.redacted)"
                let frame = "Roomcast — \(status)   \(Date().formatted(date: .omitted, time: .standard))\n\n"
                    + board.withLock { $0.render(now: Date().timeIntervalSince1970) }
                if frame != last { StandardStream.output.write(TerminalScreen.clear + frame); last = frame }
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
