import Foundation

/// Decodes `Decodable` types from a `ConfigNode` tree, collecting every
/// problem instead of stopping at the first.
///
/// How it keeps going after an error: a bad scalar read with `decode(_:forKey:)`
/// is recorded and replaced by a placeholder (0, "", false, []) so the rest of
/// the struct still decodes; a bad value read with `decodeIfPresent` is recorded
/// and read as absent, so the type's default applies; when a list element
/// cannot be decoded at all, the remaining elements are still decoded (and
/// discarded) so their problems are reported too. The decoded value is only
/// handed out when no problem was recorded.
public struct ConfigDecoder {
    public init() {}

    /// Outcome of one decoding run: the value (when decoding got that far),
    /// decoding problems and unknown keys.
    public struct Result<T> {
        public var value: T?
        public var problems: [ConfigProblem]
        public var unknownKeys: [ConfigProblem]
        /// Paths whose values were replaced by placeholders or defaults because of a problem.
        public var covered: Set<String>
    }

    /// Decodes `type` from `root`, never throwing: everything wrong ends up in the result.
    public func decode<T: Decodable>(_ type: T.Type, from root: ConfigNode) -> Result<T> {
        let state = DecodingState(root: root)
        let value = try? state.decode(T.self, from: root, at: [], substitute: false)
        return Result(value: value, problems: state.problems, unknownKeys: state.unknownKeys(),
                      covered: state.covered.union(state.problems.map(\.path)))
    }
}

/// Thrown up the decoding stack after the problem was recorded.
struct AlreadyReported: Error {}

/// Why a scalar could not become the requested type.
struct ScalarMismatch: Error {
    var message: String
}

final class DecodingState {
    var problems: [ConfigProblem] = []
    /// Keys each keyed container asked for, by mapping path.
    var requested: [String: Set<String>] = [:]
    /// Mappings read through a keyed container, by path.
    var mappings: [String: ConfigNode] = [:]
    /// Mappings whose keys are all legitimate (read as dictionaries) or whose
    /// type stopped decoding early (so its list of asked-for keys is incomplete).
    var exempt: Set<String> = []
    /// Paths of required keys that were missing.
    var covered: Set<String> = []
    let locations: [String: ConfigLocation]

    init(root: ConfigNode) {
        var index: [String: ConfigLocation] = [:]
        Self.indexLocations(root, path: "", into: &index)
        locations = index
    }

    static func indexLocations(_ node: ConfigNode, path: String, into index: inout [String: ConfigLocation]) {
        index[path] = node.location
        switch node.kind {
        case .mapping(let entries):
            for e in entries { indexLocations(e.value, path: ConfigPath.child(path, e.key), into: &index) }
        case .sequence(let items):
            for (i, item) in items.enumerated() { indexLocations(item, path: ConfigPath.child(path, i), into: &index) }
        case .scalar, .null:
            break
        }
    }

    /// The location of `path`, or of its nearest ancestor in the tree.
    func location(of path: String) -> ConfigLocation? {
        var p: String? = path
        while let current = p {
            if let loc = locations[current] { return loc }
            p = ConfigPath.parent(of: current)
        }
        return nil
    }

    func record(_ path: String, _ message: String, at location: ConfigLocation? = nil) {
        problems.append(ConfigProblem(path: path, message: message, location: location ?? self.location(of: path)))
    }

    func decode<T: Decodable>(_ type: T.Type, from node: ConfigNode, at path: [any CodingKey], substitute: Bool) throws -> T {
        let pathString = ConfigPath.render(path)
        if let result = Self.scalar(T.self, from: node) {
            switch result {
            case .success(let v):
                return v
            case .failure(let mismatch):
                record(pathString, mismatch.message, at: node.location)
                if substitute, let placeholder = Self.placeholder(T.self) { return placeholder }
                throw AlreadyReported()
            }
        }
        do {
            return try T(from: NodeDecoder(node: node, codingPath: path, state: self))
        } catch let error {
            exempt.insert(pathString)
            switch error {
            case is AlreadyReported:
                break
            case let error as DecodingError:
                record(error, fallbackPath: pathString)
            default:
                record(pathString, String(describing: error), at: node.location)
            }
            if substitute, let placeholder = Self.placeholder(T.self) { return placeholder }
            throw AlreadyReported()
        }
    }

    func record(_ error: DecodingError, fallbackPath: String) {
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c):
            let p = c.codingPath.isEmpty ? fallbackPath : ConfigPath.render(c.codingPath)
            record(p, c.debugDescription)
        case .keyNotFound(let key, let c):
            record(ConfigPath.render(c.codingPath), "missing required key '\(key.stringValue)'")
        @unknown default:
            record(fallbackPath, String(describing: error))
        }
    }

    func unknownKeys() -> [ConfigProblem] {
        var result: [ConfigProblem] = []
        for (path, node) in mappings where !exempt.contains(path) {
            guard case .mapping(let entries) = node.kind else { continue }
            let known = requested[path] ?? []
            for entry in entries where !known.contains(entry.key) {
                var message = "unknown key"
                if let guess = Suggestion.closest(to: entry.key, in: known) { message += "; did you mean '\(guess)'?" }
                result.append(ConfigProblem(path: ConfigPath.child(path, entry.key), message: message, location: entry.keyLocation))
            }
        }
        return result.sorted { ($0.location?.line ?? 0, $0.path) < ($1.location?.line ?? 0, $1.path) }
    }

    // MARK: Scalars

    /// nil when `T` is not a scalar type this decoder reads itself.
    static func scalar<T>(_ type: T.Type, from node: ConfigNode) -> Swift.Result<T, ScalarMismatch>? {
        if T.self == String.self {
            return text(node, expected: "text").map { $0 as! T }
        }
        if T.self == Bool.self {
            return bool(node).map { $0 as! T }
        }
        if T.self == BeaconID.self {
            return text(node, expected: "a beacon id").flatMap { s in
                BeaconID(s).map { .success($0 as! T) } ?? .failure(ScalarMismatch(message: "not a beacon id '\(ConfigNode.excerpt(s))'"))
            }
        }
        if let integer = T.self as? any FixedWidthInteger.Type {
            return Self.erasedInteger(integer, node).map { $0 as! T }
        }
        if let float = T.self as? any BinaryFloatingPoint.Type {
            return Self.erasedFloat(float, node).map { $0 as! T }
        }
        return nil
    }

    static func firstCase<E: ConfigEnum>(_ type: E.Type) -> Any? {
        E.allCases.first
    }

    static func erasedInteger<I: FixedWidthInteger>(_ type: I.Type, _ node: ConfigNode) -> Swift.Result<Any, ScalarMismatch> {
        integer(type, node).map { $0 as Any }
    }

    static func erasedFloat<F: BinaryFloatingPoint>(_ type: F.Type, _ node: ConfigNode) -> Swift.Result<Any, ScalarMismatch> {
        float(type, node).map { $0 as Any }
    }

    static func text(_ node: ConfigNode, expected: String) -> Swift.Result<String, ScalarMismatch> {
        if case .scalar(let s, _) = node.kind { return .success(s) }
        return .failure(ScalarMismatch(message: "expected \(expected), found \(node.kindDescription)"))
    }

    static func bool(_ node: ConfigNode) -> Swift.Result<Bool, ScalarMismatch> {
        if case .scalar(let s, .plain) = node.kind {
            switch s {
            case "true", "True", "TRUE": return .success(true)
            case "false", "False", "FALSE": return .success(false)
            default: break
            }
        }
        return .failure(ScalarMismatch(message: "expected true or false, found \(node.kindDescription)"))
    }

    static func integer<I: FixedWidthInteger>(_ type: I.Type, _ node: ConfigNode) -> Swift.Result<I, ScalarMismatch> {
        let range = "\(I.min)...\(I.max)"
        guard case .scalar(let s, .plain) = node.kind, let wide = parseInteger(s) else {
            return .failure(ScalarMismatch(message: "expected an integer, found \(node.kindDescription)"))
        }
        guard let v = I(exactly: wide) else {
            return .failure(ScalarMismatch(message: "expected an integer in \(range), found \(node.kindDescription)"))
        }
        return .success(v)
    }

    /// Decimal, `0x` hex and `0o` octal, with an optional sign (YAML 1.2 core schema).
    static func parseInteger(_ text: String) -> Int64? {
        var s = Substring(text)
        var negative = false
        if s.first == "-" || s.first == "+" { negative = s.first == "-"; s = s.dropFirst() }
        var radix = 10
        if s.hasPrefix("0x") || s.hasPrefix("0X") { radix = 16; s = s.dropFirst(2) }
        else if s.hasPrefix("0o") { radix = 8; s = s.dropFirst(2) }
        guard !s.isEmpty, s.allSatisfy({ $0.isHexDigit }), let magnitude = UInt64(s, radix: radix) else { return nil }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        return Int64(exactly: magnitude)
    }

    static func float<F: BinaryFloatingPoint>(_ type: F.Type, _ node: ConfigNode) -> Swift.Result<F, ScalarMismatch> {
        if case .scalar(let s, .plain) = node.kind, [".inf", "+.inf", "-.inf", ".nan"].contains(s.lowercased()) {
            return .failure(ScalarMismatch(message: "expected a finite number, found \(node.kindDescription)"))
        }
        guard case .scalar(let s, .plain) = node.kind,
              s.allSatisfy({ $0.isNumber || "+-.eE".contains($0) }) || parseInteger(s) != nil,
              let d = Double(s) ?? parseInteger(s).map(Double.init) else {
            return .failure(ScalarMismatch(message: "expected a number, found \(node.kindDescription)"))
        }
        guard d.isFinite, F(d).isFinite else {
            return .failure(ScalarMismatch(message: "expected a finite number, found \(node.kindDescription)"))
        }
        return .success(F(d))
    }

    /// A stand-in so decoding can go on after a recorded problem; never handed out.
    static func placeholder<T>(_ type: T.Type) -> T? {
        if T.self == String.self { return ("" as! T) }
        if T.self == Bool.self { return (false as! T) }
        if let integer = T.self as? any FixedWidthInteger.Type { return (integer.zero as! T) }
        if let float = T.self as? any BinaryFloatingPoint.Type { return (float.init(0) as! T) }
        if let collection = T.self as? any RangeReplaceableCollection.Type { return (collection.init() as! T) }
        if let stand = T.self as? any ConfigPlaceholder.Type { return (stand.configPlaceholder as! T) }
        if let choice = T.self as? any (ConfigEnum).Type { return firstCase(choice) as? T }
        return nil
    }
}

/// The `Decoder` handed to `init(from:)`; one per node.
struct NodeDecoder: Decoder {
    let node: ConfigNode
    let codingPath: [any CodingKey]
    let state: DecodingState
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    var path: String { ConfigPath.render(codingPath) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch node.kind {
        case .mapping(let entries):
            return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, entries: entries))
        case .null:
            // `mqtt:` with nothing under it reads as an empty section: all defaults.
            return KeyedDecodingContainer(KeyedContainer<Key>(decoder: self, entries: []))
        default:
            state.record(path, "expected a mapping, found \(node.kindDescription)", at: node.location)
            throw AlreadyReported()
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .sequence(let items) = node.kind else {
            state.record(path, "expected a list, found \(node.kindDescription)", at: node.location)
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
            state.record(decoder.path, "missing required key '\(key.stringValue)'", at: decoder.node.location)
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
