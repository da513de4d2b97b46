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
        // Going away sends nothing (mqtt_room's away_timeout covers it); the refresh repeats the room.
        #expect(try reports(p.publish([decision(nil, distance: nil)], now: 102)).isEmpty)
        #expect(try reports(p.refresh([decision("office", distance: 2)], now: 103)).map(\.room) == ["office"])
        #expect(try reports(PresencePublisher(topics: topics, site: site).refresh([decision("office")], now: 103)).isEmpty)
    }

    /// mqtt_room is told nothing of an away, so it still shows the kitchen: back in the office,
    /// the kitchen hears first that the beacon is out of range, or the office, no closer, waits
    /// for the kitchen's report to age (the next refresh, a minute by default). Back in the
    /// kitchen, the kitchen alone.
    @Test func mqttRoomAfterAnAwayStillMovesFromTheRoomItShows() throws {
        var p = PresencePublisher(topics: topics, site: site, outputs: [.mqttRoom])
        _ = try p.publish([decision("kitchen", distance: 1.5)], now: 100)
        #expect(try reports(p.publish([decision(nil, distance: nil)], now: 101)).isEmpty)
        let back = try reports(p.publish([decision("office", distance: 2)], now: 103))
        #expect(back.map(\.room) == ["kitchen", "office"])
        #expect(back.first?.distance == MQTTRoomReport.outOfRange)
        _ = try p.publish([decision(nil, distance: nil)], now: 104)
        #expect(try reports(p.publish([decision("office", distance: 2)], now: 105)).map(\.room) == ["office"])
        // Forgotten, it starts again: nothing to move from.
        let forgotten = p.forget(cat)
        #expect(forgotten)
        #expect(try reports(p.publish([decision("kitchen", distance: 1)], now: 200)).map(\.room) == ["kitchen"])
    }
}
