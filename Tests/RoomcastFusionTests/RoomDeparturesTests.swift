import Foundation
import Testing
@testable import RoomcastFusion
import Shared

/// Away sooner from a room beacons leave from, learned as the site runs (`RoomDepartures`).
@Suite struct RoomDeparturesTests {
    /// The kitchen is the entrance here: beacons heard there, then silent, have gone.
    struct Site {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: FusionSettings())
        var synth = Synthetic()
        var t = 0.0

        /// `id` heard by `node` (the other node 20 dB fainter) five times a second for `seconds`.
        mutating func hear(_ id: BeaconID, by node: String, for seconds: Double) {
            let other = node == "n-kitchen" ? "n-office" : "n-kitchen"
            let end = t + seconds
            while t < end {
                engine.ingest(synth.reading(node, rssi: -60, at: t, id: id), now: t)
                engine.ingest(synth.reading(other, rssi: -80, at: t, id: id), now: t)
                _ = engine.tick(now: t)
                t += 0.2
            }
        }

        /// Silence for `seconds`; when `id` was shown away, how long after its last reading.
        mutating func silence(_ id: BeaconID, for seconds: Double) -> Double? {
            let start = t - 0.2
            let end = t + seconds
            var awayAfter: Double?
            while t < end {
                _ = engine.tick(now: t)
                if awayAfter == nil, let d = engine.decision(for: id), d.room == nil { awayAfter = t - start }
                t += 0.2
            }
            return awayAfter
        }
    }

    static func id(_ minor: Int) -> BeaconID {
        BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-7-\(minor)")!
    }

    @Test func aBeaconSilentWhereBeaconsLeaveFromIsAwayWithinSeconds() throws {
        var site = Site()
        // A tag in the office missed for 8 s, then heard again: a return there.
        site.hear(Self.id(9), by: "n-office", for: 20)
        #expect(site.silence(Self.id(9), for: 8) == nil)
        site.hear(Self.id(9), by: "n-office", for: 5)
        // The first to leave from the kitchen waits out the away timeout: nothing is known yet.
        site.hear(Self.id(1), by: "n-kitchen", for: 20)
        let firstAway = site.silence(Self.id(1), for: 40)
        let first = try #require(firstAway)
        #expect(first > 30 && first < 31, "first away after \(first) s")
        // The next goes after a few seconds: more left from the kitchen than came back.
        site.hear(Self.id(2), by: "n-kitchen", for: 20)
        let secondAway = site.silence(Self.id(2), for: 40)
        let second = try #require(secondAway)
        #expect(second > 4 && second < 6, "second away after \(second) s")
        // A beacon silent in the office, where silences have ended in coming back, keeps its room.
        site.hear(Self.id(3), by: "n-office", for: 20)
        let officeAway = site.silence(Self.id(3), for: 40)
        let office = try #require(officeAway)
        #expect(office > 30, "office away after \(office) s")
    }

    @Test func aRoomWithNoSilencesOfItsOwnGoesByTheSite() throws {
        // Before anyone has left, a beacon silent in the office waits out the timeout.
        var quiet = Site()
        quiet.hear(Self.id(1), by: "n-office", for: 20)
        let quietAway = quiet.silence(Self.id(1), for: 40)
        let waited = try #require(quietAway)
        #expect(waited > 30, "away after \(waited) s with no departure anywhere")
        // Once beacons have left from the kitchen, one silent in the office, where nothing has
        // ever fallen silent, has most likely left too.
        var site = Site()
        site.hear(Self.id(1), by: "n-kitchen", for: 20)
        #expect(site.silence(Self.id(1), for: 40) != nil)
        site.hear(Self.id(2), by: "n-office", for: 20)
        let firstOfficeAway = site.silence(Self.id(2), for: 10)
        let officeAway = try #require(firstOfficeAway)
        #expect(officeAway > 4 && officeAway < 6, "office away after \(officeAway) s")
        // Heard again in the office within the timeout: not a departure after all. The office now
        // goes by its own count (one return), so the next silence there keeps the room.
        site.hear(Self.id(2), by: "n-office", for: 5)
        #expect(site.engine.decision(for: Self.id(2))?.room == "office")
        let nextAway = site.silence(Self.id(2), for: 40)
        let next = try #require(nextAway)
        #expect(next > 30, "office away after \(next) s once a beacon came back there")
    }

    /// A tag that sends a burst of packets every 10 s (its advertising interval 0.1 s, as the
    /// agent measures it) lying in the entrance: its readings come every 10 s, and the gaps
    /// between them are its pace, not silences. It is never let go between bursts; gone, it is
    /// let go after five of its gaps, not after five of its packets' intervals. Listed, it is
    /// placed at its first burst, before its cadence is known: not let go before it is.
    @Test func aTagHeardInBurstsIsNotLetGoBetweenThem() throws {
        var site = Site()
        var listed = Synthetic.twoRooms
        listed.beacons = [1, 2, 20].map { .init(id: Self.id($0)) }
        site.engine = FusionEngine(site: listed, settings: FusionSettings())
        for minor in 1...2 {
            site.hear(Self.id(minor), by: "n-kitchen", for: 20)
            _ = site.silence(Self.id(minor), for: 40)
        }
        #expect(site.engine.learnedRooms.departures.first?.left == 2, "the kitchen is the entrance")
        let tag = Self.id(20)
        var changes: [PresenceDecision] = []
        for burst in 0..<18 {
            let start = site.t + Double(burst) * 10
            for k in 0..<3 {
                let t = start + Double(k) * 0.1
                site.engine.ingest(site.synth.reading("n-kitchen", rssi: -60, at: t, id: tag, interval: 0.1), now: t)
                site.engine.ingest(site.synth.reading("n-office", rssi: -80, at: t, id: tag, interval: 0.1), now: t)
            }
            for tick in stride(from: start + 0.25, to: start + 10, by: 0.5) {
                changes += site.engine.tick(now: tick).filter { $0.id == tag }
            }
        }
        #expect(changes.map { $0.room ?? "away" } == ["kitchen"], "\(changes.map { ($0.ts, $0.room ?? "away") })")
        // Gone after its last burst (at 170 s into the run): let go five gaps later.
        let last = site.t + 170.2
        var away: Double?
        for tick in stride(from: last + 10, to: last + 120, by: 0.5) where away == nil {
            if site.engine.tick(now: tick).contains(where: { $0.id == tag && $0.room == nil }) { away = tick - last }
        }
        let gone = try #require(away)
        #expect(gone > 45 && gone < 56, "let go \(gone) s after its last burst")
    }

    @Test func aRoomMistakenForAnEntranceCorrectsItself() throws {
        var site = Site()
        for minor in 1...2 {
            site.hear(Self.id(minor), by: "n-kitchen", for: 20)
            _ = site.silence(Self.id(minor), for: 40)
        }
        // A tag lying in the kitchen, missed for 8 s at a time: let go, then followed back.
        let tag = Self.id(10)
        site.hear(tag, by: "n-kitchen", for: 20)
        var letGo = 0
        for _ in 0..<4 {
            if site.silence(tag, for: 8) != nil { letGo += 1 }
            site.hear(tag, by: "n-kitchen", for: 5)
            #expect(site.engine.decision(for: tag)?.room == "kitchen")
        }
        // Each return in time undoes a departure and counts against the kitchen: after two,
        // it no longer favours leaving, and a silence of 8 s keeps the room.
        #expect(letGo == 2, "let go \(letGo) of 4 times")
    }

    /// A room that was the entrance for a year (hundreds of departures read back) and is one no
    /// longer (the door is not used, or its node was moved under the same name): a tag lying
    /// there, missed now and then, is let go only until the room's recent silences say it comes
    /// back. Its counts were kept whole and it took as many returns as there had been departures.
    @Test func aRoomFollowsAChangeOfHabitWithinItsRecentSilences() throws {
        var site = Site()
        site.engine.restore(LearnedRooms(departures: [.init(room: "kitchen", left: 500, returned: 0)]))
        let tag = Self.id(10)
        site.hear(tag, by: "n-kitchen", for: 20)
        var letGo: [Bool] = []
        for _ in 0..<40 {
            letGo.append(site.silence(tag, for: 8) != nil)
            site.hear(tag, by: "n-kitchen", for: 5)
        }
        #expect(letGo.prefix(3).allSatisfy { $0 }, "still taken for the entrance at first: \(letGo)")
        #expect(letGo.suffix(10).allSatisfy { !$0 }, "let go after its habit changed: \(letGo)")
        let kitchen = try #require(site.engine.learnedRooms.departures.first { $0.room == "kitchen" })
        #expect(kitchen.left + kitchen.returned <= 32)
    }

    /// Halving a room's counts keeps which of the two is ahead, and a lone return: rounded down,
    /// 17 departures to 16 returns became 8 to 8 (no longer an entrance), and 500 to 1 became 31 to 0.
    @Test func halvingKeepsWhichCountIsAhead() {
        var d = RoomDepartures()
        d.restore([.init(room: "kitchen", left: 17, returned: 15), .init(room: "office", left: 500, returned: 0)],
                  roomIndex: ["kitchen": 0, "office": 1], roomsComeLater: false)
        d.returned(0, undoingDeparture: false)
        #expect(d.favoursLeaving(0), "\(d.record(names: ["kitchen", "office"]))")
        d.returned(1, undoingDeparture: false)
        let office = d.record(names: ["kitchen", "office"]).first { $0.room == "office" }
        #expect(office.map { $0.returned == 1 && $0.left + $0.returned <= RoomDepartures.memory } == true, "\(String(describing: office))")
        // Counts read back from a file can be far past the bound: 18 to 17 stays ahead.
        var big = RoomDepartures()
        big.restore([.init(room: "hall", left: 18, returned: 16)], roomIndex: ["hall": 0], roomsComeLater: false)
        big.returned(0, undoingDeparture: false)
        #expect(big.favoursLeaving(0), "\(big.record(names: ["hall"]))")
    }

    @Test func theCountsOutliveARestart() throws {
        var before = Site()
        before.hear(Self.id(9), by: "n-office", for: 20)
        #expect(before.silence(Self.id(9), for: 8) == nil)
        before.hear(Self.id(9), by: "n-office", for: 5)
        before.hear(Self.id(1), by: "n-kitchen", for: 20)
        #expect(before.silence(Self.id(1), for: 40) != nil)
        // What the state file gets: one departure from the kitchen; in the office one return,
        // and one departure (the office tag, unheard since, went away meanwhile).
        var saved = before.engine.learnedRooms
        #expect(saved.departures == [.init(room: "kitchen", left: 1, returned: 0), .init(room: "office", left: 1, returned: 1)])
        saved.departures.append(.init(room: "cellar", left: 5, returned: 0))
        let file = try LearnedRooms.decode(saved.encoded())
        // A new process restored from the file lets the first beacon silent in the kitchen go
        // within seconds, and keeps the office's.
        var after = Site()
        after.engine.restore(file)
        #expect(after.engine.learnedRooms.departures.map(\.room) == ["kitchen", "office"], "the cellar is not a room of this site")
        after.hear(Self.id(2), by: "n-kitchen", for: 20)
        let kitchenSilence = after.silence(Self.id(2), for: 40)
        let kitchenAway = try #require(kitchenSilence)
        #expect(kitchenAway > 4 && kitchenAway < 6, "kitchen away after \(kitchenAway) s")
        after.hear(Self.id(3), by: "n-office", for: 20)
        let officeSilence = after.silence(Self.id(3), for: 40)
        let officeAway = try #require(officeSilence)
        #expect(officeAway > 30, "office away after \(officeAway) s")
    }

    /// The state file keeps the counts sorted by room name, whatever order the site lists its rooms in.
    @Test func theCountsAreWrittenAsTheStateFileReadsThem() throws {
        let site = SiteModel(rooms: [.init(name: "office"), .init(name: "kitchen")],
                             nodes: [.init(name: "n-office", room: "office"), .init(name: "n-kitchen", room: "kitchen")])
        var engine = FusionEngine(site: site, settings: FusionSettings())
        engine.restore(LearnedRooms(departures: [.init(room: "office", left: 1, returned: 2), .init(room: "kitchen", left: 3, returned: 0)]))
        let learned = engine.learnedRooms
        #expect(learned.departures.map(\.room) == ["kitchen", "office"])
        #expect(try LearnedRooms.decode(learned.encoded()) == learned)
    }

    /// On a site that lists no nodes, each room is made when its node is first heard, after
    /// the state file was read: the counts read back wait for their rooms, apply once the node
    /// reports, and are written back meanwhile (they were dropped, and the next save lost them).
    @Test func onASiteThatListsNoNodesTheCountsWaitForTheirRooms() throws {
        var engine = FusionEngine(site: SiteModel(rooms: [], nodes: []), settings: FusionSettings())
        let counts = [LearnedRooms.Departures(room: "hall-pi", left: 3, returned: 0)]
        engine.restore(LearnedRooms(departures: counts))
        #expect(engine.learnedRooms.departures == counts, "kept before the node is heard")
        var synth = Synthetic()
        let tag = Self.id(4)
        var t = 0.0
        while t < 20 {
            engine.ingest(synth.reading("hall-pi", rssi: -60, at: t, id: tag), now: t)
            _ = engine.tick(now: t)
            t += 0.2
        }
        #expect(engine.decision(for: tag)?.room == "hall-pi")
        #expect(engine.learnedRooms.departures == counts)
        // The hall is where beacons leave from: a silence there is leaving within seconds.
        let start = t - 0.2
        var awayAfter: Double?
        while t < 60, awayAfter == nil {
            _ = engine.tick(now: t)
            if engine.decision(for: tag)?.room == nil { awayAfter = t - start }
            t += 0.2
        }
        let away = try #require(awayAfter)
        #expect(away < 10, "away after \(away) s, not the timeout")
    }

    /// A big site's counts are written so that the file reads back: at most
    /// `maximumDepartureRooms` rooms, the most counted (more than 256 made the file unreadable,
    /// and every taught room with it).
    @Test func aBigSitesCountsReadBack() throws {
        var engine = FusionEngine(site: SiteModel(rooms: [], nodes: []), settings: FusionSettings())
        let many = (0..<(LearnedRooms.maximumDepartureRooms + 10)).map {
            LearnedRooms.Departures(room: String(format: "room-%05d", $0), left: $0 < 10 ? 0 : 1, returned: 0)
        }
        engine.restore(LearnedRooms(departures: many))
        let written = engine.learnedRooms
        #expect(written.departures.count == LearnedRooms.maximumDepartureRooms)
        #expect(!written.departures.contains { $0.left == 0 }, "the least counted are the ones left out")
        #expect(try LearnedRooms.decode(written.encoded()) == written)
        let threeHundred = LearnedRooms(departures: Array(many.suffix(300)))
        #expect(try LearnedRooms.decode(threeHundred.encoded()).departures.count == 300)
    }
}
