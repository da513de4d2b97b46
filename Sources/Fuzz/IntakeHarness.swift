import RoomcastAggregator
import RoomcastFusion
import Shared

/// Fuzzes the aggregator's whole input path with one MQTT message: `InputIntake.accept`, then
/// `AggregatorCore.handle` with a fusion engine that has already heard every node (so what the
/// intake accepts reaches the evidence, calibration and resume code), then ten seconds of ticks.
///
/// Input: `topic` NUL `payload` (`FuzzSite.split`; without a NUL the input is a reading payload
/// on `roomcast/nodes/kitchen-pi/beacons/<FuzzSite.cat>`).
enum IntakeHarness {
    static let topics = FuzzSite.topics
    static let fallbackTopic = FuzzSite.topics.nodeBeacon("kitchen-pi", FuzzSite.cat)

    static func run(_ input: [UInt8]) {
        let (topic, payload) = FuzzSite.split(input, fallback: fallbackTopic)
        checkIntake(topic: topic, payload: payload)
        checkCore(topic: topic, payload: payload)
    }

    /// One message through a fresh intake: counted once, and what is accepted is consistent
    /// with its topic and within the ranges fusion relies on.
    static func checkIntake(topic: String, payload: [UInt8]) {
        var intake = InputIntake(topics: topics, knownNodes: Set(FuzzSite.site.nodes.map(\.name)))
        let result = intake.accept(topic: topic, payload: payload)
        FuzzCheck.require(intake.accepted + intake.rejectedTotal == 1,
                          "one message counted \(intake.accepted) accepted + \(intake.rejectedTotal) rejected")
        let parsed = topics.parse(topic)
        switch result {
        case .failure(let why):
            FuzzCheck.require(intake.rejected[why.reason] == 1 && intake.accepted == 0, "rejection \(why.reason) not counted")
            FuzzCheck.require(why.reason != .clockSkew, "the intake has no clock; clock_skew is the core's")
        case .success(let accepted):
            FuzzCheck.require(intake.accepted == 1, "acceptance not counted")
            switch accepted {
            case .reading(let r):
                FuzzCheck.require(parsed == .nodeBeacon(node: r.node, id: r.id),
                                  "reading of \(r.node)/\(r.id) accepted on topic '\(topic)'")
                FuzzCheck.require(intake.isKnown(node: r.node), "reading of unconfigured node '\(r.node)' accepted")
                if let problem = FuzzSite.rangeProblem(r) { FuzzCheck.require(false, "accepted reading out of range: \(problem)") }
                // The aggregator logs and replays what it accepted: it must encode again.
                FuzzCheck.require((try? WireFormat.encode(r)) != nil, "accepted reading does not encode")
            case .nodeStatus(let node, _):
                FuzzCheck.require(parsed == .nodeStatus(node: node) && intake.isKnown(node: node), "status of '\(node)' on '\(topic)'")
            case .nodeHeartbeat(let node):
                FuzzCheck.require(parsed == .nodeHeartbeat(node: node) && intake.isKnown(node: node), "heartbeat of '\(node)' on '\(topic)'")
            case .retainedPresence(let d):
                FuzzCheck.require(parsed == .presence(id: d.id), "presence of \(d.id) accepted on '\(topic)'")
            case .retainedCalibration:
                FuzzCheck.require(parsed == .aggregatorCalibration && !payload.isEmpty, "calibration accepted on '\(topic)'")
            case .learnCommand(let command):
                FuzzCheck.require(parsed == .aggregatorLearn, "learn command accepted on '\(topic)'")
                FuzzCheck.require(LearnCommand.decode(command.encoded()) == .success(command), "learn command changed in a round trip")
            case .learnState:
                FuzzCheck.require(parsed == .aggregatorLearnState && !payload.isEmpty, "learn state accepted on '\(topic)'")
            case .aggregatorStatus:
                FuzzCheck.require(parsed == .aggregatorStatus, "aggregator status accepted on '\(topic)'")
            case .lease(let bytes):
                FuzzCheck.require(parsed == .aggregatorLease && bytes == payload, "lease accepted on '\(topic)'")
            case .ignored:
                switch parsed {
                case .nodeTelemetry?, .nodeEvents?, .aggregatorCalibration?, .aggregatorLearnState?, .aggregatorLearnResult?: break
                default: FuzzCheck.require(false, "ignored message on '\(topic)'")
                }
            }
        }
    }

    /// Built once: the core is a value, so each input starts from a copy of the same state.
    static let warm: AggregatorCore<FusionEngine>? = try? warmCore()

    /// A warm core: every node has reported the cat and its neighbours' beacons, and ticked.
    static func warmCore() throws -> AggregatorCore<FusionEngine> {
        var core = AggregatorCore(engine: FusionEngine(site: FuzzSite.site), site: FuzzSite.site, topics: topics,
                                  discovery: HomeAssistantDiscovery(topics: topics))
        core.acceptsESPresense = true
        let t = FuzzSite.start
        _ = try core.start(now: t - 5)
        var seq: UInt64 = 0
        for (k, node) in FuzzSite.site.nodes.enumerated() {
            for id in [FuzzSite.cat, FuzzSite.kitchenBeacon, FuzzSite.officeBeacon] {
                seq += 1
                let r = FuzzSite.reading(node.name, id, rssi: -60 - 5 * k, ts: t - 4 + Double(k), seq: seq)
                _ = try core.handle(topic: topics.nodeBeacon(node.name, id), payload: WireFormat.encode(r), now: t - 4 + Double(k))
            }
        }
        _ = try core.advance(to: t - 0.5)
        return core
    }

    static func checkCore(topic: String, payload: [UInt8]) {
        guard var core = warm else {
            FuzzCheck.require(false, "the warm-up readings were refused")
            return
        }
        // A learn state is another partition's to merge with: the hall is taken as theirs.
        let learnState = topics.parse(topic) == .aggregatorLearnState
        if learnState { core.otherPartitionsRooms = ["hall"] }
        do {
            let intakeBefore = core.intake.accepted + core.intake.rejectedTotal
            let acceptedBefore = core.intake.accepted
            let engineBefore = evidenceCount(core.engine.counters)
            let (messages, rejection) = try core.handle(topic: topic, payload: payload, now: FuzzSite.start)
            var out = messages
            let viaESPresense = topic.hasPrefix(Topics.Compatibility.espresenseDevicePrefix)
            let intakeDelta = core.intake.accepted + core.intake.rejectedTotal - intakeBefore
            let engineDelta = evidenceCount(core.engine.counters) - engineBefore
            if viaESPresense {
                // ESPresense readings bypass the intake (they are not Roomcast wire messages).
                FuzzCheck.require(intakeDelta == 0, "an ESPresense message was counted by the intake")
                FuzzCheck.require(engineDelta == (rejection == nil ? 1 : 0),
                                  "ESPresense message (rejection \(rejection?.reason.rawValue ?? "none")) moved fusion's counters by \(engineDelta)")
            } else {
                FuzzCheck.require(intakeDelta == 1, "one message moved the intake's counters by \(intakeDelta)")
                let acceptedByIntake = core.intake.accepted == acceptedBefore + 1
                FuzzCheck.require(acceptedByIntake == (rejection == nil || rejection?.reason == .clockSkew),
                                  "intake accepted=\(acceptedByIntake) but the core reported \(rejection?.reason.rawValue ?? "no rejection")")
                // Every reading the intake accepts goes to the engine (the site lists no beacons),
                // and the engine counts each one exactly once: evidence, calibration or a reason.
                let isReading: Bool
                if case .nodeBeacon? = topics.parse(topic) { isReading = true } else { isReading = false }
                FuzzCheck.require(engineDelta == (acceptedByIntake && isReading ? 1 : 0),
                                  "message on '\(topic)' moved fusion's counters by \(engineDelta)")
            }
            if learnState {
                // The partitions converge: its own learn state, heard back, publishes nothing.
                for m in messages where m.topic == topics.aggregatorLearnState {
                    let echo = try core.handle(topic: m.topic, payload: m.payload, now: FuzzSite.start).messages
                    FuzzCheck.require(echo.isEmpty, "a partition answered its own learn state with \(echo.count) messages")
                }
            }
            out += try core.advance(to: FuzzSite.start + 10)
            out += try core.refresh(now: FuzzSite.start + 10)
            checkOutput(out)
            for c in core.engine.receiverCalibration {
                FuzzCheck.require(c.offsetDb.isFinite && c.offsetDb.magnitude <= core.engine.model.maxLearnedOffset,
                                  "receiver offset \(c.offsetDb) for \(c.node)")
            }
        } catch {
            // Publishing encodes with WireFormat, which refuses NaN and infinities: a throw here
            // means fusion produced a number it cannot publish.
            FuzzCheck.require(false, "the core threw: \(error)")
        }
    }

    static func evidenceCount(_ c: FusionCounters) -> UInt64 {
        c.accepted + c.rejectedTotal + c.calibrationReadings
    }

    /// What the aggregator publishes: our own topics (or discovery's), decisions that decode as
    /// what their topic says.
    static func checkOutput(_ messages: [OutboundMessage]) {
        for m in messages {
            FuzzCheck.require(m.payload.count <= WireFormat.maxPayloadBytes, "\(m.payload.count)-byte message on \(m.topic)")
            if m.topic.hasPrefix("homeassistant/") { continue }
            if m.topic.hasSuffix("/room"), m.topic.hasPrefix(topics.presencePrefix) { continue }
            guard let parsed = topics.parse(m.topic) else {
                FuzzCheck.require(false, "published on unparsable topic '\(m.topic)'")
                return
            }
            if case .presence(let id) = parsed, !m.payload.isEmpty {
                let d = try? WireFormat.decode(PresenceDecision.self, from: m.payload)
                FuzzCheck.require(d?.id == id, "presence of \(id) does not decode: \(String(decoding: m.payload, as: UTF8.self))")
            }
        }
    }
}
