import Shared

/// Checks every inbound MQTT message before it reaches fusion: topic shape,
/// payload size and version, the node named in the topic against the payload,
/// numbers that are not finite or out of range, unknown or foreign beacons.
/// Rejections are counted by reason; nothing here throws or traps.
public struct InputIntake: Sendable {
    /// What an accepted message means for fusion.
    public enum Input: Sendable, Equatable {
        case reading(BeaconReading)
        case nodeStatus(node: String, online: Bool)
        /// A connected agent's link is up (`NodeHeartbeat`).
        case nodeHeartbeat(node: String)
        /// Our own retained output, read back at start-up.
        case retainedPresence(PresenceDecision)
        /// Our own retained receiver calibration, read back at start-up.
        case retainedCalibration(ReceiverCalibrationReport)
        /// A command that teaches rooms (`<prefix>/aggregator/learn`).
        case learnCommand(LearnCommand)
        /// The retained learn state, which partitions share (`<prefix>/aggregator/learn/state`).
        case learnState(LearnState)
        case aggregatorStatus(String)
        case lease([UInt8])
        /// A topic of ours that fusion does not use (node telemetry and region events).
        case ignored
    }

    public enum Rejection: String, Sendable, CaseIterable {
        case foreignTopic = "foreign_topic"
        case tooLarge = "too_large"
        case badPayload = "bad_payload"
        case badVersion = "bad_version"
        case nodeMismatch = "node_mismatch"
        case idMismatch = "id_mismatch"
        case outOfRange = "out_of_range"
        case unknownNode = "unknown_node"
        /// Under `partition:`, a message of a node standing in another partition's room: that
        /// partition's to use. Counted, never logged (every partition hears every node).
        case otherPartition = "other_partition"
        /// A Roomcast agent's own ESPresense output (`roomcast_node`), read back with
        /// `inputs.espresense`: the reading came on the agent's topic too, and would count twice.
        case echo = "echo"
        /// An ESPresense id that names a kind of device (`ESPresenseInput.kindPrefixes`), heard from
        /// many devices at once: no beacon to place. Counted, never logged (ESPresense nodes send
        /// such readings all the time).
        case notOneDevice = "not_one_device"
        /// Not a rejection: the reading was used, but its node's clock is off (warned about).
        case clockSkew = "clock_skew"
        /// Not a rejection: the reading was used, and its node, marked offline, counts as online again.
        case nodeBackOnline = "node_back_online"
        /// Not a rejection: the reading was used, and its beacon's id is advertised by two
        /// transmitters at once (`SharedIDWatch`); counted once per beacon an hour.
        case sharedID = "shared_id"
    }

    public let topics: Topics
    /// Nodes from the config; nil accepts any node (a site that lists none). An empty set
    /// accepts none: a partition whose rooms hold no node.
    public internal(set) var knownNodes: Set<String>? {
        didSet { knownNodesByCase = Self.byLowercase(knownNodes) }
    }
    /// `knownNodes` by their lower-case spelling: a refused name that differs from one only in
    /// case is named with it, for the price of one lookup (any client may send unknown names).
    private var knownNodesByCase: [String: String] = [:]

    private static func byLowercase(_ nodes: Set<String>?) -> [String: String] {
        var map: [String: String] = [:]
        for node in nodes ?? [] { map[node.lowercased()] = node }
        return map
    }
    public private(set) var rejected: [Rejection: UInt64] = [:]
    public private(set) var accepted: UInt64 = 0

    private var readingTopics: ReadingTopicMatcher

    public init(topics: Topics, knownNodes: Set<String>? = nil) {
        self.topics = topics
        self.knownNodes = knownNodes
        self.knownNodesByCase = Self.byLowercase(knownNodes)
        self.readingTopics = ReadingTopicMatcher(topics: topics)
    }

    public var rejectedTotal: UInt64 { rejected.values.reduce(0, +) }

    /// True when `node` may report: a configured one, or when none is configured any node but
    /// one named as away (`PresencePublisher.awayText`), whose room of its own name would read as away.
    public func isKnown(node: String) -> Bool { knownNodes?.contains(node) ?? (node != PresencePublisher.awayText) }

    /// Why a message of `node`, which is not `isKnown`, is not taken (`kind` names what sent it):
    /// another partition's, or a node this aggregator does not have.
    public func refusal(ofNode node: String, kind: String = "node") -> RejectionDetail {
        if otherPartitionsNodes.contains(node) {
            return RejectionDetail(reason: .otherPartition, message: "\(kind) '\(node)' is another partition's", node: node)
        }
        if knownNodes == nil {
            return RejectionDetail(reason: .unknownNode, message: "\(kind) '\(node)' would stand for a room of its name (the site lists no nodes), "
                                   + "and a room topic saying '\(node)' reads as away: rename the node, or list the site's nodes with their rooms", node: node)
        }
        // Names are matched exactly: `Kitchen-Pi` on the agent is not the aggregator's `kitchen-pi`.
        if node.utf8.count <= 128, let guess = knownNodesByCase[node.lowercased()] {
            return RejectionDetail(reason: .unknownNode, message: "\(kind) '\(node)' is not among this aggregator's nodes; "
                                   + "did you mean '\(guess)'? (node names are matched exactly, case too)", node: node)
        }
        return RejectionDetail(reason: .unknownNode, message: "\(kind) '\(node)' is not among this aggregator's nodes: "
                               + "list it under nodes: with its room if it is one of the site's", node: node)
    }
    /// Under `partition:`, the site's nodes in the rooms of no partition of this one's: their
    /// messages reach every partition (the topics are shared) and are counted here as
    /// `other_partition`, not logged.
    public internal(set) var otherPartitionsNodes: Set<String> = []

    /// Classifies one message; nil (with a counted reason) when rejected.
    public mutating func accept(topic: String, payload: [UInt8]) -> Result<Input, RejectionDetail> {
        let result = classify(topic: topic, payload: payload)
        switch result {
        case .success: accepted += 1
        case .failure(let detail): rejected[detail.reason, default: 0] += 1
        }
        return result
    }

    /// Counts what `accept` did not classify (an ESPresense message: nil when its reading was
    /// taken), or a note on a reading it accepted (`clock_skew`, `node_back_online`).
    public mutating func count(_ outcome: RejectionDetail?) {
        if let outcome { rejected[outcome.reason, default: 0] += 1 } else { accepted += 1 }
    }

    /// Why a message was rejected, for a rate-limited log line.
    public struct RejectionDetail: Error, Sendable, Equatable {
        public var reason: Rejection
        public var message: String
        /// The node a note is about (the beacon, for `sharedID`), where it is one: the log limits
        /// the lines of each one's condition on their own, so one's lasting problem does not hide
        /// another's.
        public var node: String?

        public init(reason: Rejection, message: String, node: String? = nil) {
            self.reason = reason
            self.message = message
            self.node = node
        }
    }

    private mutating func classify(topic: String, payload: [UInt8]) -> Result<Input, RejectionDetail> {
        func reject(node: String? = nil, _ r: Rejection, _ m: String) -> Result<Input, RejectionDetail> {
            .failure(RejectionDetail(reason: r, message: m, node: node))
        }
        func unknown(_ node: String) -> Result<Input, RejectionDetail> { .failure(refusal(ofNode: node)) }
        /// A payload that does not decode: of another contract version, `bad_version`, whatever it is.
        func undecodable(node: String? = nil, _ error: WireFormatError) -> Result<Input, RejectionDetail> {
            if case .unsupportedVersion = error { return reject(node: node, .badVersion, error.description) }
            return reject(node: node, .badPayload, error.description)
        }
        // Readings are nearly all the traffic: their topics skip the general parser.
        let parsed: Topics.Topic
        switch readingTopics.match(topic) {
        case let .reading(node, id): parsed = .nodeBeacon(node: node, id: id)
        case .invalidID: return reject(.foreignTopic, "not a Roomcast topic")
        case .other:
            guard let p = topics.parse(topic) else { return reject(.foreignTopic, "not a Roomcast topic") }
            parsed = p
        }
        if payload.count > WireFormat.maxPayloadBytes { return reject(.tooLarge, "\(payload.count) bytes") }
        switch parsed {
        case let .nodeBeacon(node, id):
            if !isKnown(node: node) { return unknown(node) }
            var reading: BeaconReading
            do { reading = try BeaconReading.decodeWire(payload, expectedID: id) } catch {
                if case .unsupportedVersion = error { return reject(node: node, .badVersion, error.description) }
                if case .tooLarge = error { return reject(node: node, .tooLarge, error.description) }
                return reject(node: node, .badPayload, error.description)
            }
            if reading.node != node { return reject(node: node, .nodeMismatch, "topic node '\(node)' but payload node '\(reading.node)'") }
            if reading.id != id { return reject(node: node, .idMismatch, "topic id differs from payload id") }
            // Gaps an agent keeping silent beacons for hours measures (`ranging.forget_after_s`
            // up to a day) are no advertising cadence: the reading stands without one.
            if let i = reading.interval, i.isFinite, i > Self.longestInterval { reading.interval = nil }
            if let problem = Self.rangeProblem(reading) { return reject(node: node, .outOfRange, problem) }
            return .success(.reading(reading))
        case let .nodeStatus(node):
            if !isKnown(node: node) { return unknown(node) }
            // On a site that lists no nodes a status makes a node (and a room of its name), as a
            // reading does: the same rules for its name.
            if let problem = TopicName.problem(with: node) { return reject(node: node, .outOfRange, "node name \(problem)") }
            switch String(decoding: payload, as: UTF8.self) {
            case "online": return .success(.nodeStatus(node: node, online: true))
            case "offline", "": return .success(.nodeStatus(node: node, online: false))
            default: return reject(node: node, .badPayload, "status must be online or offline")
            }
        case let .presence(id):
            guard !payload.isEmpty else { return reject(.badPayload, "empty presence") }
            do {
                let d = try WireFormat.decode(PresenceDecision.self, from: payload)
                guard d.id == id else { return reject(.idMismatch, "topic id differs from payload id") }
                // Resumed, its room names the occupancy topic the next change publishes.
                if let room = d.room, let problem = TopicName.problem(with: room) {
                    return reject(.outOfRange, "room name \(problem)")
                }
                // Resumed, its name goes into every presence and Home Assistant config of the
                // beacon: as long as a reading's may be, or they outgrow the payload limits.
                if let name = d.name, let problem = Self.nameProblem(name) {
                    return reject(.outOfRange, problem)
                }
                return .success(.retainedPresence(d))
            } catch {
                return undecodable(error)
            }
        case .aggregatorStatus:
            return .success(.aggregatorStatus(String(decoding: payload, as: UTF8.self)))
        case .aggregatorLease:
            return .success(.lease(payload))
        case .aggregatorCalibration:
            guard !payload.isEmpty else { return .success(.ignored) }  // cleared
            do {
                return .success(.retainedCalibration(try WireFormat.decode(ReceiverCalibrationReport.self, from: payload)))
            } catch {
                return undecodable(error)
            }
        case .aggregatorLearn:
            // Clearing a retained command (`mosquitto_pub -r -n`) is forwarded live, empty.
            guard !payload.isEmpty else { return .success(.ignored) }
            switch LearnCommand.decode(payload) {
            case .success(let command): return .success(.learnCommand(command))
            case .failure(let error): return reject(.badPayload, error.message)
            }
        case .aggregatorLearnState:
            guard !payload.isEmpty else { return .success(.ignored) }  // cleared
            do {
                return .success(.learnState(try WireFormat.decode(LearnState.self, from: payload)))
            } catch {
                return undecodable(error)
            }
        case let .nodeHeartbeat(node):
            if !isKnown(node: node) { return unknown(node) }
            if let problem = TopicName.problem(with: node) { return reject(node: node, .outOfRange, "node name \(problem)") }
            do {
                let beat = try WireFormat.decode(NodeHeartbeat.self, from: payload)
                guard beat.ts.isFinite else { return reject(node: node, .outOfRange, "ts is not a finite number") }
            } catch {
                return undecodable(node: node, error)
            }
            return .success(.nodeHeartbeat(node: node))
        case .nodeTelemetry, .nodeEvents, .aggregatorLearnResult:
            return .success(.ignored)
        case .room, .person, .events:
            return reject(.foreignTopic, "not an input topic")
        }
    }

    /// The longest advertising interval a reading's `interval` is taken as, in seconds.
    static let longestInterval: Double = 3600

    /// The longest beacon name a reading may carry.
    public static let maximumNameBytes = 248

    /// Why a decoded reading's numbers cannot be used, or nil.
    static func rangeProblem(_ r: BeaconReading) -> String? {
        if !r.ts.isFinite || r.ts < 0 || r.ts > 4_102_444_800 { return "ts out of range" }
        if r.rssi < -127 || r.rssi > 20 { return "rssi \(r.rssi) out of range" }
        if !r.rssiFiltered.isFinite || r.rssiFiltered < -127 || r.rssiFiltered > 20 { return "rssi_filtered out of range" }
        if !r.distance.isFinite || r.distance < 0 || r.distance > 1000 { return "distance out of range" }
        if r.power < -127 || r.power > 20 { return "power out of range" }
        if let i = r.interval, !i.isFinite || i < 0 || i > longestInterval { return "interval out of range" }
        // A spread of 0 would make a reading infinitely sure; no radio reads to a hundredth of a dB.
        if let d = r.rssiSD, !d.isFinite || d < 0.01 || d > 100 { return "rssi_sd out of range" }
        if let p = TopicName.problem(with: r.node) { return "node name \(p)" }
        if let name = r.name, let problem = nameProblem(name) { return problem }
        return nil
    }

    /// Why a beacon name from the network cannot be used, or nil. It goes out again in presence
    /// and discovery, and reaches terminals and journals: no longer than a device can advertise
    /// (a Complete Local Name is at most 248 octets, Core 5.4 Vol 3 Part C §12.1), and no
    /// control characters.
    static func nameProblem(_ name: String) -> String? {
        if name.utf8.count > maximumNameBytes { return "name longer than \(maximumNameBytes) bytes" }
        if ControlCharacters.contains(name) { return "name contains control characters" }
        return nil
    }
}
