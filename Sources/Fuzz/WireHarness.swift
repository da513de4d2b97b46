import Foundation
import Shared

/// Fuzzes what the aggregator and `aggregator replay` read from the network and from files:
/// every wire payload type, message log lines, topic strings and beacon ids.
///
/// A payload that decodes must encode again (the encoder refuses NaN and infinities) and
/// decode to the same value, so nothing the aggregator accepts breaks when it republishes;
/// a reading must also survive the agent's hand-written `fastJSON()`.
enum WireHarness {
    static let topics = Topics()

    static func run(_ input: [UInt8]) {
        if let reading = roundTrip(BeaconReading.self, input) {
            // The agent publishes readings with its hand-written encoder; the aggregator must read
            // back exactly what JSONEncoder would have given it.
            let fast = reading.fastJSON()
            let back = Result { () throws(WireFormatError) in try WireFormat.decode(BeaconReading.self, from: fast) }
            FuzzCheck.require((try? back.get()) == reading,
                              "fastJSON differs: \(String(decoding: fast, as: UTF8.self)) → \(back)")
        }
        // The aggregator reads readings with its hand-written decoder: same value or same error.
        let codable = Result { () throws(WireFormatError) in try WireFormat.decode(BeaconReading.self, from: input) }
        let handWritten = Result { () throws(WireFormatError) in try BeaconReading.decodeWire(input) }
        switch (codable, handWritten) {
        case let (.success(a), .success(b)):
            FuzzCheck.require(a == b && (try? WireFormat.encode(a)) == (try? WireFormat.encode(b)),
                              "decodeWire gave \(b), WireFormat.decode \(a)")
        case let (.failure(a), .failure(b)):
            FuzzCheck.require(a == b, "decodeWire threw \(b), WireFormat.decode \(a)")
        default:
            FuzzCheck.require(false, "decodeWire \(handWritten) but WireFormat.decode \(codable)")
        }
        if let decision = roundTrip(PresenceDecision.self, input) {
            FuzzCheck.require((try? decision.wireJSON()) == (try? WireFormat.encode(decision)),
                              "PresenceDecision.wireJSON differs from WireFormat.encode")
        }
        roundTrip(NodeTelemetry.self, input)
        roundTrip(RoomOccupancy.self, input)
        roundTrip(RoomEvent.self, input)
        roundTrip(RegionEvent.self, input)

        let text = String(decoding: input, as: UTF8.self)
        if let line = try? MessageLogLine.decode(text) {
            // Replay writes what it read; its output must be readable by the next replay.
            let again: MessageLogLine
            do { again = try MessageLogLine.decode(line.encoded()) } catch {
                FuzzCheck.require(false, "encoded log line does not decode: \(error)")
                return
            }
            FuzzCheck.require(again.topic == line.topic && again.retain == line.retain,
                              "log line topic/retain changed in a round trip")
            // Timestamps keep millisecond precision (and their sign).
            FuzzCheck.require((again.ts - line.ts).magnitude <= 0.0005 + line.ts.magnitude * 1e-12,
                              "log line ts \(line.ts) came back as \(again.ts)")
            // Past 2^53 ms Foundation's JSON number parser is not correctly rounded (a 1e19 s ts moves
            // by an ulp per round trip), so ts gets a tolerance; every other field must be a fixed point.
            let third = try? MessageLogLine.decode(again.encoded())
            var expected = again
            expected.ts = third?.ts ?? again.ts
            FuzzCheck.require(third == expected && (expected.ts - again.ts).magnitude <= again.ts.magnitude * 1e-12,
                              "log line encoding is not stable after one round trip: "
                              + "\(again.encoded()) became \(third?.encoded() ?? "unreadable")")
        }
        // Topics and ids: what parses must rebuild to the same string, since the aggregator answers
        // on topics it builds from what it parsed.
        if let topic = topics.parse(text) {
            FuzzCheck.require(rebuild(topic) == text, "topic '\(text)' parses but rebuilds as '\(rebuild(topic))'")
        }
        if let id = BeaconID(text) {
            FuzzCheck.require(BeaconID(id.rawValue) == id && topics.parse(topics.presence(id)) == .presence(id: id),
                              "beacon id '\(id)' does not survive a presence topic")
        }
    }

    static func rebuild(_ topic: Topics.Topic) -> String {
        switch topic {
        case let .nodeStatus(node): topics.nodeStatus(node)
        case let .nodeTelemetry(node): topics.nodeTelemetry(node)
        case let .nodeHeartbeat(node): topics.nodeHeartbeat(node)
        case let .nodeBeacon(node, id): topics.nodeBeacon(node, id)
        case let .nodeEvents(node): topics.nodeEvents(node)
        case let .presence(id): topics.presence(id)
        case let .room(room): topics.room(room)
        case let .person(person): topics.person(person)
        case .events: topics.events
        case .aggregatorStatus: topics.aggregatorStatus
        case .aggregatorLease: topics.aggregatorLease
        case .aggregatorCalibration: topics.aggregatorCalibration
        case .aggregatorLearn: topics.aggregatorLearn
        case .aggregatorLearnState: topics.aggregatorLearnState
        case .aggregatorLearnResult: topics.aggregatorLearnResult
        }
    }

    /// The decoded value, after checking it encodes and decodes to itself.
    @discardableResult
    static func roundTrip<T: Codable & Equatable>(_ type: T.Type, _ input: [UInt8]) -> T? {
        guard let value = try? WireFormat.decode(type, from: input) else { return nil }
        let bytes: [UInt8]
        do { bytes = try WireFormat.encode(value) } catch {
            FuzzCheck.require(false, "\(type) decoded but does not encode: \(error)")
            return value
        }
        let again = try? WireFormat.decode(type, from: bytes)
        FuzzCheck.require(again == value, "\(type) changed in a round trip: \(String(decoding: bytes, as: UTF8.self))")
        return value
    }
}
