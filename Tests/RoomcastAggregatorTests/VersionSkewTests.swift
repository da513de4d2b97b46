import Foundation
import Shared
import Testing
@testable import RoomcastAggregator

/// A site upgrades one Pi at a time: a newer agent's readings reach an older aggregator. What v1
/// lets a newer agent add (docs/mqtt-api.md) keeps the reading: the beacon stays in the rooms
/// only the upgraded Pis hear.
@Suite struct VersionSkewTests {
    static let topic = "roomcast/nodes/kitchen-pi/beacons/mac:a4c138aabbcc"

    static func payload(_ extra: String = "", kind: String = "device", proximity: String = "near", interval: String = "1.02") -> [UInt8] {
        Array(("{\"distance\":2.1,\"id\":\"mac:a4c138aabbcc\",\"interval\":\(interval),\"kind\":\"\(kind)\",\"mac\":\"a4:c1:38:aa:bb:cc\","
               + "\"node\":\"kitchen-pi\",\"power\":-59,\"proximity\":\"\(proximity)\",\"rssi\":-68,\"rssi_filtered\":-67.4,"
               + "\"seq\":1,\"ts\":1732880000.123\(extra),\"v\":1}").utf8)
    }

    static func accepted(_ payload: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> BeaconReading? {
        var intake = InputIntake(topics: Topics())
        switch intake.accept(topic: topic, payload: payload) {
        case .success(.reading(let r)): return r
        case let other:
            Issue.record("not accepted: \(other)", sourceLocation: sourceLocation)
            return nil
        }
    }

    @Test func aKindThisReleaseDoesNotKnowIsADevice() {
        #expect(Self.accepted(Self.payload(kind: "findmy"))?.kind == .device)
        // With telemetry, the full decoder's path.
        #expect(Self.accepted(Self.payload(#","telemetry":{"battery_mv":3000}"#, kind: "findmy"))?.kind == .device)
        #expect(Self.accepted(Self.payload(kind: "ibeacon"))?.kind == .iBeacon)
    }

    @Test func aProximityThisReleaseDoesNotKnowIsUnknown() {
        let r = Self.accepted(Self.payload(proximity: "very_near"))
        #expect(r?.proximity == .unknown)
        #expect(r?.rssiFiltered == -67.4 && r?.distance == 2.1, "the level and distance stand")
        #expect(Self.accepted(Self.payload(#","telemetry":{"battery_mv":3000}"#, proximity: "very_near"))?.proximity == .unknown)
    }

    @Test func keysThisReleaseDoesNotKnowAreSkipped() {
        #expect(Self.accepted(Self.payload(#","battery_state":"ok","gain_db":-3.5,"moving":true"#))?.rssi == -68)
        #expect(Self.accepted(Self.payload(#","extra":{"nested":[1,2]}"#))?.rssi == -68)
    }

    /// An agent that keeps silent beacons for hours (`ranging.forget_after_s` up to a day)
    /// measures gaps of hours: no cadence, but the reading is a beacon heard.
    @Test func anIntervalOfHoursIsTakenAsNone() {
        let r = Self.accepted(Self.payload(interval: "5400"))
        #expect(r != nil && r?.interval == nil)
        var intake = InputIntake(topics: Topics())
        guard case .failure(let why) = intake.accept(topic: Self.topic, payload: Self.payload(interval: "-1")) else {
            Issue.record("a negative interval is no reading's")
            return
        }
        #expect(why.reason == .outOfRange)
    }
}
