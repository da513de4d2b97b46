import RoomcastMQTT
import Shared
import Testing
@testable import RoomcastAgent

/// The QoS 1 checks that make a broker's refusal visible, and how refusals are counted and reported.
@Suite struct DeliveryCheckTests {
    @Test func oneMessagePerFamilyAMinuteGoesAtQoS1() {
        var check = DeliveryCheck()
        func batch(_ now: Double) -> [Int] {
            var m = [OutboundMessage(topic: "roomcast/nodes/hall-pi/beacons/ibeacon:a-1-2", text: "r"),
                     OutboundMessage(topic: "roomcast/nodes/hall-pi/beacons/irk:alice", text: "r"),
                     OutboundMessage(topic: "room_presence/hall", text: "p"),
                     OutboundMessage(topic: "roomcast/nodes/hall-pi/events", text: "e", qos: 1)]
            check.mark(&m, now: now)
            return m.map(\.qos)
        }
        #expect(batch(0) == [1, 0, 1, 1])
        #expect(batch(30) == [0, 0, 0, 1])
        #expect(batch(60) == [1, 0, 1, 1])
        check.reset()
        #expect(batch(61) == [1, 0, 1, 1])
        #expect(DeliveryCheck.family(of: "espresense/devices/irk:alice/hall") == "espresense/devices/+/hall")
    }

    /// The byte scan gives what splitting into levels and joining them gives, edge cases included.
    @Test(arguments: ["roomcast/nodes/hall-pi/beacons/ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0:1:2", "a:b", "/x:y/", "a//b:c",
                      "trailing/", "x:/y", "no/colon/here", "", ":", "a/:/b", "espresense/devices/irk:alice/hall", "é:ü/ß"])
    func aFamilyIsTheTopicWithBeaconLevelsReplaced(topic: String) {
        let reference = topic.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.contains(":") ? "+" : String($0) }.joined(separator: "/")
        #expect(DeliveryCheck.family(of: topic) == reference)
    }

    @Test func refusalsAreCountedPerFamilyAndReportedAtMostOnceAMinute() throws {
        var r = PublishRefusals()
        let none = r.report(now: 0)
        #expect(none == nil)
        r.record(family: "room_presence/hall", reason: 0x87)
        let a = r.report(now: 5)
        let first = try #require(a)
        #expect(first.sinceLast == 1 && first.total == 1 && first.families == "room_presence/hall=1")
        r.record(family: "room_presence/hall", reason: 0x87)
        r.record(family: "espresense/devices/+/hall", reason: 0x87)
        let early = r.report(now: 64)
        #expect(early == nil)
        let b = r.report(now: 65)
        let second = try #require(b)
        #expect(second.sinceLast == 2 && second.total == 3)
        #expect(second.families == "room_presence/hall=2, espresense/devices/+/hall=1")
        let nothingNew = r.report(now: 200)
        #expect(nothingNew == nil)
        #expect(PublishRefusals.describe(reason: 0x87) == "0x87 not authorized")
        for i in 0..<100 { r.record(family: "t/\(i)", reason: 0x87) }
        #expect(r.byFamily.count == PublishRefusals.maxFamilies + 1 && r.total == 103)
    }

    /// A broker whose ACL denies a node's topics (its user name is not its node name) does so for
    /// good: a line a minute was 1,440 a day onto the Pi's SD card. They come ever further apart,
    /// up to hourly, every refusal counted.
    @Test func refusalsThatGoOnAreReportedEverFurtherApart() {
        var r = PublishRefusals()
        var lines: [Double] = []
        var counted = 0
        for t in stride(from: 0.0, to: 86_400, by: 10) {
            r.record(family: "roomcast/nodes/+/beacons/+", reason: 0x87)
            if let report = r.report(now: t) {
                lines.append(t)
                counted += report.sinceLast
            }
        }
        #expect(lines.prefix(3) == [0, 60, 180], "\(lines.prefix(5))")
        #expect(lines.count < 40, "\(lines.count) lines in a day")
        #expect(zip(lines.dropFirst(), lines).map { $0 - $1 }.suffix(3).allSatisfy { $0 >= 3600 })
        let next = r.report(now: 200_000)
        #expect(counted + (next?.sinceLast ?? 0) == 8_640 && next?.total == 8_640, "every refusal counted")
    }
}
