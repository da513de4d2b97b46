import Shared

/// Recognises `<prefix>/nodes/<node>/beacons/<id>` without splitting the topic
/// into strings, and remembers the beacon ids it has validated. `Topics.parse`
/// spent more time per reading than fusion; this gives the same answer for
/// reading topics and leaves every other topic to `Topics.parse`.
struct ReadingTopicMatcher: Sendable {
    private let nodesPrefix: [UInt8]
    private static let beaconsLevel = Array("beacons/".utf8)
    /// Valid ids seen so far. Bounded: a flood of made-up ids empties it rather than growing memory.
    private var ids: [Substring: BeaconID] = [:]
    static let idCacheLimit = 100_000
    var cachedIDs: Int { ids.count }

    init(topics: Topics) {
        nodesPrefix = Array(topics.nodesPrefix.utf8)
    }

    /// What a topic of the reading shape names.
    enum Match: Equatable {
        /// A reading topic; the same node and id `Topics.parse` would give.
        case reading(node: String, id: BeaconID)
        /// The reading shape, but the id is not a valid beacon id (`Topics.parse` gives nil).
        case invalidID
        /// Not the reading shape: ask `Topics.parse`.
        case other
    }

    mutating func match(_ topic: String) -> Match {
        // Scanned as bytes in the string's own storage (a topic from the broker is native
        // UTF-8): the prefix compared at once, the slashes found without index arithmetic.
        let prefix = nodesPrefix
        let shape = topic.utf8.withContiguousStorageIfAvailable { b -> (slash: Int, idStart: Int)? in
            guard b.count > prefix.count, b.prefix(prefix.count).elementsEqual(prefix) else { return nil }
            guard let slash = b[prefix.count...].firstIndex(of: UInt8(ascii: "/")), slash != prefix.count else { return nil }
            let level = slash + 1, idStart = level + Self.beaconsLevel.count
            guard idStart < b.count, b[level..<idStart].elementsEqual(Self.beaconsLevel),
                  !b[idStart...].contains(UInt8(ascii: "/")) else { return nil }
            return (slash, idStart)
        }
        guard let found = shape else { return matchIndexed(topic) }
        guard let (slash, idOffset) = found else { return .other }
        let utf8 = topic.utf8
        let nodeStart = utf8.index(utf8.startIndex, offsetBy: prefix.count)
        let node = String(topic[nodeStart..<utf8.index(utf8.startIndex, offsetBy: slash)])
        return reading(node: node, idText: topic[utf8.index(utf8.startIndex, offsetBy: idOffset)...])
    }

    /// The same match through string indices, for a string without contiguous UTF-8 storage.
    private mutating func matchIndexed(_ topic: String) -> Match {
        let utf8 = topic.utf8
        guard utf8.starts(with: nodesPrefix) else { return .other }
        let nodeStart = utf8.index(utf8.startIndex, offsetBy: nodesPrefix.count)
        guard let slash = utf8[nodeStart...].firstIndex(of: UInt8(ascii: "/")), slash != nodeStart else { return .other }
        let afterSlash = utf8.index(after: slash)
        guard utf8[afterSlash...].starts(with: Self.beaconsLevel) else { return .other }
        let idStart = utf8.index(afterSlash, offsetBy: Self.beaconsLevel.count)
        guard idStart != utf8.endIndex, !utf8[idStart...].contains(UInt8(ascii: "/")) else { return .other }
        return reading(node: String(topic[nodeStart..<slash]), idText: topic[idStart...])
    }

    private mutating func reading(node: String, idText: Substring) -> Match {
        if let id = ids[idText] { return .reading(node: node, id: id) }
        guard let id = BeaconID(String(idText)) else { return .invalidID }
        if ids.count >= Self.idCacheLimit { ids.removeAll(keepingCapacity: true) }
        ids[Substring(id.rawValue)] = id
        return .reading(node: node, id: id)
    }
}
