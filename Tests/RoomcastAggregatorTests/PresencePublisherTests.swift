import Foundation
import Shared
import Testing
@testable import RoomcastAggregator

/// The outputs Home Assistant reads beside the presence JSON: the plain-text room topic its
/// device_tracker takes as state, and the mqtt_room reports (what a real HA 2024.3.3 needed).
@Suite struct PresencePublisherTests {
    let topics = Topics()

    func decision(_ room: String?, distance: Double? = 1.5, ts: Double = 100) -> PresenceDecision {
        PresenceDecision(id: cat, name: "Cat", room: room, floor: 0, distance: distance, confidence: 0.9,
                         node: room.map { "\($0)-pi" }, since: ts, lastSeen: ts, evidence: [], ts: ts)
    }

    func text(_ out: [OutboundMessage], _ topic: String) -> [String] {
        out.filter { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    func reports(_ out: [OutboundMessage]) throws -> [(room: String, distance: Double)] {
        try out.filter { $0.topic.hasPrefix("room_presence/") }.map {
            (String($0.topic.dropFirst("room_presence/".count)), try JSONDecoder().decode(MQTTRoomReport.self, from: Data($0.payload)).distance)
        }
    }

    @Test func plainTextRoomIsRetainedOnChangeAndNotHomeWhenAway() throws {
        var p = PresencePublisher(topics: topics, site: site)
        let room = topics.presenceRoom(cat)
        #expect(room == "roomcast/presence/\(cat.rawValue)/room")
        let first = try p.publish([decision("kitchen")], now: 100)
        #expect(text(first, room) == ["kitchen"])
        #expect(first.first { $0.topic == room }?.retain == true)
        // Same room, new distance: presence JSON again, the room text only on change.
        let same = try p.publish([decision("kitchen", distance: 2)], now: 101)
        #expect(text(same, room).isEmpty && !text(same, topics.presence(cat)).isEmpty)
        #expect(text(try p.publish([decision(nil, distance: nil)], now: 102), room) == ["not_home"])
        #expect(text(try p.refresh([decision("office")], now: 103), room) == ["office"])
    }

    @Test func mqttRoomMoveFirstSendsTheOldRoomOutOfRange() throws {
        var p = PresencePublisher(topics: topics, site: site, outputs: [.mqttRoom])
        #expect(try reports(p.publish([decision("kitchen", distance: 1.5)], now: 100)).map(\.room) == ["kitchen"])
        // A move at the same distance: mqtt_room would ignore it for `timeout` s without the
        // old room's out-of-range report first.
        let moved = try reports(p.publish([decision("office", distance: 1.5)], now: 101))
        #expect(moved.map(\.room) == ["kitchen", "office"])
        #expect(moved[0].distance == MQTTRoomReport.outOfRange && moved[1].distance == 1.5)
        #expect(try reports(p.refresh([decision("office", distance: 2)], now: 103)).map(\.room) == ["office"])
        #expect(try reports(PresencePublisher(topics: topics, site: site).refresh([decision("office")], now: 103)).isEmpty)
    }

    /// mqtt_room is told of an away as the room `not_home` (the state it shows for away), right
    /// after the room left at `outOfRange`, and closer than that, so it is taken at once. Left to
    /// its own `away_timeout`, it kept the last room for good (at 0, its default); and a beacon back
    /// in another room went through the room it had left. Back, the room it comes back to is
    /// closer than the away report, and taken at once too.
    @Test func mqttRoomIsToldOfAnAwayAndOfTheReturn() throws {
        var p = PresencePublisher(topics: topics, site: site, outputs: [.mqttRoom])
        _ = try p.publish([decision("kitchen", distance: 1.5)], now: 100)
        let away = try reports(p.publish([decision(nil, distance: nil)], now: 101))
        #expect(away.map(\.room) == ["kitchen", "not_home"] && away.map(\.distance) == [MQTTRoomReport.outOfRange, MQTTRoomReport.awayDistance])
        #expect(MQTTRoomReport.awayDistance < MQTTRoomReport.outOfRange)
        #expect(try reports(p.refresh([decision(nil, distance: nil)], now: 102)).map(\.room) == ["not_home"], "refreshed as away")
        // Back in the office, straight there: neither through the kitchen, nor through `not_home`
        // out of range (taken again for a moment where the sensor shows another partition's room).
        let back = try reports(p.publish([decision("office", distance: 2)], now: 103))
        #expect(back.map(\.room) == ["office"] && back[0].distance < MQTTRoomReport.awayDistance, "\(back)")
        // A beacon first published away (never heard) is reported away alone.
        var fresh = PresencePublisher(topics: topics, site: site, outputs: [.mqttRoom])
        #expect(try reports(fresh.publish([decision(nil, distance: nil)], now: 100)).map(\.room) == ["not_home"])
        // Forgotten, it starts again: nothing to move from.
        let forgotten = p.forget(cat)
        #expect(forgotten)
        #expect(try reports(p.publish([decision("kitchen", distance: 1)], now: 200)).map(\.room) == ["kitchen"])
    }
}
