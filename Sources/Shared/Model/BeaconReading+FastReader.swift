/// A hand-written decoder for the aggregator's hottest message. `JSONDecoder`
/// costs about 20 µs per reading on Linux, which capped an aggregator near
/// 50,000 readings/s before it did anything else.
///
/// The fast path takes only what it can decode with certainty: one flat
/// object of known keys, each at most once; strings without escapes; integers
/// as plain digits; decimals without an exponent and with at most 15
/// significant digits; `null` for an optional key (absent, as the Codable path takes it).
/// A key it does not know, with a plain string, number or literal as its value, is skipped
/// as the Codable path ignores it: a newer agent may add optional keys within v1
/// (docs/mqtt-api.md), and each would otherwise send every reading down the slow path.
/// Everything else — a repeated key, an escape, a nested value, `null` for a required key,
/// a version other than ours, a syntax error — goes to the full `WireFormat.decode`, so
/// values and errors are those of the Codable path (tested).
extension BeaconReading {
    /// Decodes a reading payload: the same value, or the same error, as
    /// `WireFormat.decode(BeaconReading.self, from:)`, several times faster.
    /// `expectedID` (the id the topic named) skips validating an id equal to it.
    public static func decodeWire(_ bytes: [UInt8], expectedID: BeaconID? = nil) throws(WireFormatError) -> BeaconReading {
        if bytes.count <= WireFormat.maxPayloadBytes,
           let fast = FastReadingReader.read(bytes, expectedID: expectedID) {
            return fast
        }
        return try WireFormat.decode(BeaconReading.self, from: bytes)
    }
}

/// The fast path of `BeaconReading.decodeWire`: nil means "ask the Codable decoder".
struct FastReadingReader {
    private let b: UnsafeBufferPointer<UInt8>
    private var i = 0
    private let expectedID: BeaconID?

    init(bytes: UnsafeBufferPointer<UInt8>, expectedID: BeaconID?) {
        self.b = bytes
        self.expectedID = expectedID
    }

    /// Keys of the reading, one bit each, to refuse a repeated key and find missing ones.
    private enum Key: Int {
        case v, id, node, ts, seq, rssi, rssiFiltered, power, distance, proximity, kind, mac
        case addressType, name, uuid, major, minor, namespace, instance, url, txPower, interval, samples, rssiSD
    }

    private static let requiredMask: UInt32 = (1 << 12) - 1

    /// What a key in the payload is: one of the reading's, or one to skip.
    private enum KeyRead {
        case known(Key)
        case unknown
    }

    /// The reading when the fast path can decode `bytes`, else nil.
    static func read(_ bytes: [UInt8], expectedID: BeaconID?) -> BeaconReading? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = FastReadingReader(bytes: buffer, expectedID: expectedID)
            return reader.read()
        }
    }

    /// After a member's value: a `,` and another member to read (true), or the `}` that ends
    /// the object (false); nil for anything else.
    @inline(__always)
    private mutating func nextMember() -> Bool? {
        skipSpace()
        if take(0x2C) { skipSpace(); return true }  // ,
        return take(0x7D) ? false : nil  // }
    }

    mutating func read() -> BeaconReading? {
        var v: Int?, id: BeaconID?, node: String?, ts: Double?, seq: UInt64?, rssi: Int?
        var rssiFiltered: Double?, power: Int?, distance: Double?, proximity: Proximity?, kind: BeaconKind?, mac: String?
        var addressType: String?, name: String?, uuid: String?, major: UInt16?, minor: UInt16?
        var namespace: String?, instance: String?, url: String?, txPower: Int?, interval: Double?, samples: Int?
        var rssiSD: Double?
        var seen: UInt32 = 0

        skipSpace()
        guard take(0x7B) else { return nil }  // {
        skipSpace()
        if !take(0x7D) {  // }
            while true {
                guard let read = readKey() else { return nil }
                guard case .known(let key) = read else {
                    skipSpace()
                    guard take(0x3A) else { return nil }  // :
                    skipSpace()
                    guard skipScalar(), let more = nextMember() else { return nil }
                    if more { continue }
                    break
                }
                let bit: UInt32 = 1 << UInt32(key.rawValue)
                guard seen & bit == 0 else { return nil }
                seen |= bit
                skipSpace()
                guard take(0x3A) else { return nil }  // :
                skipSpace()
                // An optional key's null is its absence; a required key's is the Codable path's error.
                if key.rawValue >= Key.addressType.rawValue, takeLiteral("null") {
                    guard let more = nextMember() else { return nil }
                    if more { continue }
                    break
                }
                switch key {
                case .v: guard let x = readInt() else { return nil }; v = x
                case .id:
                    guard let s = readStringBytes() else { return nil }
                    if let expectedID, equals(s, expectedID.rawValue) {
                        id = expectedID
                    } else {
                        guard let text = string(s), let parsed = BeaconID(text) else { return nil }
                        id = parsed
                    }
                case .node: guard let x = readString() else { return nil }; node = x
                case .ts: guard let x = readDouble() else { return nil }; ts = x
                case .seq: guard let x = readUInt64() else { return nil }; seq = x
                case .rssi: guard let x = readInt() else { return nil }; rssi = x
                case .rssiFiltered: guard let x = readDouble() else { return nil }; rssiFiltered = x
                case .power: guard let x = readInt() else { return nil }; power = x
                case .distance: guard let x = readDouble() else { return nil }; distance = x
                case .proximity: guard let x = readCase(Self.proximities, else: .unknown) else { return nil }; proximity = x
                case .kind: guard let x = readCase(Self.kinds, else: .device) else { return nil }; kind = x
                case .mac: guard let x = readString() else { return nil }; mac = x
                case .addressType: guard let x = readString() else { return nil }; addressType = x
                case .name: guard let x = readString() else { return nil }; name = x
                case .uuid: guard let x = readString() else { return nil }; uuid = x
                case .major: guard let x = readInt().flatMap(UInt16.init(exactly:)) else { return nil }; major = x
                case .minor: guard let x = readInt().flatMap(UInt16.init(exactly:)) else { return nil }; minor = x
                case .namespace: guard let x = readString() else { return nil }; namespace = x
                case .instance: guard let x = readString() else { return nil }; instance = x
                case .url: guard let x = readString() else { return nil }; url = x
                case .txPower: guard let x = readInt() else { return nil }; txPower = x
                case .interval: guard let x = readDouble() else { return nil }; interval = x
                case .samples: guard let x = readInt() else { return nil }; samples = x
                case .rssiSD: guard let x = readDouble() else { return nil }; rssiSD = x
                }
                guard let more = nextMember() else { return nil }
                if more { continue }
                break
            }
        }
        skipSpace()
        guard i == b.count, seen & Self.requiredMask == Self.requiredMask, v == WireFormat.version,
              let id, let node, let ts, let seq, let rssi, let rssiFiltered, let power, let distance,
              let proximity, let kind, let mac else { return nil }
        var r = BeaconReading(id: id, node: node, ts: ts, seq: seq, rssi: rssi, rssiFiltered: rssiFiltered, power: power,
                              distance: distance, proximity: proximity, kind: kind, mac: mac)
        r.addressType = addressType
        r.name = name
        r.uuid = uuid
        r.major = major
        r.minor = minor
        r.namespace = namespace
        r.instance = instance
        r.url = url
        r.txPower = txPower
        r.interval = interval
        r.samples = samples
        r.rssiSD = rssiSD
        return r
    }

    // MARK: tokens

    private mutating func skipSpace() {
        while i < b.count {
            switch b[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard i < b.count, b[i] == byte else { return false }
        i += 1
        return true
    }

    /// The raw bytes of a string without escapes or control characters (nil otherwise).
    private mutating func readStringBytes() -> UnsafeBufferPointer<UInt8>? {
        guard take(0x22) else { return nil }
        let start = i
        while i < b.count {
            let c = b[i]
            if c == 0x22 {
                let s = UnsafeBufferPointer(rebasing: b[start..<i])
                i += 1
                return s
            }
            if c == 0x5C || c < 0x20 { return nil }
            i += 1
        }
        return nil
    }

    /// The wire names of an enum's cases as bytes: a string value is matched without making a
    /// String of it (the same cases `init(rawValue:)` accepts: the names are exact, no escapes).
    private static let proximities = Proximity.allCases.map { (Array($0.rawValue.utf8), $0) }
    private static let kinds = BeaconKind.allCases.map { (Array($0.rawValue.utf8), $0) }

    /// The case a string names, else `fallback` for a name it does not know (as the enum's
    /// decoder takes it); nil for what is no plain string.
    private mutating func readCase<E>(_ table: [([UInt8], E)], else fallback: E) -> E? {
        guard let s = readStringBytes() else { return nil }
        for (name, value) in table where name.count == s.count && name.elementsEqual(s) { return value }
        return string(s) == nil ? nil : fallback
    }

    private mutating func readString() -> String? {
        readStringBytes().flatMap(string)
    }

    /// A String of the bytes when they are valid UTF-8 (the Codable path rejects invalid UTF-8).
    private func string(_ s: UnsafeBufferPointer<UInt8>) -> String? {
        var ascii = true
        for c in s where c >= 0x80 { ascii = false; break }
        if ascii { return String(decoding: s, as: UTF8.self) }
        return String(validating: s, as: UTF8.self)
    }

    private func equals(_ s: UnsafeBufferPointer<UInt8>, _ text: String) -> Bool {
        var text = text
        return text.withUTF8 { t in t.count == s.count && t.elementsEqual(s) }
    }

    /// An exact literal (`null`, `true`, `false`) at the cursor, taken.
    private mutating func takeLiteral(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard b.count - i >= n,
              UnsafeBufferPointer(start: word.utf8Start, count: n).elementsEqual(UnsafeBufferPointer(rebasing: b[i..<(i + n)]))
        else { return false }
        i += n
        return true
    }

    /// Skips the value of a key the reading does not have when it is one this reader can judge
    /// valid JSON as the Codable path would: a string without escapes in valid UTF-8, a number
    /// of the forms `readDouble` reads, or a literal. False for anything else (a nested value,
    /// an escape, an exponent): the Codable path decides.
    private mutating func skipScalar() -> Bool {
        guard i < b.count else { return false }
        switch b[i] {
        case 0x22: return readString() != nil
        case 0x74: return takeLiteral("true")
        case 0x66: return takeLiteral("false")
        case 0x6E: return takeLiteral("null")
        default: return readDouble() != nil
        }
    }

    private mutating func readKey() -> KeyRead? {
        guard let k = readStringBytes() else { return nil }
        guard let key = knownKey(k) else {
            // A key the Codable path would not take as valid UTF-8 is its to refuse, and
            // `telemetry`, nested, is one of the reading's that this reader leaves to it.
            return string(k) == nil || k.elementsEqual("telemetry".utf8) ? nil : .unknown
        }
        return .known(key)
    }

    private func knownKey(_ k: UnsafeBufferPointer<UInt8>) -> Key? {
        func is_(_ name: StaticString) -> Bool {
            name.utf8CodeUnitCount == k.count
                && UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount).elementsEqual(k)
        }
        switch k.count {
        case 1: return is_("v") ? .v : nil
        case 2: return is_("id") ? .id : is_("ts") ? .ts : nil
        case 3: return is_("seq") ? .seq : is_("mac") ? .mac : is_("url") ? .url : nil
        case 4: return is_("node") ? .node : is_("rssi") ? .rssi : is_("kind") ? .kind : is_("name") ? .name : is_("uuid") ? .uuid : nil
        case 5: return is_("power") ? .power : is_("major") ? .major : is_("minor") ? .minor : nil
        case 7: return is_("samples") ? .samples : is_("rssi_sd") ? .rssiSD : nil
        case 8: return is_("distance") ? .distance : is_("instance") ? .instance : is_("interval") ? .interval : is_("tx_power") ? .txPower : nil
        case 9: return is_("proximity") ? .proximity : is_("namespace") ? .namespace : nil
        case 12: return is_("address_type") ? .addressType : nil
        case 13: return is_("rssi_filtered") ? .rssiFiltered : nil
        default: return nil
        }
    }

    private func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// Plain JSON integer digits (no fraction, no exponent, no "-0") within Int64.
    private mutating func readInt() -> Int? {
        let negative = take(0x2D)
        guard let magnitude = readDigits(), magnitude <= UInt64(Int64.max) else { return nil }
        if negative {
            guard magnitude != 0 else { return nil }
            return -Int(magnitude)
        }
        return Int(magnitude)
    }

    private mutating func readUInt64() -> UInt64? {
        guard i < b.count, b[i] != 0x2D else { return nil }
        return readDigits()
    }

    /// Digits of a JSON integer with nothing after them that would make it a decimal.
    private mutating func readDigits() -> UInt64? {
        guard i < b.count, isDigit(b[i]) else { return nil }
        if b[i] == 0x30, i + 1 < b.count, isDigit(b[i + 1]) { return nil }  // leading zero
        var n: UInt64 = 0
        while i < b.count, isDigit(b[i]) {
            let (m, o1) = n.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(UInt64(b[i] &- 0x30))
            guard !o1, !o2 else { return nil }
            n = s
            i += 1
        }
        if i < b.count, b[i] == 0x2E || b[i] == 0x65 || b[i] == 0x45 { return nil }  // . e E
        return n
    }

    private static let powersOfTen: [Double] = (0...22).map { k in (0..<k).reduce(1.0) { x, _ in x * 10 } }

    /// A JSON number without exponent as a Double. Up to 15 significant digits and 22 decimals the
    /// quotient of two exact doubles is correctly rounded (Clinger's fast path), as the Codable
    /// decoder's result is; anything longer is left to it.
    private mutating func readDouble() -> Double? {
        let negative = take(0x2D)
        guard i < b.count, isDigit(b[i]) else { return nil }
        if b[i] == 0x30, i + 1 < b.count, isDigit(b[i + 1]) { return nil }
        var mantissa: UInt64 = 0
        var digits = 0
        var decimals = 0
        while i < b.count, isDigit(b[i]) {
            if digits > 0 || b[i] != 0x30 { digits += 1 }
            if digits <= 19 { mantissa = mantissa &* 10 &+ UInt64(b[i] &- 0x30) }
            i += 1
        }
        if i < b.count, b[i] == 0x2E {
            i += 1
            guard i < b.count, isDigit(b[i]) else { return nil }
            while i < b.count, isDigit(b[i]) {
                if digits > 0 || b[i] != 0x30 { digits += 1 }
                if digits <= 19 { mantissa = mantissa &* 10 &+ UInt64(b[i] &- 0x30) }
                decimals += 1
                i += 1
            }
        }
        if i < b.count, b[i] == 0x65 || b[i] == 0x45 { return nil }
        // Longer numbers go to the Codable path: Foundation's parser is the reference, and past
        // 2^53 it is not always correctly rounded (see Sources/Fuzz/WireHarness.swift).
        guard digits <= 15 && decimals <= 22 else { return nil }
        let x = Double(mantissa) / Self.powersOfTen[decimals]
        return negative ? -x : x
    }
}
