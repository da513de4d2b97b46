import Shared
import Testing
import TestSupport
@testable import RoomcastAggregator

/// The intake's shortcut for reading topics must agree with `Topics.parse` on every topic.
@Suite struct ReadingTopicMatcherTests {
    static let id = "ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45"

    static let topics: [String] = [
        "roomcast/nodes/kitchen-pi/beacons/\(id)", "roomcast/nodes/k/beacons/mac:c81f660a1b2c",
        "roomcast/nodes/Küche 1/beacons/\(id)", "roomcast/nodes//beacons/\(id)", "roomcast/nodes/k/beacons/",
        "roomcast/nodes/k/beacons", "roomcast/nodes/k/beacons/\(id)/x", "roomcast/nodes/k/beacons//",
        "roomcast/nodes/k/beacon/\(id)", "roomcast/nodes/k/beaconsx/\(id)", "roomcast/nodes/k/status",
        "roomcast/nodes/k/telemetry", "roomcast/nodes/k/events", "roomcast/nodes/k", "roomcast/nodes/", "roomcast/nodes",
        "roomcast/presence/\(id)", "roomcast/rooms/kitchen", "roomcast/events", "roomcast/aggregator/status",
        "roomcast/aggregator/lease", "roomcastx/nodes/k/beacons/\(id)", "other/nodes/k/beacons/\(id)",
        "roomcast/nodes/k/beacons/IBEACON:E06F95E4-FCFC-42C6-B4F8-F6BAE87EA1A0-1233-45",
        "roomcast/nodes/k/beacons/ibeacon:not-a-uuid", "roomcast/nodes/k/beacons/unknown:x", "roomcast/nodes/k/beacons/mac:",
        "site/a/nodes/k/beacons/\(id)", "site/a/nodes/k/status", "", "/", "roomcast", "roomcast/",
    ]

    @Test(arguments: [Topics(), Topics(prefix: "site/a"), Topics(prefix: "room cast")])
    func agreesWithTopicsParse(_ t: Topics) {
        var matcher = ReadingTopicMatcher(topics: t)
        for round in 0..<2 {  // the second round answers from the id cache
            for topic in Self.topics + Self.topics.map({ $0.replacingOccurrences(of: "roomcast", with: t.prefix) }) {
                let expected = t.parse(topic)
                switch matcher.match(topic) {
                case let .reading(node, id):
                    #expect(expected == .nodeBeacon(node: node, id: id), "\(topic) round \(round)")
                case .invalidID:
                    #expect(expected == nil, "\(topic)")
                case .other:
                    if case .nodeBeacon = expected { Issue.record("\(topic) is a reading topic") }
                }
            }
        }
    }

    @Test func theIDCacheStaysBounded() async {
        await onHeavyWorkThread {
            var matcher = ReadingTopicMatcher(topics: Topics())
            for k in 0..<(ReadingTopicMatcher.idCacheLimit + 10) {
                let hex = String(k, radix: 16)
                let mac = "mac:" + String(repeating: "0", count: 12 - hex.count) + hex
                #expect(matcher.match("roomcast/nodes/n/beacons/\(mac)") == .reading(node: "n", id: BeaconID(mac)!))
            }
            #expect(matcher.cachedIDs <= ReadingTopicMatcher.idCacheLimit)
        }
    }
}
