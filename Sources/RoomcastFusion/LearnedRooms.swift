import Foundation
import Shared

/// What the site learned: per room the user taught, how each node hears a beacon carried
/// there; and per room, how many silences there ended in the beacon leaving the site or in
/// its coming back (`RoomDepartures`), so that where beacons leave from outlives a restart.
///
/// The state file also keeps the room each beacon was last published in (`placed`): a broker
/// that kept nothing across a power cut has no retained presence to resume from, and this does.
///
/// Its JSON (the aggregator's state file; the `learn/state` topic carries its rooms) has the
/// keys `version`, `rooms`, `departures`, `placed`; per room `name`, `seconds`, `nodes`, per node
/// `node`, `seconds`, `mean`, `spread`, `room`; per departure record `room`, `left`, `returned`;
/// per placement `beacon`, `name`, `room`, `since`, `seen`, `node`, `confidence`, `reason`, `at` — one word each, so
/// snake_case and Swift spelling agree. `departures` and `placed` are left out when empty (and a
/// file without one reads as none: files written before it existed read as they were). Decoding
/// checks every value (`LearnedRooms.decode`): a file that is not what this writes is an
/// error naming the first bad value's path, never a partial result.
public struct LearnedRooms: Codable, Sendable, Equatable {
    public struct Room: Codable, Sendable, Equatable {
        public var name: String
        /// Labelled seconds recorded for this room, over every session.
        public var seconds: Double
        /// Sorted by node name.
        public var nodes: [NodeLevel]

        public init(name: String, seconds: Double, nodes: [NodeLevel]) {
            self.name = name
            self.seconds = seconds
            self.nodes = nodes.sorted { $0.node < $1.node }
        }

        /// The level of `node`, if it heard the beacon in this room.
        public func level(of node: String) -> NodeLevel? { nodes.first { $0.node == node } }
    }

    public struct NodeLevel: Codable, Sendable, Equatable {
        public var node: String
        /// Seconds of the label in which this node had fresh evidence of the beacon.
        public var seconds: Double
        /// Mean over those seconds of (the node's fast RSSI average, rx_adjust included, learned offset NOT removed) − the beacon's measured power (dB).
        public var mean: Double
        /// Standard deviation of the same (dB).
        public var spread: Double
        /// The room the node stood in when this was taught (its `nodes[].room`; on a site that
        /// lists no nodes, the room of its name). A node moved to another room since hears this
        /// room otherwise: its level is not used there until it is back, or the room is taught
        /// again with it where it is now. Nil where a file did not say (taken as where it is).
        public var room: String?

        public init(node: String, seconds: Double, mean: Double, spread: Double, room: String? = nil) {
            self.node = node
            self.seconds = seconds
            self.mean = mean
            self.spread = spread
            self.room = room
        }
    }

    /// Per room, the silences there that ended in leaving and in coming back.
    public struct Departures: Codable, Sendable, Equatable {
        public var room: String
        /// Silences that ended in the beacon being let go (and not heard again in time).
        public var left: Int
        /// Silences after which the beacon was heard again within the away timeout.
        public var returned: Int

        public init(room: String, left: Int, returned: Int) {
            self.room = room
            self.left = left
            self.returned = returned
        }
    }

    /// A beacon's room as the aggregator last published it: what a restart resumes from when
    /// the broker holds no retained presence of it.
    public struct Placement: Codable, Sendable, Equatable {
        public var beacon: BeaconID
        /// Its display name, as published (a beacon the site does not list has only this one).
        public var name: String?
        public var room: String
        /// When it entered the room (the decision's `since`).
        public var since: Double
        /// When it was last heard (the decision's `last_seen`), if known.
        public var seen: Double?
        /// The node whose evidence decided.
        public var node: String?
        public var confidence: Double
        /// Why it is there (the decision's `reason`): `resting` keeps a tag that sleeps when still
        /// where it lies, `nodes_offline` holds it for its nodes.
        public var reason: String?
        /// When the decision was made (its `ts`).
        public var at: Double

        public init(beacon: BeaconID, name: String? = nil, room: String, since: Double, seen: Double?, node: String?,
                    confidence: Double, reason: String? = nil, at: Double) {
            self.beacon = beacon
            self.name = name
            self.room = room
            self.since = since
            self.seen = seen
            self.node = node
            self.confidence = confidence
            self.reason = reason
            self.at = at
        }
    }

    public var version = 1
    public var rooms: [Room]   // sorted by name
    /// Sorted by room; only rooms with a silence counted.
    public var departures: [Departures]
    /// Sorted by beacon; at most `maximumPlacements`.
    public var placed: [Placement]

    public init(rooms: [Room] = [], departures: [Departures] = [], placed: [Placement] = []) {
        self.rooms = rooms.sorted { $0.name < $1.name }
        self.departures = departures.sorted { $0.room < $1.room }
        self.placed = placed.sorted { $0.beacon < $1.beacon }
    }

    /// The learned room called `named`, if any.
    public func room(named: String) -> Room? { rooms.first { $0.name == named } }

    /// Whether no room has been taught (departure counts aside).
    public var isEmpty: Bool { rooms.isEmpty }

    /// Pools another session into this one: exact pooled mean/variance weighted by seconds.
    ///
    /// Per node, n₁ s at (m₁, s₁) and n₂ s at (m₂, s₂) pool to n₁ + n₂ s at the mean
    /// (n₁m₁ + n₂m₂)/(n₁ + n₂) with the variance of all those seconds together,
    /// (n₁s₁² + n₂s₂² + n₁n₂(m₁ − m₂)²/(n₁ + n₂))/(n₁ + n₂): merging sessions one by one
    /// or all at once gives the same numbers. A room keeps at most `maximumNodes` nodes,
    /// those heard longest; the whole at most `maximumRooms` rooms (a room beyond that is
    /// not added).
    public mutating func merge(_ other: LearnedRooms) {
        for incoming in other.rooms {
            guard let i = rooms.firstIndex(where: { $0.name == incoming.name }) else {
                guard rooms.count < Self.maximumRooms else { continue }
                var room = incoming
                room.nodes = Self.trimmed(room.nodes)
                rooms.append(room)
                continue
            }
            var room = rooms[i]
            room.seconds = min(room.seconds + incoming.seconds, Self.secondsBound)
            for level in incoming.nodes {
                if let j = room.nodes.firstIndex(where: { $0.node == level.node }), let was = room.nodes[j].room,
                   let now = level.room, was != now {
                    // Taught again with the node in another room: the old level is of a place it
                    // left, and goes. The new one keeps its share of the label it was heard in,
                    // or the room's seconds, which count both labels, would understate it.
                    var moved = level
                    if incoming.seconds > 0 { moved.seconds = min(level.seconds / incoming.seconds * room.seconds, Self.secondsBound) }
                    room.nodes[j] = moved
                } else if let j = room.nodes.firstIndex(where: { $0.node == level.node }) {
                    room.nodes[j] = Self.pooled(room.nodes[j], level)
                } else {
                    room.nodes.append(level)
                }
            }
            room.nodes = Self.trimmed(room.nodes)
            rooms[i] = room
        }
        rooms.sort { $0.name < $1.name }
    }

    public mutating func forget(room: String) {
        rooms.removeAll { $0.name == room }
    }

    static func pooled(_ a: NodeLevel, _ b: NodeLevel) -> NodeLevel {
        let n = a.seconds + b.seconds
        guard n > 0 else { return a }
        let mean = (a.seconds * a.mean + b.seconds * b.mean) / n
        let d = a.mean - b.mean
        let m2 = a.seconds * a.spread * a.spread + b.seconds * b.spread * b.spread + a.seconds * b.seconds / n * d * d
        // Clamped to what a state file may hold, so that what is written can be read back.
        return NodeLevel(node: a.node, seconds: min(n, secondsBound), mean: min(max(mean, -meanBound), meanBound),
                         spread: min(max(0, m2 / n).squareRoot(), spreadBound), room: b.room ?? a.room)
    }

    /// At most `maximumNodes`, those heard longest, sorted by name.
    static func trimmed(_ nodes: [NodeLevel]) -> [NodeLevel] {
        var kept = nodes
        if kept.count > maximumNodes {
            kept.sort { $0.seconds != $1.seconds ? $0.seconds > $1.seconds : $0.node < $1.node }
            kept.removeLast(kept.count - maximumNodes)
        }
        return kept.sorted { $0.node < $1.node }
    }

    // MARK: Bounds

    /// Rooms a state holds at most.
    public static let maximumRooms = 256
    /// Rooms with departure counts a state holds at most: a count needs no teaching, so every
    /// room of a big site may have one (`RoomDepartures.record` keeps the most counted).
    public static let maximumDepartureRooms = 4096
    /// Nodes per room at most.
    public static let maximumNodes = 128
    /// Beacons whose last room a state holds at most (`AggregatorCore.placementsToKeep` keeps
    /// the awaited ones first, then those heard last).
    public static let maximumPlacements = 16_384
    /// |time| at most in a placement (seconds since 1970: about the year 33658).
    public static let timeBound = 1e12
    /// A placement's display name at most (bytes).
    public static let maximumNameBytes = 256

    /// Whether `name` may be a placement's display name: at most `maximumNameBytes`, no control characters.
    public static func isValidDisplayName(_ name: String) -> Bool {
        name.utf8.count <= maximumNameBytes && !ControlCharacters.contains(name)
    }
    /// The largest state file read (bytes): every bound above at once, with names JSON escapes to
    /// twice their length, pretty-prints to 52.4 MB (`LearnedRoomsTests.theLargestStateItMayWriteReadsBack`),
    /// so whatever is written reads back.
    public static let maximumFileBytes = 64 * 1024 * 1024
    /// |mean| at most (dB): an RSSI and a measured power are each within −127…20.
    public static let meanBound = 200.0
    /// Spread at most (dB).
    public static let spreadBound = 200.0
    /// Seconds at most, per room or node (about 30 years).
    public static let secondsBound = 1e9
    /// Departures or returns counted per room at most.
    public static let countBound = 1_000_000_000

    // MARK: Coding

    enum CodingKeys: String, CodingKey { case version, rooms, departures, placed }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version)
        try c.encode(rooms, forKey: .rooms)
        if !departures.isEmpty { try c.encode(departures, forKey: .departures) }
        if !placed.isEmpty { try c.encode(placed, forKey: .placed) }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(Int.self, forKey: .version)
        guard version == 1 else {
            throw DecodingError.dataCorruptedError(forKey: .version, in: c, debugDescription: "unsupported version \(version) (this aggregator reads version 1)")
        }
        var list = try c.nestedUnkeyedContainer(forKey: .rooms)
        self.rooms = try Self.decodeUnique(&list, Room.self, most: Self.maximumRooms, of: "rooms", name: \.name)
        var records: [Departures] = []
        if c.contains(.departures) {
            var list = try c.nestedUnkeyedContainer(forKey: .departures)
            records = try Self.decodeUnique(&list, Departures.self, most: Self.maximumDepartureRooms, of: "rooms", name: \.room)
        }
        self.departures = records
        var placements: [Placement] = []
        if c.contains(.placed) {
            var list = try c.nestedUnkeyedContainer(forKey: .placed)
            placements = try Self.decodeUnique(&list, Placement.self, most: Self.maximumPlacements, of: "beacons", name: \.beacon.rawValue)
        }
        self.placed = placements
    }
}

extension LearnedRooms.Placement {
    enum CodingKeys: String, CodingKey { case beacon, name, room, since, seen, node, confidence, reason, at }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        beacon = try c.decode(BeaconID.self, forKey: .beacon)
        if c.contains(.name) {
            let text = try c.decode(String.self, forKey: .name)
            guard LearnedRooms.isValidDisplayName(text) else {
                throw DecodingError.dataCorruptedError(forKey: .name, in: c, debugDescription: "a name of at most \(LearnedRooms.maximumNameBytes) bytes without control characters")
            }
            name = text
        } else {
            name = nil
        }
        room = try LearnedRooms.decodeName(c, .room)
        let times = -LearnedRooms.timeBound...LearnedRooms.timeBound
        since = try LearnedRooms.decodeNumber(c, .since, times)
        seen = c.contains(.seen) ? try LearnedRooms.decodeNumber(c, .seen, times) : nil
        node = c.contains(.node) ? try LearnedRooms.decodeName(c, .node) : nil
        confidence = try LearnedRooms.decodeNumber(c, .confidence, 0...1)
        reason = c.contains(.reason) ? try LearnedRooms.decodeName(c, .reason) : nil
        at = try LearnedRooms.decodeNumber(c, .at, times)
    }
}

extension LearnedRooms.Departures {
    enum CodingKeys: String, CodingKey { case room, left, returned }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        room = try LearnedRooms.decodeName(c, .room)
        left = try LearnedRooms.decodeCount(c, .left)
        returned = try LearnedRooms.decodeCount(c, .returned)
    }
}

extension LearnedRooms.Room {
    enum CodingKeys: String, CodingKey { case name, seconds, nodes }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try LearnedRooms.decodeName(c, .name)
        seconds = try LearnedRooms.decodeNumber(c, .seconds, 0...LearnedRooms.secondsBound)
        var list = try c.nestedUnkeyedContainer(forKey: .nodes)
        nodes = try LearnedRooms.decodeUnique(&list, LearnedRooms.NodeLevel.self, most: LearnedRooms.maximumNodes, of: "nodes", name: \.node)
    }
}

extension LearnedRooms.NodeLevel {
    enum CodingKeys: String, CodingKey { case node, seconds, mean, spread, room }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        node = try LearnedRooms.decodeName(c, .node)
        seconds = try LearnedRooms.decodeNumber(c, .seconds, 0...LearnedRooms.secondsBound)
        mean = try LearnedRooms.decodeNumber(c, .mean, -LearnedRooms.meanBound...LearnedRooms.meanBound)
        spread = try LearnedRooms.decodeNumber(c, .spread, 0...LearnedRooms.spreadBound)
        room = c.contains(.room) ? try LearnedRooms.decodeName(c, .room) : nil
    }
}

extension LearnedRooms {
    static func decodeName<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K) throws -> String {
        let name = try c.decode(String.self, forKey: key)
        if let problem = TopicName.problem(with: name) {
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "name \(problem)")
        }
        return name
    }

    /// A list of at most `most` entries, each named once: sorted by name. `of` says what
    /// they are in the error ("rooms", "nodes").
    static func decodeUnique<T: Decodable>(_ list: inout UnkeyedDecodingContainer, _ type: T.Type, most: Int, of: String,
                                           name: (T) -> String) throws -> [T] {
        var entries: [T] = []
        var names = Set<String>()
        while !list.isAtEnd {
            guard entries.count < most else {
                throw DecodingError.dataCorruptedError(in: list, debugDescription: "more than \(most) \(of)")
            }
            let entry = try list.decode(T.self)
            guard names.insert(name(entry)).inserted else {
                throw DecodingError.dataCorruptedError(in: list, debugDescription: "\(of.dropLast()) '\(name(entry))' appears twice")
            }
            entries.append(entry)
        }
        return entries.sorted { name($0) < name($1) }
    }

    static func decodeCount<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K) throws -> Int {
        // Read as a number first, so that 1.5 is called what it is rather than a JSON error.
        let value = try decodeNumber(c, key, -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude)
        guard value == value.rounded() else {
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "\(value) is not a whole number")
        }
        guard (0...Double(countBound)).contains(value) else {
            // Printed as a whole number, not converted to Int: 1e20 would not fit.
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "\(String(format: "%.0f", value)) is outside 0…\(countBound)")
        }
        return Int(value)
    }

    static func decodeNumber<K: CodingKey>(_ c: KeyedDecodingContainer<K>, _ key: K, _ range: ClosedRange<Double>) throws -> Double {
        let value = try c.decode(Double.self, forKey: key)
        guard value.isFinite else {
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "not a finite number")
        }
        guard range.contains(value) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: c, debugDescription: "\(value) is outside \(range.lowerBound)…\(range.upperBound)")
        }
        return value
    }

    /// Reads a state file's bytes: at most `maximumFileBytes`, JSON as `encoded()` writes
    /// it, every value checked.
    public static func decode(_ bytes: [UInt8]) throws(LearnedRoomsError) -> LearnedRooms {
        guard bytes.count <= maximumFileBytes else { throw .tooLarge(bytes.count) }
        do {
            return try JSONDecoder().decode(LearnedRooms.self, from: Data(bytes))
        } catch let error as DecodingError {
            throw LearnedRoomsError(error)
        } catch {
            throw .notJSON("\(error)")
        }
    }

    /// The JSON written to the state file: sorted keys, one value per line, so a diff
    /// of two files reads.
    public func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        // Every value is a String, a finite Double or an Int: encoding cannot fail.
        return (try? Array(encoder.encode(self))) ?? Array("{\"rooms\":[],\"version\":1}".utf8)
    }
}
