import Foundation
import RoomcastFusion
import Shared
import Testing
import TestSupport

/// What the engine publishes must be what docs/schema/presence.schema.json documents:
/// every `reason` it gives, and `margin` in range (hysteresis makes it negative).
@Suite("Decisions match the wire contract")
struct DecisionContractTests {
    @Test("every reason the engine gives, and its margins, match the presence schema")
    func everyReasonMatchesTheSchema() throws {
        let schema = try JSONSchemaValidator.contract("presence.schema.json")
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        var synth = Synthetic()
        var decisions: [PresenceDecision] = []
        func hear(_ levels: [String: Double], from t0: Double, to t1: Double) {
            for t in stride(from: t0, to: t1, by: 0.5) {
                for (node, rssi) in levels.sorted(by: { $0.key < $1.key }) {
                    engine.ingest(synth.reading(node, rssi: rssi, at: t), now: t)
                }
                decisions += engine.tick(now: t + 0.25)
                // Every evaluation's explanation, not only the changes (margins go negative
                // while a challenger builds up).
                if let d = engine.decision(for: Synthetic.tag) { decisions.append(d) }
            }
        }
        // Still by the wall between the rooms, office a little louder; then a little
        // quieter: the evidence leans to the kitchen before the still beacon moves.
        hear(["n-office": -60, "n-kitchen": -63], from: 0, to: 60)      // initial: office
        hear(["n-office": -63, "n-kitchen": -60], from: 60, to: 120)
        hear(["n-office": -76, "n-kitchen": -58], from: 120, to: 140)   // moved_nearest: kitchen
        decisions += engine.tick(now: 175)                               // timeout
        hear(["n-office": -58, "n-kitchen": -70], from: 200, to: 210)   // returned: office
        engine.nodeStatus("n-office", online: false, now: 210)          // missing, not silent: office
        hear(["n-kitchen": -70], from: 210, to: 215)
        engine.nodeStatus("n-kitchen", online: false, now: 215)         // nodes_offline, once it
        decisions += engine.tick(now: 246)                               // would have gone away
        // resumed: a restarted engine takes over the retained decision (one held for offline
        // nodes is resumed as held: `ResumeTests`).
        var restarted = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        if let retained = decisions.last(where: { $0.room != nil && $0.reason != "nodes_offline" }) {
            restarted.resume(retained, now: 300)
            if let d = restarted.decision(for: Synthetic.tag) { decisions.append(d) }
        }

        // resting: a tag that sleeps when still, silent where it lay (`RestingTests`).
        var site = Synthetic.twoRooms
        site.beacons = [.init(id: Synthetic.tag, sleepsWhenStill: true)]
        engine = FusionEngine(site: site, settings: FusionSettings())
        hear(["n-office": -58, "n-kitchen": -75], from: 400, to: 460)
        decisions += engine.tick(now: 500)

        let reasons = Set(decisions.compactMap(\.reason))
        #expect(reasons == ["initial", "moved_nearest", "timeout", "returned", "nodes_offline", "resumed", "resting"],
                "\(reasons.sorted())")
        #expect(decisions.contains { ($0.margin ?? 0) < 0 }, "a challenger building up shows as a negative margin")
        for d in decisions {
            let problems = schema.validate(json: try WireFormat.encode(d))
            #expect(problems.isEmpty, "\(d.reason ?? "-") \(d.margin ?? .nan): \(problems)")
        }
    }
}
