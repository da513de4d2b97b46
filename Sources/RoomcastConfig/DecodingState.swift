import Foundation
import Shared

/// The bookkeeping of one decoding run: problems, keys asked for, locations.
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

    /// A problem at `path`. `covers`: the value there was replaced (a placeholder or a default),
    /// so validation problems under it would only repeat this one. A missing key is reported at
    /// its mapping but covers only the key: the mapping's other values were read as written.
    func record(_ path: String, _ message: String, at location: ConfigLocation? = nil, covers: Bool = true) {
        problems.append(ConfigProblem(path: path, message: message, location: location ?? self.location(of: path)))
        if covers { covered.insert(path) }
    }

    func decode<T: Decodable>(_ type: T.Type, from node: ConfigNode, at path: [any CodingKey], substitute: Bool) throws -> T {
        if let result = Self.scalar(T.self, from: node) {
            switch result {
            case .success(let v):
                return v
            case .failure(let mismatch):
                record(ConfigPath.render(path), mismatch.message, at: node.location)
                if substitute, let placeholder = Self.placeholder(T.self) { return placeholder }
                throw AlreadyReported()
            }
        }
        do {
            return try T(from: NodeDecoder(node: node, codingPath: path, state: self))
        } catch let error {
            let pathString = ConfigPath.render(path)
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
            record(ConfigPath.render(c.codingPath), "missing required key '\(key.stringValue)'", covers: false)
            covered.insert(ConfigPath.child(ConfigPath.render(c.codingPath), key.stringValue))
        @unknown default:
            record(fallbackPath, String(describing: error))
        }
    }

    /// What an unknown key is called; `KeyCatalogue` adds where such a key belongs.
    static let unknownKeyMessage = "unknown key"

    func unknownKeys() -> [ConfigProblem] {
        var result: [ConfigProblem] = []
        for (path, node) in mappings where !exempt.contains(path) {
            guard case .mapping(let entries) = node.kind else { continue }
            let known = requested[path] ?? []
            for entry in entries where !known.contains(entry.key) {
                var message = Self.unknownKeyMessage
                if ConfigPath.readsAsSecretEntry(entry.key) {
                    message += " (not shown: it reads as a secret's entry run together; a mapping's entries need a space after the colon)"
                } else if let guess = Suggestion.closest(to: entry.key, in: known) {
                    message += "; did you mean '\(guess)'?"
                }
                result.append(ConfigProblem(path: ConfigPath.child(path, ConfigPath.shownKey(entry.key)), message: message, location: entry.keyLocation))
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
                BeaconID(s).map { .success($0 as! T) } ?? .failure(ScalarMismatch(message: BeaconID.problem(with: s) ?? "not a beacon id"))
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
        let outOfRange = Swift.Result<I, ScalarMismatch>.failure(
            ScalarMismatch(message: "expected an integer in \(range), found \(node.kindDescription)"))
        guard case .scalar(let s, .plain) = node.kind else {
            return .failure(ScalarMismatch(message: "expected an integer, found \(node.kindDescription)"))
        }
        switch readInteger(s) {
        case .value(let wide): return I(exactly: wide).map { .success($0) } ?? outOfRange
        // More digits than 64 bits hold is still an integer, out of range.
        case .tooLarge: return outOfRange
        case .notAnInteger: return .failure(ScalarMismatch(message: "expected an integer, found \(node.kindDescription)"))
        }
    }

    enum IntegerText: Equatable {
        case value(Int128)
        case tooLarge
        case notAnInteger
    }

    /// Decimal, `0x` hex and `0o` octal, with an optional sign (YAML 1.2 core schema): the value
    /// of any 64-bit integer type, signed or not.
    static func readInteger(_ text: String) -> IntegerText {
        var s = Substring(text)
        var negative = false
        if s.first == "-" || s.first == "+" { negative = s.first == "-"; s = s.dropFirst() }
        var radix = 10
        if s.hasPrefix("0x") || s.hasPrefix("0X") { radix = 16; s = s.dropFirst(2) }
        else if s.hasPrefix("0o") { radix = 8; s = s.dropFirst(2) }
        guard !s.isEmpty, s.allSatisfy({ $0.isASCII && ($0.hexDigitValue ?? radix) < radix }) else { return .notAnInteger }
        guard let magnitude = UInt64(s, radix: radix) else { return .tooLarge }
        return .value(negative ? -Int128(magnitude) : Int128(magnitude))
    }

    /// `readInteger`'s value when a 64-bit signed integer holds it.
    static func parseInteger(_ text: String) -> Int64? {
        if case .value(let v) = readInteger(text) { return Int64(exactly: v) }
        return nil
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
