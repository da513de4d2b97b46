/// A hand-written encoder for the aggregator's most frequent output. `JSONEncoder`
/// took two thirds of an aggregator's time while 10,000 new beacons were being
/// placed. The bytes are exactly `WireFormat.encode`'s (sorted keys, explicit
/// nulls where the Codable encoding has them; tested on many decisions): replay
/// output must not change. Anything this writer does not reproduce with
/// certainty — a string needing an escape, a number JSONEncoder would write in
/// exponent form, a non-finite number — goes through `WireFormat.encode`.
extension PresenceDecision {
    /// The decision as wire-format JSON, byte for byte what `WireFormat.encode(self)` gives.
    public func wireJSON() throws -> [UInt8] {
        if let fast = fastWireJSON() { return fast }
        return try WireFormat.encode(self)
    }

    /// The fast path alone: nil when the decision needs `WireFormat.encode`.
    func fastWireJSON() -> [UInt8]? {
        var w = SortedJSONWriter()
        return encodeFast(into: &w) ? w.bytes : nil
    }

    private func encodeFast(into w: inout SortedJSONWriter) -> Bool {
        w.open()
        guard w.key("confidence"), w.number(confidence),
              w.key("distance"), w.optionalNumber(distance),
              w.key("evidence") else { return false }
        w.openArray()
        for (k, e) in evidence.enumerated() {
            if k > 0 { w.comma() }
            w.open()
            if let d = e.distance { guard w.key("distance"), w.number(d) else { return false } }
            guard w.key("node"), w.string(e.node) else { return false }
            if let r = e.room { guard w.key("room"), w.string(r) else { return false } }
            guard w.key("rssi"), w.number(e.rssi), w.key("ts"), w.number(e.ts) else { return false }
            w.close()
        }
        w.closeArray()
        guard w.key("floor") else { return false }
        if let floor { w.int(floor) } else { w.null() }
        guard w.key("id"), w.string(id.rawValue) else { return false }
        if let lastRoom { guard w.key("last_room"), w.string(lastRoom) else { return false } }
        guard w.key("last_seen"), w.optionalNumber(lastSeen) else { return false }
        if let margin { guard w.key("margin"), w.number(margin) else { return false } }
        guard w.key("name"), w.optionalString(name), w.key("node"), w.optionalString(node) else { return false }
        if let position {
            guard w.key("position") else { return false }
            w.openArray()
            for (k, x) in position.enumerated() {
                if k > 0 { w.comma() }
                guard w.bareNumber(x) else { return false }
            }
            w.closeArray()
        }
        if let reason { guard w.key("reason"), w.string(reason) else { return false } }
        guard w.key("room"), w.optionalString(room) else { return false }
        if let runnerUp { guard w.key("runner_up"), w.string(runnerUp) else { return false } }
        guard w.key("since"), w.number(since), w.key("ts"), w.number(ts), w.key("v") else { return false }
        w.int(v)
        w.close()
        return true
    }
}

/// Writes JSON objects whose keys the caller gives in sorted order; each call that can meet
/// a value it would not write as JSONEncoder does returns false, and the caller falls back.
struct SortedJSONWriter {
    private(set) var bytes: [UInt8] = []
    /// Whether the next key or array element needs a comma before it, per nesting level.
    private var needsComma: [Bool] = []

    init() { bytes.reserveCapacity(512) }

    mutating func open() {
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    mutating func close() {
        bytes.append(UInt8(ascii: "}"))
        needsComma.removeLast()
    }

    mutating func openArray() { bytes.append(UInt8(ascii: "[")) }
    mutating func closeArray() { bytes.append(UInt8(ascii: "]")) }
    mutating func comma() { bytes.append(UInt8(ascii: ",")) }

    /// A key (plain ASCII, no escapes) and its colon. Always true: it only chains in guards.
    mutating func key(_ k: StaticString) -> Bool {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
        bytes.append(UInt8(ascii: "\""))
        bytes.append(contentsOf: UnsafeBufferPointer(start: k.utf8Start, count: k.utf8CodeUnitCount))
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        return true
    }

    mutating func null() { bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C]) }

    /// A string with nothing to escape (control characters, quote, backslash); UTF-8 goes out as it is.
    mutating func string(_ s: String) -> Bool {
        let start = bytes.count
        bytes.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            if b < 0x20 || b == UInt8(ascii: "\"") || b == UInt8(ascii: "\\") {
                bytes.removeSubrange(start...)
                return false
            }
            bytes.append(b)
        }
        bytes.append(UInt8(ascii: "\""))
        return true
    }

    mutating func optionalString(_ s: String?) -> Bool {
        guard let s else { null(); return true }
        return string(s)
    }

    mutating func int(_ n: Int) { bytes.append(contentsOf: String(n).utf8) }

    /// A finite Double as JSONEncoder writes it: its shortest round-trip `description` without a
    /// trailing ".0". Exponent forms are left to JSONEncoder.
    mutating func number(_ x: Double) -> Bool { bareNumber(x) }

    mutating func bareNumber(_ x: Double) -> Bool {
        guard x.isFinite else { return false }
        var text = x.description
        if text.utf8.contains(UInt8(ascii: "e")) { return false }
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
        return true
    }

    mutating func optionalNumber(_ x: Double?) -> Bool {
        guard let x else { null(); return true }
        return number(x)
    }
}
