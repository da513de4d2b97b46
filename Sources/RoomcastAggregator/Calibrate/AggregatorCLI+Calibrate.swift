import Foundation
import Synchronization
import RoomcastMQTT
import Shared
import RoomcastCLI
import RoomcastLogging

extension AggregatorCLI {
    /// `aggregator calibrate`'s own options.
    enum CalibrateOptions {
        static let node = Option<String?>("node", value: "name", help: "The node the beacon is held by.")
        static let beacon = Option<String?>("beacon", value: "id", help: "The beacon held (default: the one the node hears loudest).")
        static let seconds = Option<Double>("seconds", value: "s", help: "How long to listen.", default: 30)
        static let distance = Option<Double>("distance", value: "m", help: "How far the beacon is from the node.", default: 1)
    }

    /// `aggregator calibrate`: listens to one node's readings for `--seconds`, then prints the
    /// `rx_adjust` that `RxAdjustCalibrator` suggests (or why it cannot). Progress goes to
    /// stderr, the result to stdout.
    static func calibrate(_ command: ParsedCommand, config: AggregatorConfig, logger: Logger) async -> ExitCode {
        let node: String, beacon: BeaconID?, seconds: Double, distance: Double
        do {
            guard let name = command[CalibrateOptions.node] else { throw command.usageError("name the node with --node") }
            if let problem = TopicName.problem(with: name) { throw command.usageError("node name \(problem)") }
            node = name
            beacon = try command[CalibrateOptions.beacon].map { text throws(UsageError) in
                guard let id = BeaconID(text) else { throw command.usageError("'\(text)' is not a beacon id (e.g. ibeacon:<uuid>-<major>-<minor>)") }
                return id
            }
            seconds = try command[CalibrateOptions.seconds]
            distance = try command[CalibrateOptions.distance]
            guard seconds > 0, seconds <= 3600 else { throw command.usageError("--seconds must be above 0 and at most 3600") }
            guard distance >= 0.1, distance <= 10 else { throw command.usageError("--distance must be 0.1–10 m") }
        } catch {
            return fail("\(error)", .usage)
        }
        if !config.nodes.isEmpty && !config.nodes.contains(where: { $0.name == node }) {
            return fail("node '\(node)' is not in the config; its nodes are \(config.nodes.map(\.name).joined(separator: ", "))", .usage)
        }

        let topics = config.mqtt.topics
        // Retries are not news here: a broker still unreachable after 10 s is reported once.
        guard let client = listeningClient(config, command: "calibrate", logger: logger, quietest: .error) else { return .config }
        client.start()
        do {
            try await client.waitUntilConnected(timeout: .seconds(10))
            try await client.subscribe(topics.allBeacons(of: node))
            try await client.subscribe(topics.nodeStatus(node))
        } catch {
            await client.shutdown()
            return fail("cannot reach the broker at \(config.mqtt.broker.redacted): \(error)", .failure)
        }

        let held = beacon.map { "\($0)" } ?? "a beacon"
        let metres = String(format: "%g m", distance)
        StandardStream.error.write("Listening to \(node) for \(String(format: "%g", seconds)) s: carry \(held) slowly round it, \(metres) away, at its height.\n")
        let calibrator = Mutex(RxAdjustCalibrator(node: node, beacon: beacon, distance: distance,
                                                  pathLossExponent: config.fusion.pathLossExponent, site: config.site))
        let status = Mutex<Bool?>(nil)
        let reader = Task {
            var intake = InputIntake(topics: topics)
            for await message in client.messages {
                switch intake.accept(topic: message.topic, payload: message.payload) {
                case .success(.reading(let reading)): calibrator.withLock { $0.add(reading) }
                case .success(.nodeStatus(_, let online)): status.withLock { $0 = online }
                default: break
                }
            }
        }
        try? await Task.sleep(for: .seconds(seconds))
        reader.cancel()
        await client.shutdown()

        let result = calibrator.withLock { $0.suggestion() }
        switch result {
        case .success(let suggestion):
            StandardStream.output.write(suggestion.report + "\n")
            return .success
        case .failure(let problem):
            var message = problem.description
            if status.withLock({ $0 }) == false { message += " (the node says it is offline)" }
            return fail(message, .dataError)
        }
    }
}
