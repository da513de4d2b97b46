import RoomcastAggregator
import RoomcastFusion
import Shared

/// Fuzzes the retained receiver calibration (`<prefix>/aggregator/calibration`), which the
/// aggregator reads back at start-up and hands to fusion (`FusionEngine.resume`).
///
/// Input: the payload. A report that decodes must re-encode to itself, be accepted by the core
/// and seed exactly the offsets it names (the last finite entry per configured node, clamped to
/// `max_learned_offset`); one that does not must be rejected and change nothing. Fusion then
/// runs on top of the resumed offsets and everything it publishes must encode.
enum CalibrationHarness {
    static let topics = FuzzSite.topics

    static func run(_ input: [UInt8]) {
        let decoded = try? WireFormat.decode(ReceiverCalibrationReport.self, from: input)
        if let report = decoded {
            let again = (try? WireFormat.encode(report)).flatMap { try? WireFormat.decode(ReceiverCalibrationReport.self, from: $0) }
            FuzzCheck.require(again == report, "calibration report changed in a round trip")
        }
        do {
            var core = AggregatorCore(engine: FusionEngine(site: FuzzSite.site), site: FuzzSite.site, topics: topics, discovery: nil)
            let t = FuzzSite.start
            _ = try core.start(now: t)
            let (_, rejection) = try core.handle(topic: topics.aggregatorCalibration, payload: input, now: t)
            let bound = core.engine.model.maxLearnedOffset
            if input.isEmpty {
                FuzzCheck.require(rejection == nil, "a cleared calibration was rejected")
            } else if let report = decoded {
                FuzzCheck.require(rejection == nil, "a report that decodes was rejected: \(rejection?.message ?? "")")
                for node in FuzzSite.site.nodes {
                    let entry = report.nodes.last { $0.node == node.name && $0.offsetDb.isFinite }
                    let expected = entry.map { min(bound, max(-bound, $0.offsetDb)) } ?? 0
                    FuzzCheck.require(core.engine.learnedOffset(of: node.name) == expected,
                                      "\(node.name) resumed \(core.engine.learnedOffset(of: node.name) ?? .nan), expected \(expected)")
                }
            } else {
                FuzzCheck.require(rejection?.reason == .badPayload || rejection?.reason == .tooLarge,
                                  "an undecodable report got \(rejection?.reason.rawValue ?? "no rejection")")
                for node in FuzzSite.site.nodes {
                    FuzzCheck.require(core.engine.learnedOffset(of: node.name) == 0, "a rejected report moved \(node.name)'s offset")
                }
            }
            // Fusion on the resumed offsets: a beacon heard by every node, ticked for a while.
            var out: [OutboundMessage] = []
            var seq: UInt64 = 0
            for step in 0..<5 {
                for (k, node) in FuzzSite.site.nodes.enumerated() {
                    seq += 1
                    let now = t + 1 + Double(step)
                    let r = FuzzSite.reading(node.name, FuzzSite.cat, rssi: -55 - 7 * k, ts: now, seq: seq)
                    out += try core.handle(topic: topics.nodeBeacon(node.name, FuzzSite.cat), payload: WireFormat.encode(r), now: now).messages
                }
            }
            out += try core.advance(to: t + 10)
            IntakeHarness.checkOutput(out)
            // What the aggregator republishes as its calibration must encode.
            let republished = ReceiverCalibrationReport(ts: t + 10, nodes: core.engine.receiverCalibration)
            FuzzCheck.require((try? WireFormat.encode(republished)) != nil, "the engine's calibration does not encode: \(republished)")
            for c in republished.nodes {
                FuzzCheck.require(c.offsetDb.magnitude <= bound, "\(c.node) learned \(c.offsetDb) dB, beyond ±\(bound)")
            }
        } catch {
            FuzzCheck.require(false, "the core threw: \(error)")
        }
    }
}
