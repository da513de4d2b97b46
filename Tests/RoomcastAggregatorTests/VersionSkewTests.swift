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

/// What the aggregators of a site share, written by a newer release: its receiver calibration
/// and what the intake says of a payload of another contract version.
@Suite struct SharedStateSkewTests {
    /// A source of calibration a newer release names refused the whole retained report, and
    /// every receiver started again from 0 dB; it is kept, and published again as it came.
    @Test func aCalibrationSourceThisReleaseDoesNotKnowKeepsTheReport() throws {
        let payload = Array(#"{"nodes":[{"node":"kitchen-pi","offset_db":2.5,"source":"node_beacons"},{"node":"hall-pi","offset_db":-0.4,"source":"taught"}],"ts":1767225660.0,"v":1}"#.utf8)
        var intake = InputIntake(topics: Topics())
        guard case .success(.retainedCalibration(let report)) = intake.accept(topic: Topics().aggregatorCalibration, payload: payload) else {
            Issue.record("refused")
            return
        }
        #expect(report.nodes.map(\.offsetDb) == [2.5, -0.4])
        #expect(report.nodes.map(\.source) == [.nodeBeacons, .init(rawValue: "taught")])
        #expect(String(decoding: try WireFormat.encode(report), as: UTF8.self).contains(#""source":"taught""#))
        let long = Array(#"{"nodes":[{"node":"a","offset_db":1,"source":"\#(String(repeating: "x", count: 65))"}],"ts":1,"v":1}"#.utf8)
        guard case .failure(let why) = intake.accept(topic: Topics().aggregatorCalibration, payload: long) else {
            Issue.record("a source no release writes is refused")
            return
        }
        #expect(why.reason == .badPayload)
    }

    /// Another contract version is `bad_version` on every topic, as it is for a reading: the
    /// count says an upgrade is half done, not that a payload is broken.
    @Test(arguments: [Topics().nodeHeartbeat("kitchen-pi"), Topics().aggregatorCalibration, Topics().aggregatorLearnState,
                      Topics().presence(BeaconID("mac:a4c138aabbcc")!)])
    func anotherContractVersionIsABadVersionEverywhere(topic: String) {
        var intake = InputIntake(topics: Topics())
        guard case .failure(let why) = intake.accept(topic: topic, payload: Array(#"{"ts":1,"v":2}"#.utf8)) else {
            Issue.record("accepted")
            return
        }
        #expect(why.reason == .badVersion, "\(why.message)")
    }
}
