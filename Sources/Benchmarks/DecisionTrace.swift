import RoomcastFusion
import RoomcastSimulation
import Shared

/// `--trace SCENARIO/BEACON` (diagnostics): wraps the engine of roomcast-x and prints,
/// every tick, that beacon's truth beside the decision and its explanation — room, runner-up,
/// margin, position and the evidence — to see why a flap or a late switch happened.
struct DecisionTrace<Inner: PresenceEstimator & Sendable>: PresenceEstimator, Sendable {
    var inner: Inner
    let id: BeaconID?
    let truth: [TruthSpan]

    init(_ inner: Inner, beacon: String, scenario: Scenario) {
        self.inner = inner
        let id = scenario.beacons.first { $0.name == beacon || $0.id.description == beacon }?.id
        if id == nil {
            let names = scenario.beacons.map { $0.name ?? $0.id.description }.joined(separator: ", ")
            print("--trace: no beacon '\(beacon)' in \(scenario.name); it has \(names)")
        }
        self.id = id
        truth = scenario.truth.filter { $0.id == id }
    }

    mutating func ingest(_ reading: BeaconReading, now: Double) { inner.ingest(reading, now: now) }
    mutating func nodeStatus(_ node: String, online: Bool, now: Double) { inner.nodeStatus(node, online: online, now: now) }
    func decision(for id: BeaconID) -> PresenceDecision? { inner.decision(for: id) }
    func isTracking(_ id: BeaconID) -> Bool { inner.isTracking(id) }
    mutating func hearingRestored(at now: Double) { inner.hearingRestored(at: now) }
    mutating func nodeHeard(_ node: String, now: Double) { inner.nodeHeard(node, now: now) }
    mutating func clockSteppedBack(by seconds: Double) { inner.clockSteppedBack(by: seconds) }
    mutating func takeDropped() -> [DroppedBeacon] { inner.takeDropped() }
    var capacityUse: CapacityUse? { inner.capacityUse }
    var counters: FusionCounters { inner.counters }
    func switchEvidenceSince(for id: BeaconID) -> Double? { inner.switchEvidenceSince(for: id) }
    func madeNode(_ node: String) -> Bool { inner.madeNode(node) }
    var makesNodes: Bool { inner.makesNodes }

    mutating func tick(now: Double) -> [PresenceDecision] {
        let changed = inner.tick(now: now)
        guard let id, let d = inner.decision(for: id) else { return changed }
        let real = truth.first { $0.t0 <= now && now < $0.t1 }?.room ?? "away"
        let mark = changed.contains { $0.id == id } ? "*" : " "
        let position = d.position.map { String(format: "(%.1f,%.1f)", $0[0], $0[1]) } ?? "-"
        let evidence = d.evidence.sorted { $0.rssi > $1.rssi }.prefix(4)
            .map { "\($0.node.replacingOccurrences(of: "-pi", with: "")) \(Int($0.rssi))" }.joined(separator: ", ")
        // The probability that it moves, where the engine says.
        let motion = (inner as? FusionEngine)?.movingProbability(for: id).map { String(format: "M%.2f", $0) } ?? "-"
        print(String(format: "%7.1f %@ %-10@ %-10@ %-14@ %-10@ %.2f %@ %@  %@", now, mark, real, d.room ?? "away",
                     d.reason ?? "-", d.runnerUp ?? "-", d.margin ?? 0, position, motion, evidence))
        return changed
    }
}
