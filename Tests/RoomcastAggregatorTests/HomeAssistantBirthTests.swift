import Foundation
import RoomcastFusion
import RoomcastLogging
import Shared
import Testing
@testable import RoomcastAggregator

/// Home Assistant back from a restart says so on its status topic (its birth message). What it
/// reads retained comes back by itself; an mqtt_room report is not retained, and its sensors
/// read `not_home` until the next one, up to a refresh interval of everyone shown away.
@Suite struct HomeAssistantBirthTests {
    static func runtime(standby: Bool = false) -> AggregatorRuntime<FusionEngine> {
        var config = AggregatorConfig(site: site)
        config.output.enabled = [.mqttRoom]
        config.fusion.learnCalibration = false
        let election = standby ? LeaseElection(me: "agg-b", topics: Topics(), duration: 6) : nil
        return AggregatorRuntime(core: config.makeCore(), election: election, refreshInterval: 60, startedAt: 0, logger: .silent)
    }

    static func reports(_ out: [OutboundMessage]) -> [String] {
        out.filter { $0.topic.hasPrefix("room_presence/") }.map(\.topic)
    }

    @Test func homeAssistantBackFromARestartGetsEveryRoomAtOnce() async throws {
        let runtime = Self.runtime()
        #expect(runtime.homeAssistantStatusTopic == "homeassistant/status")
        await runtime.brokerConnected(now: 0)
        for k in 0..<66 {
            let t = 0.5 * Double(k)
            _ = await runtime.handle(topic: Topics().nodeBeacon("kitchen-pi", cat),
                                     payload: try WireFormat.encode(reading("kitchen-pi", rssi: -55, ts: t, seq: UInt64(k + 1))), now: t)
            _ = await runtime.tick(now: t)
            let online = Array("online".utf8)
            switch t {
            case 20:
                // What the broker kept of an earlier birth is no restart.
                #expect(Self.reports(await runtime.handle(topic: "homeassistant/status", payload: online, now: t, retained: true)).isEmpty)
                #expect(Self.reports(await runtime.handle(topic: "homeassistant/status", payload: Array("offline".utf8), now: t)).isEmpty)
            case 22:
                #expect(Self.reports(await runtime.handle(topic: "homeassistant/status", payload: online, now: t)) == ["room_presence/kitchen"])
            case 25:
                // Once per 10 s at most: any client that may write the topic could ask again and again.
                #expect(Self.reports(await runtime.handle(topic: "homeassistant/status", payload: online, now: t)).isEmpty)
            case 32.5:
                #expect(Self.reports(await runtime.handle(topic: "homeassistant/status", payload: online, now: t)) == ["room_presence/kitchen"])
            default:
                break
            }
        }
    }

    @Test func aStandbyLeavesTheAnswerToTheActiveInstance() async throws {
        let runtime = Self.runtime(standby: true)
        await runtime.brokerConnected(now: 0)
        // Another instance holds the lease.
        let lease = try WireFormat.encode(LeaseElection.Lease(holder: "agg-a", expires: 1e9))
        _ = await runtime.handle(topic: Topics().aggregatorLease, payload: lease, now: 0, retained: true)
        for t in stride(from: 0.5, through: 10, by: 0.5) {
            _ = await runtime.handle(topic: Topics().nodeBeacon("kitchen-pi", cat),
                                     payload: try WireFormat.encode(reading("kitchen-pi", rssi: -55, ts: t, seq: UInt64(t * 2))), now: t)
            _ = await runtime.handle(topic: Topics().aggregatorLease, payload: lease, now: t)
            _ = await runtime.tick(now: t)
        }
        #expect(!(await runtime.isActive))
        #expect(Self.reports(await runtime.handle(topic: "homeassistant/status", payload: Array("online".utf8), now: 11)).isEmpty)
    }
}
