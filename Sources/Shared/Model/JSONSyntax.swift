/// A strict, allocation-free JSON syntax check (RFC 8259) for the `--dry-run`
/// and replay log lines, which embed a payload as JSON only when it is JSON.
///
/// Parsing every payload with `JSONSerialization` just to learn that cost more
/// than everything else the edge agent does per reading. This check answers
/// "certainly valid" only for documents `JSONSerialization` also accepts: plain
/// RFC 8259 JSON in well-formed UTF-8, nested at most `maxDepth` deep, numbers
/// of ordinary size, no escaped surrogates. Anything else returns false and the
/// caller falls back to `JSONSerialization`, so the decision never changes.
enum JSONSyntax {
    static let maxDepth = 64

    /// True when `bytes` is one JSON object or array (surrounded by optional
    /// whitespace) that `JSONSerialization` certainly accepts.
    static func isCertainlyValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { p in
            var scanner = Scanner(p)
            scanner.skipWhitespace()
            guard let first = scanner.peek, first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else { return false }
            guard scanner.value(depth: 0) else { return false }
            scanner.skipWhitespace()
            return scanner.atEnd
        }
    }

    /// One member of an object: where its key's text (between the quotes) and its value lie.
    struct Member {
        var key: Range<Int>
        var value: Range<Int>
    }

    /// The members of `bytes` when it is one JSON object that `JSONSerialization` certainly
    /// accepts and whose keys have no escapes and no repeats, in order; nil otherwise (the
    /// caller falls back to `JSONSerialization`). Values keep their text as written.
    static func members(ofObject bytes: [UInt8]) -> [Member]? {
        bytes.withUnsafeBufferPointer { p in
            var scanner = Scanner(p)
            var out: [Member] = []
            // Hashed: a line of many members was checked against every earlier key, quadratically.
            var keys: Set<ArraySlice<UInt8>> = []
            scanner.skipWhitespace()
            guard scanner.peek == UInt8(ascii: "{") else { return nil }
            scanner.i += 1
            scanner.skipWhitespace()
            var more = scanner.peek != UInt8(ascii: "}")
            if !more { scanner.i += 1 }
            while more {
                let keyStart = scanner.i + 1
                guard scanner.peek == UInt8(ascii: "\""), scanner.string() else { return nil }
                let key = keyStart..<(scanner.i - 1)
                guard !p[key].contains(UInt8(ascii: "\\")), keys.insert(bytes[key]).inserted else { return nil }
                scanner.skipWhitespace()
                guard scanner.peek == UInt8(ascii: ":") else { return nil }
                scanner.i += 1
                scanner.skipWhitespace()
                let valueStart = scanner.i
                guard scanner.value(depth: 1) else { return nil }
                out.append(Member(key: key, value: valueStart..<scanner.i))
                scanner.skipWhitespace()
                switch scanner.peek {
                case UInt8(ascii: ","): scanner.i += 1; scanner.skipWhitespace()
                case UInt8(ascii: "}"): scanner.i += 1; more = false
                default: return nil
                }
            }
            scanner.skipWhitespace()
            return scanner.atEnd ? out : nil
        }
    }

    private struct Scanner {
        let p: UnsafeBufferPointer<UInt8>
        var i = 0

        init(_ p: UnsafeBufferPointer<UInt8>) { self.p = p }

        var atEnd: Bool { i >= p.count }
        var peek: UInt8? { i < p.count ? p[i] : nil }

        mutating func skipWhitespace() {
            while i < p.count, p[i] == 0x20 || p[i] == 0x0A || p[i] == 0x0D || p[i] == 0x09 { i += 1 }
        }

        mutating func literal(_ text: StaticString) -> Bool {
            let n = text.utf8CodeUnitCount
            guard p.count - i >= n else { return false }
            for k in 0..<n where p[i + k] != text.utf8Start[k] { return false }
            i += n
            return true
        }

        mutating func value(depth: Int) -> Bool {
            guard let c = peek else { return false }
            switch c {
            case UInt8(ascii: "{"): return depth < JSONSyntax.maxDepth && object(depth: depth + 1)
            case UInt8(ascii: "["): return depth < JSONSyntax.maxDepth && array(depth: depth + 1)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        mutating func object(depth: Int) -> Bool {
            i += 1
            skipWhitespace()
            if peek == UInt8(ascii: "}") { i += 1; return true }
            while true {
                guard peek == UInt8(ascii: "\""), string() else { return false }
                skipWhitespace()
                guard peek == UInt8(ascii: ":") else { return false }
                i += 1
                skipWhitespace()
                guard value(depth: depth) else { return false }
                skipWhitespace()
                switch peek {
                case UInt8(ascii: ","): i += 1; skipWhitespace()
                case UInt8(ascii: "}"): i += 1; return true
                default: return false
                }
            }
        }

        mutating func array(depth: Int) -> Bool {
            i += 1
            skipWhitespace()
            if peek == UInt8(ascii: "]") { i += 1; return true }
            while true {
                guard value(depth: depth) else { return false }
                skipWhitespace()
                switch peek {
                case UInt8(ascii: ","): i += 1; skipWhitespace()
                case UInt8(ascii: "]"): i += 1; return true
                default: return false
                }
            }
        }

        /// A string with its quotes; escapes per RFC 8259 §7 (no surrogate escapes), UTF-8 well-formed.
        mutating func string() -> Bool {
            i += 1
            while i < p.count {
                let c = p[i]
                switch c {
                case UInt8(ascii: "\""):
                    i += 1
                    return true
                case UInt8(ascii: "\\"):
                    guard i + 1 < p.count else { return false }
                    switch p[i + 1] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                         UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        i += 2
                    case UInt8(ascii: "u"):
                        guard p.count - i >= 6 else { return false }
                        var v: UInt32 = 0
                        for k in 2..<6 {
                            guard let d = Self.hexValue(p[i + k]) else { return false }
                            v = v << 4 | d
                        }
                        // Surrogate pairs are legal JSON, but how a lone half is handled is the parser's choice.
                        guard !(0xD800...0xDFFF).contains(v) else { return false }
                        i += 6
                    default:
                        return false
                    }
                case 0..<0x20:
                    return false
                case 0..<0x80:
                    i += 1
                default:
                    guard utf8Sequence() else { return false }
                }
            }
            return false
        }

        /// One well-formed multi-byte UTF-8 sequence (Unicode Table 3-7).
        mutating func utf8Sequence() -> Bool {
            let b0 = p[i]
            let n: Int
            var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
            switch b0 {
            case 0xC2...0xDF: n = 2
            case 0xE0: n = 3; lo = 0xA0
            case 0xE1...0xEC, 0xEE, 0xEF: n = 3
            case 0xED: n = 3; hi = 0x9F
            case 0xF0: n = 4; lo = 0x90
            case 0xF1...0xF3: n = 4
            case 0xF4: n = 4; hi = 0x8F
            default: return false
            }
            guard p.count - i >= n else { return false }
            guard (lo...hi).contains(p[i + 1]) else { return false }
            for k in 2..<n where !(0x80...0xBF).contains(p[i + k]) { return false }
            i += n
            return true
        }

        /// `-? int frac? exp?` with at most 20 digits and an exponent within ±200, so its value is an
        /// ordinary finite double (or an exact integer) whichever way the parser converts it.
        mutating func number() -> Bool {
            if peek == UInt8(ascii: "-") { i += 1 }
            var digits = 0
            guard let first = peek, Self.isDigit(first) else { return false }
            if first == UInt8(ascii: "0") {
                i += 1
                digits = 1
            } else {
                while let c = peek, Self.isDigit(c) { i += 1; digits += 1 }
            }
            if peek == UInt8(ascii: ".") {
                i += 1
                guard let c = peek, Self.isDigit(c) else { return false }
                while let c = peek, Self.isDigit(c) { i += 1; digits += 1 }
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                i += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { i += 1 }
                var exponent = 0
                guard let c = peek, Self.isDigit(c) else { return false }
                while let c = peek, Self.isDigit(c) {
                    exponent = exponent * 10 + Int(c - UInt8(ascii: "0"))
                    guard exponent <= 200 else { return false }
                    i += 1
                }
            }
            return digits <= 20
        }

        static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

        static func hexValue(_ c: UInt8) -> UInt32? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(c - UInt8(ascii: "A") + 10)
            default: nil
            }
        }
    }
}
