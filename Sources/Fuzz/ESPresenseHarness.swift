import RoomcastAggregator
import Shared

/// Fuzzes `ESPresenseInput`, which turns another project's MQTT messages
/// (`espresense/devices/<id>/<room>`) into Roomcast readings.
///
/// Input: `topic` NUL `payload` (`FuzzSite.split`; without a NUL the input is a payload on
/// `espresense/devices/<id>/kitchen-pi`). A reading it makes must be one the aggregator would
/// accept from a Roomcast node: within the intake's ranges, and accepted unchanged by
/// `InputIntake` when published on its own topic.
enum ESPresenseHarness {
    static let fallbackTopic = "espresense/devices/iBeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23/kitchen-pi"

    static func run(_ input: [UInt8]) {
        let (topic, payload) = FuzzSite.split(input, fallback: fallbackTopic)
        var espresense = ESPresenseInput()
        switch espresense.reading(topic: topic, payload: payload, now: FuzzSite.start) {
        case .failure(let why):
            FuzzCheck.require(why.reason != .clockSkew && why.reason != .unknownNode, "ESPresense rejected with \(why.reason)")
        case .success(let r):
            let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
            FuzzCheck.require(levels.count == 4 && r.node == levels[3], "reading of node '\(r.node)' from topic '\(topic)'")
            FuzzCheck.require(r.ts == WireFormat.milliseconds(FuzzSite.start) && r.seq == 1, "ts \(r.ts) seq \(r.seq)")
            if let problem = FuzzSite.rangeProblem(r) { FuzzCheck.require(false, "ESPresense reading out of range: \(problem)") }
            let bytes: [UInt8]
            do { bytes = try WireFormat.encode(r) } catch {
                FuzzCheck.require(false, "ESPresense reading does not encode: \(error)")
                return
            }
            var intake = InputIntake(topics: FuzzSite.topics)
            switch intake.accept(topic: FuzzSite.topics.nodeBeacon(r.node, r.id), payload: bytes) {
            case .success(.reading(var back)):
                // Whose power it is does not go on the wire.
                back.powerIsNodesReference = r.powerIsNodesReference
                FuzzCheck.require(back == r, "ESPresense reading changed through the intake: \(r) → \(back)")
            case let other:
                FuzzCheck.require(false, "the intake refuses an ESPresense reading: \(other)")
            }
        }
    }
}
