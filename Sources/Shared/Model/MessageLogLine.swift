import Foundation

/// One line of `--dry-run` output and of `aggregator replay` input/output:
/// `{"payload": <JSON or string>, "retain": bool, "topic": "...", "ts": <unix seconds>}`.
/// A JSON payload is embedded as JSON; anything else as a string.
public struct MessageLogLine: Sendable, Equatable {
    public var ts: Double
    public var topic: String
    public var payload: [UInt8]
    public var retain: Bool

    public init(ts: Double, topic: String, payload: [UInt8], retain: Bool = false) {
        self.ts = ts
        self.topic = topic
        self.payload = payload
        self.retain = retain
    }

    public init(ts: Double, message: OutboundMessage) {
        self.init(ts: ts, topic: message.topic, payload: message.payload, retain: message.retain)
    }

    /// One JSONL line without the trailing newline; keys sorted.
    public func encoded() -> String {
        var out: [UInt8] = []
        encode(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the line of `encoded()` (without the trailing newline) to `out`:
    /// the `--dry-run` sink writes thousands of these a second without building Strings.
    public func encode(into out: inout [UInt8]) {
        encode(into: &out, payloadIsEncodedJSON: false)
    }

    /// As `encode(into:)`; `payloadIsEncodedJSON` (see `OutboundMessage.payloadIsEncodedJSON`)
    /// vouches that the payload is valid JSON, so only its first byte decides how it is embedded.
    public func encode(into out: inout [UInt8], payloadIsEncodedJSON: Bool) {
        out.append(contentsOf: #"{"payload":"#.utf8)
        if payloadIsEncodedJSON ? Self.opensDocument(payload) : Self.isJSONDocument(payload) {
            out.append(contentsOf: payload)
        } else if payload.allSatisfy({ $0 < 0x80 }) {
            Self.appendJSONString(payload, to: &out)
        } else {
            // Invalid UTF-8 is repaired (U+FFFD) as `String(decoding:)` does.
            Self.appendJSONString(String(decoding: payload, as: UTF8.self).utf8, to: &out)
        }
        out.append(contentsOf: retain ? #","retain":true,"topic":"#.utf8 : #","retain":false,"topic":"#.utf8)
        Self.appendJSONString(topic.utf8, to: &out)
        out.append(contentsOf: #","ts":"#.utf8)
        Self.appendTimestamp(ts, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// A payload is embedded as JSON when it is a JSON object or array (after leading spaces).
    static func isJSONDocument(_ payload: [UInt8]) -> Bool {
        guard opensDocument(payload) else { return false }
        // The quick check settles the agent's own payloads; only what it cannot vouch for goes to Foundation.
        return JSONSyntax.isCertainlyValid(payload) || (try? JSONSerialization.jsonObject(with: Data(payload))) != nil
    }

    /// Whether the payload's first byte other than a space opens an object or an array.
    @inline(__always)
    static func opensDocument(_ payload: [UInt8]) -> Bool {
        guard let first = payload.first(where: { $0 != 0x20 }) else { return false }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    /// Parses one line; payload objects come back as their JSON bytes.
    public static func decode(_ line: String) throws(WireFormatError) -> MessageLogLine {
        if let plain = decodePlain(Array(line.utf8)) { return plain }
        return try decodeWithFoundation(line)
    }

    /// Any line `JSONSerialization` reads, with the errors `decode` reports.
    static func decodeWithFoundation(_ line: String) throws(WireFormatError) -> MessageLogLine {
        guard let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed]) as? [String: Any] else {
            throw .invalid("not a JSON object")
        }
        guard let ts = (obj["ts"] as? NSNumber)?.doubleValue, ts.isFinite else { throw .invalid("ts: missing or not a number") }
        guard let topic = obj["topic"] as? String else { throw .invalid("topic: missing") }
        // A retain flag that is no boolean (`"true"`) is an error, not "not retained": whether a
        // message was retained decides what a replay does with it.
        let retain: Bool
        switch obj["retain"] {
        case nil, is NSNull: retain = false
        case let flag as Bool: retain = flag
        default: throw .invalid("retain: not true or false")
        }
        let payload: [UInt8]
        switch obj["payload"] {
        case let s as String: payload = Array(s.utf8)
        case .some(let v) where JSONSerialization.isValidJSONObject(v):
            guard let data = try? JSONSerialization.data(withJSONObject: v, options: [.sortedKeys, .withoutEscapingSlashes]) else {
                throw .invalid("payload: not encodable")
            }
            payload = Array(data)
        case nil, is NSNull: payload = []
        default: throw .invalid("payload: unsupported type")
        }
        return MessageLogLine(ts: ts, topic: topic, payload: payload, retain: retain)
    }

    /// The lines `--dry-run` writes, and any as plain, read without Foundation, which spent
    /// most of a long replay sorting each payload's keys to write them again: keys without
    /// escapes, `ts` a number, `topic` a string without escapes, `retain` true or false, and
    /// `payload` an object or array (kept as written), a string without escapes, or null.
    /// Anything else, every error included, is left to `JSONSerialization` (nil here), so what
    /// a line means does not depend on which of the two read it.
    static func decodePlain(_ bytes: [UInt8]) -> MessageLogLine? {
        guard let members = JSONSyntax.members(ofObject: bytes) else { return nil }
        func unescapedString(_ value: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
            guard value.first == UInt8(ascii: "\""), !value.contains(UInt8(ascii: "\\")) else { return nil }
            return value.dropFirst().dropLast()
        }
        var ts: Double?, topic: String?, retain = false, payload: [UInt8] = []
        for member in members {
            let key = bytes[member.key], value = bytes[member.value]
            if key.elementsEqual("ts".utf8) {
                guard let first = value.first, first == UInt8(ascii: "-") || (0x30...0x39).contains(first),
                      let number = Double(String(decoding: value, as: UTF8.self)), number.isFinite else { return nil }
                ts = number
            } else if key.elementsEqual("topic".utf8) {
                guard let text = unescapedString(value) else { return nil }
                topic = String(decoding: text, as: UTF8.self)
            } else if key.elementsEqual("retain".utf8) {
                if value.elementsEqual("true".utf8) { retain = true } else if value.elementsEqual("false".utf8) { retain = false } else { return nil }
            } else if key.elementsEqual("payload".utf8) {
                switch value.first {
                case UInt8(ascii: "{"), UInt8(ascii: "["): payload = Array(value)
                case UInt8(ascii: "n"): payload = []
                default:
                    guard let text = unescapedString(value) else { return nil }
                    payload = Array(text)
                }
            }
        }
        guard let ts, let topic else { return nil }
        return MessageLogLine(ts: ts, topic: topic, payload: payload, retain: retain)
    }

    /// `t` in seconds with at most three decimals and no trailing zeros, appended as ASCII digits.
    static func appendTimestamp(_ t: Double, to out: inout [UInt8]) {
        let ms = (t * 1000).rounded()
        // Int64 traps past ±9.2e18 ms, which a corrupt replay line reaches (found by fuzzing).
        // A Double that large is a whole number of milliseconds, so its shortest form is exact JSON.
        guard ms.magnitude < 9e18 else { out.append(contentsOf: "\(t)".utf8); return }
        let n = Int64(ms)
        let whole = n / 1000
        let frac = (n % 1000).magnitude
        // Between -1 and 0 the integer part is 0 and alone would drop the sign.
        if frac != 0, n < 0, whole == 0 { out.append(UInt8(ascii: "-")) }
        appendDecimal(whole, to: &out)
        guard frac != 0 else { return }
        out.append(UInt8(ascii: "."))
        // Plain arithmetic: no regex, which would load ICU.
        appendFraction(frac, digits: 3, to: &out)
    }

    /// The fractional part `fraction` (non-zero, of `digits` digits: 5 of 3 is ".005") written
    /// zero-padded to `digits` and without trailing zeros.
    static func appendFraction(_ fraction: UInt64, digits: Int, to out: inout [UInt8]) {
        var fraction = fraction, digits = digits
        while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
        var scale: UInt64 = 1
        for _ in 1..<digits { scale *= 10 }
        while scale > 0 {
            out.append(UInt8(ascii: "0") + UInt8(fraction / scale % 10))
            scale /= 10
        }
    }

    /// `n` in decimal as `String(n)` writes it, appended without making the String.
    @inline(__always)
    static func appendDecimal(_ n: Int64, to out: inout [UInt8]) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        appendDecimal(n.magnitude, to: &out)
    }

    static func appendDecimal(_ n: UInt64, to out: inout [UInt8]) {
        // 20 digits hold UInt64.max.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buf in
            var i = 20
            var v = n
            repeat {
                i -= 1
                buf[i] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            } while v != 0
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buf[i..<20]))
        }
    }

    /// `utf8` (well-formed UTF-8) as a JSON string: quotes, backslashes and control characters escaped.
    static func appendJSONString(_ utf8: some Sequence<UInt8>, to out: inout [UInt8]) {
        // Topics, ids and names are contiguous: copy the runs that need no escape in one go.
        if utf8.withContiguousStorageIfAvailable({ appendJSONString(bytes: $0, to: &out) }) != nil { return }
        out.append(UInt8(ascii: "\""))
        for b in utf8 { appendEscaped(b, to: &out) }
        out.append(UInt8(ascii: "\""))
    }

    static func appendJSONString(bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var run = 0
        for i in 0..<bytes.count {
            let b = bytes[i]
            guard b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") else { continue }
            if run < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<i])) }
            appendEscaped(b, to: &out)
            run = i + 1
        }
        if run < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...])) }
        out.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    private static func appendEscaped(_ b: UInt8, to out: inout [UInt8]) {
        switch b {
        case UInt8(ascii: "\""): out.append(0x5C); out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C); out.append(0x5C)
        case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
        case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
        case 0..<0x20:
            out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hexDigit(b >> 4), hexDigit(b & 0xF)])
        default: out.append(b)
        }
    }

    private static func hexDigit(_ v: UInt8) -> UInt8 { v < 10 ? UInt8(ascii: "0") + v : UInt8(ascii: "a") + v - 10 }
}
