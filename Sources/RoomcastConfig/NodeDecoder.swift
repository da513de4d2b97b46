/// The `Decoder` handed to `init(from:)`; one per node.
struct NodeDecoder: Decoder {
    let node: ConfigNode
    let codingPath: [any CodingKey]
    let state: DecodingState
    /// `codingPath` rendered once; containers use it for every key they read.
    let path: String
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(node: ConfigNode, codingPath: [any CodingKey], state: DecodingState) {
        self.node = node
        self.codingPath = codingPath
        self.state = state
        self.path = ConfigPath.render(codingPath)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch node.kind {
        case .mapping(let entries):
            return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, entries: entries))
        case .null:
            // `mqtt:` with nothing under it reads as an empty section: all defaults.
            return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, entries: []))
        default:
            state.record(path, "expected a mapping, found \(node.kindDescription(at: path))", at: node.location)
            throw AlreadyReported()
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .sequence(let items) = node.kind else {
            state.record(path, "expected a list, found \(node.kindDescription(at: path))", at: node.location)
            throw AlreadyReported()
        }
        return UnkeyedContainer(decoder: self, items: items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(decoder: self)
    }
}

struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: NodeDecoder
    let entries: [String: ConfigNode.Entry]
    let ordered: [ConfigNode.Entry]

    init(decoder: NodeDecoder, entries: [ConfigNode.Entry]) {
        self.decoder = decoder
        self.ordered = entries
        var byKey: [String: ConfigNode.Entry] = [:]
        for e in entries where byKey[e.key] == nil { byKey[e.key] = e }
        self.entries = byKey
        decoder.state.mappings[decoder.path] = ConfigNode(.mapping(entries), at: decoder.node.location)
        if decoder.state.requested[decoder.path] == nil { decoder.state.requested[decoder.path] = [] }
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var state: DecodingState { decoder.state }

    var allKeys: [Key] {
        state.exempt.insert(decoder.path)
        return ordered.compactMap { Key(stringValue: $0.key) }
    }

    private func lookup(_ key: Key) -> ConfigNode.Entry? {
        state.requested[decoder.path, default: []].insert(key.stringValue)
        return entries[key.stringValue]
    }

    func contains(_ key: Key) -> Bool { lookup(key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let entry = lookup(key) else { return true }
        return entry.value.kind == .null
    }

    func required<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        guard let entry = lookup(key) else {
            state.record(decoder.path, "missing required key '\(key.stringValue)'", at: decoder.node.location, covers: false)
            state.covered.insert(ConfigPath.child(decoder.path, key.stringValue))
            if let placeholder = DecodingState.placeholder(T.self) { return placeholder }
            throw AlreadyReported()
        }
        return try state.decode(T.self, from: entry.value, at: codingPath + [key], substitute: true)
    }

    func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        guard let entry = lookup(key), entry.value.kind != .null else { return nil }
        // Already recorded; reading it as absent lets the type's default apply
        // and the rest of the document still be checked.
        return try? state.decode(T.self, from: entry.value, at: codingPath + [key], substitute: false)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try required(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try required(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try required(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try required(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try required(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try required(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try required(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try required(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try required(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try required(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try required(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try required(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try required(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try required(type, key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try required(type, key) }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try optional(type, key) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try childDecoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try childDecoder(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        try childDecoder(ConfigPath.NameKey("super"))
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try childDecoder(key)
    }

    private func childDecoder(_ key: any CodingKey) throws -> NodeDecoder {
        state.requested[decoder.path, default: []].insert(key.stringValue)
        guard let entry = entries[key.stringValue] else {
            state.record(decoder.path, "missing required key '\(key.stringValue)'", at: decoder.node.location)
            throw AlreadyReported()
        }
        return NodeDecoder(node: entry.value, codingPath: codingPath + [key], state: state)
    }
}

struct UnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: NodeDecoder
    let items: [ConfigNode]
    var currentIndex = 0

    init(decoder: NodeDecoder, items: [ConfigNode]) {
        self.decoder = decoder
        self.items = items
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { items.count }
    var isAtEnd: Bool { currentIndex >= items.count }

    private func current() throws -> ConfigNode {
        guard currentIndex < items.count else {
            decoder.state.record(decoder.path, "list has only \(items.count) elements", at: decoder.node.location)
            throw AlreadyReported()
        }
        return items[currentIndex]
    }

    mutating func decodeNil() throws -> Bool {
        guard try current().kind == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let node = try current()
        let index = currentIndex
        do {
            let value = try decoder.state.decode(T.self, from: node, at: codingPath + [ConfigPath.IndexKey(index)], substitute: true)
            currentIndex += 1
            return value
        } catch {
            // The list will not decode; still check the elements after this one
            // so every problem in it gets reported, then give up on the list.
            for later in (index + 1)..<max(index + 1, items.count) {
                _ = try? decoder.state.decode(T.self, from: items[later], at: codingPath + [ConfigPath.IndexKey(later)], substitute: true)
            }
            currentIndex = items.count
            throw error
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let d = try next()
        return try d.container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        try next()
    }

    private mutating func next() throws -> NodeDecoder {
        let node = try current()
        defer { currentIndex += 1 }
        return NodeDecoder(node: node, codingPath: codingPath + [ConfigPath.IndexKey(currentIndex)], state: decoder.state)
    }
}

struct SingleValueContainer: SingleValueDecodingContainer {
    let decoder: NodeDecoder
    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool { decoder.node.kind == .null }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decoder.state.decode(T.self, from: decoder.node, at: codingPath, substitute: false)
    }
}
