import Foundation

/// A beacon's stable, lowercase, topic-safe identity, e.g.
/// `ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23`.
///
/// Major and minor stay separate numbers (joined by '-') so (675, 23) and
/// (67, 523) never collide. Forms: `ibeacon:<uuid>-<major>-<minor>`,
/// `altbeacon:<id1>-<id2>-<id3>`, `eddystone:<namespace hex>-<instance hex>`,
/// `mac:<12 hex>`, `irk:<name>`, `fp:<rule>-<value>`.
public struct BeaconID: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let rawValue: String
    /// `rawValue`'s hash, taken once: a reading's id is looked up in several tables (the core's,
    /// fusion's, the publisher's), each lookup hashing some 50 bytes again otherwise.
    private let hashOfRawValue: Int

    /// The kind prefix before the first ':'.
    public var scheme: String {
        String(rawValue.prefix(while: { $0 != ":" }))
    }

    public var description: String { rawValue }

    public static func < (a: BeaconID, b: BeaconID) -> Bool { a.rawValue < b.rawValue }

    /// Parses and validates a beacon id string. Returns nil when it is not a
    /// known form or would not be a single topic level.
    public init?(_ text: String) {
        guard let parsed = BeaconID.validate(text) else { return nil }
        self.init(unchecked: parsed)
    }

    private init(unchecked: String) {
        self.rawValue = unchecked
        self.hashOfRawValue = unchecked.hashValue
    }

    public static func == (a: BeaconID, b: BeaconID) -> Bool {
        a.hashOfRawValue == b.hashOfRawValue && a.rawValue == b.rawValue
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(hashOfRawValue)
    }

    public static func iBeacon(uuid: UUID, major: UInt16, minor: UInt16) -> BeaconID {
        BeaconID(unchecked: "ibeacon:\(withUnsafeBytes(of: uuid.uuid) { Hex.uuidString($0) })-\(major)-\(minor)")
    }

    /// AltBeacon: id1 is 16 bytes (a UUID), id2 and id3 are 16-bit numbers.
    public static func altBeacon(id1: [UInt8], id2: UInt16, id3: UInt16) -> BeaconID {
        BeaconID(unchecked: "altbeacon:\(BeaconID.uuidString(id1))-\(id2)-\(id3)")
    }

    public static func eddystone(namespace: [UInt8], instance: [UInt8]) -> BeaconID {
        BeaconID(unchecked: "eddystone:\(Hex.encode(namespace))-\(Hex.encode(instance))")
    }

    /// A device known only by its (public or static) address.
    public static func mac(_ address: [UInt8]) -> BeaconID {
        BeaconID(unchecked: "mac:\(Hex.encode(address))")
    }

    /// A device whose rotating address resolved with the named IRK.
    public static func irk(_ name: String) -> BeaconID? {
        BeaconID("irk:\(name.lowercased())")
    }

    /// A device recognised by a fingerprint rule, e.g. `fp:tile-<hex>`.
    public static func fingerprint(_ rule: String, _ value: String) -> BeaconID? {
        BeaconID("fp:\(rule.lowercased())-\(value.lowercased())")
    }

    /// 16 bytes as a hyphenated lowercase UUID (`Hex.uuidString`); other lengths as plain hex.
    public static func uuidString(_ bytes: [UInt8]) -> String {
        guard bytes.count == 16 else { return Hex.encode(bytes) }
        return bytes.withUnsafeBytes { Hex.uuidString($0) }
    }

    static let allowedSchemes: Set<String> = ["ibeacon", "altbeacon", "eddystone", "mac", "irk", "fp"]

    static func validate(_ text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = String(text[..<colon])
        let rest = text[text.index(after: colon)...]
        guard allowedSchemes.contains(scheme), !rest.isEmpty, text.utf8.count <= 200 else { return nil }
        // Lowercase, topic-safe: letters, digits, '-', '_', '.', ':'.
        for c in text.unicodeScalars {
            switch c {
            case "a"..."z", "0"..."9", "-", "_", ".", ":": continue
            default: return nil
            }
        }
        // The shape each decoder gives, so a hand-written id (a config's known beacon) that
        // no advertisement can ever produce is refused rather than silently never matched.
        let hex = { (part: Substring, count: Int) in part.count == count && part.unicodeScalars.allSatisfy(isLowerHex) }
        switch scheme {
        case "ibeacon", "altbeacon":
            // uuid (36 chars) - major - minor (AltBeacon: its 16-byte id1, then id2 and id3)
            let parts = rest.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 7, zip(parts[0..<5], [8, 4, 4, 4, 12]).allSatisfy(hex),
                  let major = UInt16(parts[5]), let minor = UInt16(parts[6]),
                  String(major) == parts[5], String(minor) == parts[6] else { return nil }
        case "eddystone":
            let parts = rest.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, hex(parts[0], 20), hex(parts[1], 12) else { return nil }
        case "mac":
            guard hex(rest, 12) else { return nil }
        default:
            break
        }
        return text
    }

    /// The forms an id takes, for messages.
    public static let forms = "ibeacon:<uuid>-<major>-<minor>, altbeacon:<id1 uuid>-<id2>-<id3>, "
        + "eddystone:<20 hex namespace>-<12 hex instance>, mac:<12 hex>, irk:<name>, fp:<rule>-<value>"

    /// Why `text` is not a beacon id, said so that a user can mend it: a hand-written id in
    /// capitals, without its UUID's dashes or with a major out of range is the usual mistake,
    /// and copying a UUID from a phone app or an `advertise.uuid` gives capitals. Nil when it is one.
    public static func problem(with text: String) -> String? {
        guard validate(text) == nil else { return nil }
        // Shown in a log or a terminal: printable ASCII only, and not all of a hostile length.
        let printable = text.prefix(80).unicodeScalars.map { (0x20..<0x7F).contains($0.value) ? Character($0) : "?" }
        let shown = "'\(String(printable))'"
        let lower = text.lowercased()
        if validate(lower) != nil { return "\(shown) has capitals: beacon ids are lowercase ('\(lower.prefix(80))')" }
        let scheme = lower.prefix { $0 != ":" }
        guard lower.contains(":"), allowedSchemes.contains(String(scheme)) else {
            return "\(shown) is not a beacon id (forms: \(forms))"
        }
        let rest = lower.drop { $0 != ":" }.dropFirst()
        switch scheme {
        case "ibeacon", "altbeacon":
            let parts = rest.split(separator: "-", omittingEmptySubsequences: false)
            if parts.count == 3, parts[0].count == 32 {
                let u = Array(parts[0])
                let dashed = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(u[$0]) }.joined(separator: "-")
                if let fixed = validate("\(scheme):\(dashed)-\(parts[1])-\(parts[2])") {
                    return "\(shown) needs its UUID's dashes: '\(fixed)'"
                }
            }
            if parts.count == 7 {
                for (name, part) in [("major", parts[5]), ("minor", parts[6])] {
                    guard let n = Int(part) else { return "\(shown): its \(name) '\(part.prefix(12))' is not a whole number" }
                    if !(0...65535).contains(n) { return "\(shown): its \(name) \(n) is outside 0…65535" }
                    if String(n) != part { return "\(shown): its \(name) is written '\(n)', without leading zeros" }
                }
            }
            return "\(shown) is not a beacon id: \(scheme):<uuid, 8-4-4-4-12 hex digits>-<major 0…65535>-<minor 0…65535>"
        case "eddystone":
            return "\(shown) is not a beacon id: eddystone:<20 hex digits of namespace>-<12 hex digits of instance>"
        case "mac":
            return "\(shown) is not a beacon id: mac:<12 hex digits, no colons>"
        default:
            return "\(shown) is not a beacon id: letters, digits, '-', '_', '.' and ':' only, at most 200 bytes"
        }
    }

    private static func isLowerHex(_ c: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(c) || ("a"..."f").contains(c)
    }
}

extension BeaconID: Codable {
    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        let s = try c.decode(String.self)
        guard let id = BeaconID(s) else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "not a beacon id: '\(s.prefix(80))'")
        }
        self = id
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}
