import Foundation
import RoomcastFusion
import Shared
import Testing

/// The learned-rooms state: pooling sessions, and reading a state file back.
@Suite struct LearnedRoomsTests {
    typealias Level = LearnedRooms.NodeLevel

    /// Mean and population standard deviation of `values`, each weighted 1 s.
    func stats(_ values: [Double]) -> (mean: Double, spread: Double) {
        let mean = values.reduce(0, +) / Double(values.count)
        let variance = values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)
        return (mean, variance.squareRoot())
    }

    func session(_ room: String, _ node: String, _ values: [Double]) -> LearnedRooms {
        let (mean, spread) = stats(values)
        let seconds = Double(values.count)
        return LearnedRooms(rooms: [.init(name: room, seconds: seconds, nodes: [Level(node: node, seconds: seconds, mean: mean, spread: spread)])])
    }

    @Test func mergingSessionsGivesTheStatisticsOfAllTheirSecondsTogether() throws {
        let a: [Double] = [-20, -22, -25, -21]
        let b: [Double] = [-30, -28, -29]
        var learned = session("kitchen", "k-pi", a)
        learned.merge(session("kitchen", "k-pi", b))
        let level = try #require(learned.room(named: "kitchen")?.level(of: "k-pi"))
        let all = stats(a + b)
        #expect(level.seconds == 7)
        #expect(abs(level.mean - all.mean) < 1e-9)
        #expect(abs(level.spread - all.spread) < 1e-9)
        #expect(learned.room(named: "kitchen")?.seconds == 7)
    }

    @Test func mergingIsTheSameInAnyOrder() {
        let s1 = session("kitchen", "k-pi", [-20, -21]), s2 = session("kitchen", "k-pi", [-35, -30, -33]), s3 = session("kitchen", "k-pi", [-25])
        var forward = s1; forward.merge(s2); forward.merge(s3)
        var backward = s3; backward.merge(s2); backward.merge(s1)
        let f = forward.rooms[0].nodes[0], b = backward.rooms[0].nodes[0]
        #expect(abs(f.mean - b.mean) < 1e-9 && abs(f.spread - b.spread) < 1e-9 && f.seconds == b.seconds)
    }

    @Test func newRoomsAndNodesJoinSorted() {
        var learned = session("office", "o-pi", [-30])
        learned.merge(session("kitchen", "k-pi", [-20]))
        learned.merge(session("office", "a-pi", [-40]))
        #expect(learned.rooms.map(\.name) == ["kitchen", "office"])
        #expect(learned.room(named: "office")?.nodes.map(\.node) == ["a-pi", "o-pi"])
        learned.forget(room: "office")
        #expect(learned.rooms.map(\.name) == ["kitchen"])
    }

    @Test func aRoomKeepsTheNodesHeardLongestWhenFull() {
        let many = (0..<(LearnedRooms.maximumNodes + 5)).map { Level(node: "n\($0)", seconds: Double($0 + 1), mean: -30, spread: 2) }
        var learned = LearnedRooms()
        learned.merge(LearnedRooms(rooms: [.init(name: "hall", seconds: 10, nodes: many)]))
        let kept = learned.room(named: "hall")!.nodes
        #expect(kept.count == LearnedRooms.maximumNodes)
        #expect(!kept.contains { $0.node == "n0" } && kept.contains { $0.node == "n\(LearnedRooms.maximumNodes + 4)" })
    }

    @Test func theStateFileRoundTrips() throws {
        var learned = session("kitchen", "k-pi", [-20, -24.5])
        learned.merge(session("bed room", "b-pi", [-31.25]))
        let bytes = learned.encoded()
        #expect(try LearnedRooms.decode(bytes) == learned)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.contains("\"version\" : 1") && text.contains("\"spread\""))
        // No departure counted: no `departures` key, the file as it always was.
        #expect(!text.contains("departures"))
        learned.departures = [.init(room: "bed room", left: 0, returned: 2), .init(room: "kitchen", left: 3, returned: 1)]
        let counted = learned.encoded()
        let back = try LearnedRooms.decode(counted)
        #expect(back == learned && back.departures.map(\.room) == ["bed room", "kitchen"])
        #expect(String(decoding: counted, as: UTF8.self).contains("\"returned\" : 1"))
        // Rooms last published: `placed`, left out when none, read back sorted by beacon.
        #expect(!String(decoding: counted, as: UTF8.self).contains("placed"))
        let tag = try #require(BeaconID("mac:aabbccddeeff")), other = try #require(BeaconID("mac:0011223344ff"))
        learned.placed = [.init(beacon: tag, name: "Alice's keys \"blue\"", room: "kitchen", since: 100.5, seen: 160.25, node: "k-pi",
                                confidence: 0.9, reason: "resting", at: 161),
                          .init(beacon: other, room: "bed room", since: 50, seen: nil, node: nil, confidence: 1, at: 60)]
        let placed = try LearnedRooms.decode(learned.encoded())
        #expect(placed.placed.map(\.beacon) == [other, tag] && Set(placed.placed.map(\.beacon)) == Set(learned.placed.map(\.beacon)))
        #expect(placed.placed.first { $0.beacon == tag } == learned.placed.first { $0.beacon == tag })
        #expect(placed.placed.first { $0.beacon == other } == learned.placed.first { $0.beacon == other })
    }

    /// A file a later release wrote, with keys this one does not know (at the top, in a room, in
    /// a placement), reads as what this one knows: a downgrade keeps what was taught. Rewritten,
    /// the unknown keys go.
    @Test func keysOfALaterReleaseAreLeftAside() throws {
        let text = """
            {"version":1,"shelf":{"x":1},"rooms":[{"name":"k","seconds":1,"nodes":[],"tint":"blue"}],
             "placed":[{"beacon":"mac:aabbccddeeff","room":"k","since":1,"confidence":1,"at":2,"floor":3}]}
            """
        let learned = try LearnedRooms.decode(Array(text.utf8))
        #expect(learned.rooms.map(\.name) == ["k"] && learned.placed.map(\.room) == ["k"])
        #expect(!String(decoding: learned.encoded(), as: UTF8.self).contains("shelf"))
    }

    @Test(arguments: [
        ("", "not JSON"),
        ("{\"rooms\":[]", "not JSON"),
        ("[]", "expected"),
        ("{\"rooms\":[]}", "version: missing"),
        ("{\"version\":2,\"rooms\":[]}", "version: unsupported version 2"),
        ("{\"version\":1}", "rooms: missing"),
        ("{\"version\":1,\"rooms\":[{\"name\":\"k\",\"seconds\":1}]}", "rooms[0].nodes: missing"),
        ("{\"version\":1,\"rooms\":[{\"name\":\"k/x\",\"seconds\":1,\"nodes\":[]}]}", "rooms[0].name: name must not contain '/'"),
        ("{\"version\":1,\"rooms\":[{\"name\":\"k\",\"seconds\":-1,\"nodes\":[]}]}", "rooms[0].seconds: -1.0 is outside"),
        ("{\"version\":1,\"rooms\":[{\"name\":\"k\",\"seconds\":1,\"nodes\":[{\"node\":\"a\",\"seconds\":1,\"mean\":1e300,\"spread\":1}]}]}", "rooms[0].nodes[0].mean"),
        ("{\"version\":1,\"rooms\":[{\"name\":\"k\",\"seconds\":1,\"nodes\":[{\"node\":\"a\",\"seconds\":1,\"mean\":\"loud\",\"spread\":1}]}]}", "rooms[0].nodes[0].mean: expected a number"),
        ("{\"version\":1,\"rooms\":[{\"name\":\"k\",\"seconds\":1,\"nodes\":[]},{\"name\":\"k\",\"seconds\":1,\"nodes\":[]}]}", "appears twice"),
        ("{\"version\":1,\"rooms\":[],\"departures\":[{\"room\":\"hall\",\"left\":-1,\"returned\":0}]}", "departures[0].left: -1 is outside 0…1000000000"),
        ("{\"version\":1,\"rooms\":[],\"departures\":[{\"room\":\"hall\",\"left\":1}]}", "departures[0].returned: missing"),
        ("{\"version\":1,\"rooms\":[],\"departures\":[{\"room\":\"hall\",\"left\":1e20,\"returned\":0}]}", "departures[0].left: 100000000000000000000 is outside"),
        ("{\"version\":1,\"rooms\":[],\"departures\":[{\"room\":\"hall\",\"left\":1.5,\"returned\":0}]}", "departures[0].left: 1.5 is not a whole number"),
        ("{\"version\":1,\"rooms\":[],\"departures\":[{\"room\":\"h\",\"left\":1,\"returned\":0},{\"room\":\"h\",\"left\":1,\"returned\":0}]}", "room 'h' appears twice"),
        ("{\"version\":1,\"rooms\":[],\"placed\":[{\"beacon\":\"IBEACON:x\",\"room\":\"h\",\"since\":1,\"confidence\":1,\"at\":2}]}", "placed[0].beacon"),
        ("{\"version\":1,\"rooms\":[],\"placed\":[{\"beacon\":\"mac:aabbccddeeff\",\"room\":\"h\",\"since\":1,\"confidence\":1.5,\"at\":2}]}", "placed[0].confidence: 1.5 is outside 0.0…1.0"),
        ("{\"version\":1,\"rooms\":[],\"placed\":[{\"beacon\":\"mac:aabbccddeeff\",\"room\":\"h\",\"confidence\":1,\"at\":2}]}", "placed[0].since: missing"),
        ("{\"version\":1,\"rooms\":[],\"placed\":[{\"beacon\":\"mac:aabbccddeeff\",\"room\":\"h/x\",\"since\":1,\"confidence\":1,\"at\":2}]}", "placed[0].room: name must not contain '/'"),
        ("{\"version\":1,\"rooms\":[],\"placed\":[{\"beacon\":\"mac:aabbccddeeff\",\"name\":\"a\\nb\",\"room\":\"h\",\"since\":1,\"confidence\":1,\"at\":2}]}", "placed[0].name: a name of at most 256 bytes"),
        ("{\"version\":1,\"rooms\":[],\"placed\":[{\"beacon\":\"mac:aabbccddeeff\",\"room\":\"h\",\"since\":1,\"confidence\":1,\"reason\":\"a b/c\",\"at\":2}]}", "placed[0].reason: name"),
        ("{\"version\":1,\"rooms\":[],\"placed\":[{\"beacon\":\"mac:aabbccddeeff\",\"room\":\"h\",\"since\":1,\"confidence\":1,\"at\":2},{\"beacon\":\"mac:aabbccddeeff\",\"room\":\"k\",\"since\":1,\"confidence\":1,\"at\":2}]}", "beacon 'mac:aabbccddeeff' appears twice"),
    ])
    func aBadStateFileIsAClearError(text: String, expected: String) {
        #expect {
            _ = try LearnedRooms.decode(Array(text.utf8))
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test func hugeTablesAndFilesAreRefused() {
        let room = "{\"name\":\"r\",\"seconds\":1,\"nodes\":[]}"
        let rooms = (0...LearnedRooms.maximumRooms).map { room.replacingOccurrences(of: "\"r\"", with: "\"r\($0)\"") }
        let text = "{\"version\":1,\"rooms\":[\(rooms.joined(separator: ","))]}"
        #expect(throws: LearnedRoomsError.self) { try LearnedRooms.decode(Array(text.utf8)) }
        let big = [UInt8](repeating: UInt8(ascii: " "), count: LearnedRooms.maximumFileBytes + 1)
        #expect(throws: LearnedRoomsError.tooLarge(big.count)) { try LearnedRooms.decode(big) }
    }

    /// Whatever the aggregator may write, it reads back: every bound at once (256 rooms of 128
    /// nodes, 4,096 departure counts, 16,384 placements of 200-byte beacon ids and 256-byte display names, 128-byte names
    /// that JSON escapes to twice their length, the longest numbers) stays within the file size
    /// it reads.
    @Test func theLargestStateItMayWriteReadsBack() throws {
        func name(_ k: Int) -> String { String(repeating: "\"", count: 124) + String(format: "%04d", k) }
        let nodes = (0..<LearnedRooms.maximumNodes).map {
            LearnedRooms.NodeLevel(node: name($0), seconds: 999_999_999.999_999_9, mean: -123.456_789_012_345_67,
                                   spread: 198.765_432_109_876_54, room: name($0 + 1))
        }
        let rooms = (0..<LearnedRooms.maximumRooms).map { LearnedRooms.Room(name: name($0), seconds: 999_999_999.999_999_9, nodes: nodes) }
        let departures = (0..<LearnedRooms.maximumDepartureRooms).map {
            LearnedRooms.Departures(room: name($0), left: LearnedRooms.countBound, returned: LearnedRooms.countBound)
        }
        let placed = try (0..<LearnedRooms.maximumPlacements).map { k in
            let id = try #require(BeaconID("irk:" + String(repeating: "x", count: 190) + String(format: "%05d", k)))
            return LearnedRooms.Placement(beacon: id, name: String(repeating: "\"", count: LearnedRooms.maximumNameBytes),
                                          room: name(k % 4096), since: -999_999_999_999.999_9, seen: 999_999_999_999.999_9,
                                          node: name(k % 4096 + 1), confidence: 0.123_456_789_012_345_67, reason: name(k % 4096 + 2),
                                          at: 999_999_999_999.999_9)
        }
        let state = LearnedRooms(rooms: rooms, departures: departures, placed: placed)
        let bytes = state.encoded()
        #expect(bytes.count <= LearnedRooms.maximumFileBytes, "\(bytes.count) bytes")
        #expect(try LearnedRooms.decode(bytes) == state)
    }
}
