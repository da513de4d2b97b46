/// Parses one HTTP/1.1 request (RFC 9112) from the bytes a client sent so far. Pure and bounded:
/// it never reads past `limits`, never traps on any input, and says whether it needs more bytes.
/// Strict where leniency has bitten servers (request smuggling): one Content-Length, no
/// Transfer-Encoding, no obsolete line folding, no whitespace before the colon.
public struct HTTPRequestParser: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Request line, header fields and body together, in bytes.
        public var maxRequestBytes: Int
        public var maxHeaderCount: Int
        public var maxTargetBytes: Int

        public init(maxRequestBytes: Int = 8192, maxHeaderCount: Int = 64, maxTargetBytes: Int = 2048) {
            self.maxRequestBytes = maxRequestBytes
            self.maxHeaderCount = maxHeaderCount
            self.maxTargetBytes = maxTargetBytes
        }
    }

    public enum Outcome: Sendable, Equatable {
        /// A whole request, and how many bytes of the input it took.
        case complete(HTTPRequest, consumed: Int)
        /// Valid so far; read more. `searched`: where the next parse of this input, grown, may
        /// begin to look for the head's end; `awaiting`: the input's length before a parse can
        /// tell more (one more byte of a head, a body whole). A request that trickles in is not
        /// searched, or its head parsed, again at every read.
        case needMore(searched: Int, awaiting: Int)
    }

    public let limits: Limits

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Parses `bytes`, the start of a connection's input. `searched`: what the last parse of a
    /// shorter prefix of `bytes` said (`Outcome.needMore`).
    public func parse(_ bytes: [UInt8], searched: Int = 0) throws(HTTPParseError) -> Outcome {
        guard let headEnd = Self.endOfHead(bytes, from: searched) else {
            if bytes.count >= limits.maxRequestBytes { throw HTTPParseError(.headerFieldsTooLarge, "request head exceeds \(limits.maxRequestBytes) bytes") }
            try checkPrefix(bytes)
            // The blank line may begin in the last two bytes, which the next read completes.
            return .needMore(searched: max(0, bytes.count - 2), awaiting: bytes.count + 1)
        }
        if headEnd.start > limits.maxRequestBytes { throw HTTPParseError(.headerFieldsTooLarge, "request head exceeds \(limits.maxRequestBytes) bytes") }
        var lines = Self.lines(bytes[..<headEnd.start])
        // RFC 9112 §2.2: a server should ignore at least one empty line before the request line.
        if lines.first?.isEmpty == true { lines.removeFirst() }
        guard let requestLine = lines.first else { throw .bad("empty request") }
        var request = try parseRequestLine(requestLine)
        let fields = lines.dropFirst()
        if fields.count > limits.maxHeaderCount { throw HTTPParseError(.headerFieldsTooLarge, "more than \(limits.maxHeaderCount) header fields") }
        for line in fields { request.headers.append(try Self.parseField(line)) }

        // Required of HTTP/1.1 only: a health checker's `GET /healthz HTTP/1.0` may leave it out.
        let hosts = request.headers.filter { $0.name == "host" }
        if hosts.count > 1 { throw .bad("more than one Host") }
        if hosts.isEmpty && request.version == "HTTP/1.1" { throw .bad("missing Host (RFC 9112 §3.2)") }
        if request.headers.contains(where: { $0.name == "transfer-encoding" }) {
            throw HTTPParseError(.notImplemented, "Transfer-Encoding in requests is not supported; send Content-Length")
        }
        var length = 0
        let lengths = Set(request.headers.filter { $0.name == "content-length" }.map(\.value))
        if lengths.count > 1 { throw .bad("conflicting Content-Length values") }
        if let text = lengths.first {
            guard !text.isEmpty, text.utf8.count <= 9, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(text) else {
                throw .bad("Content-Length is not a number")
            }
            length = n
        }
        if headEnd.end + length > limits.maxRequestBytes { throw HTTPParseError(.contentTooLarge, "request exceeds \(limits.maxRequestBytes) bytes") }
        guard bytes.count >= headEnd.end + length else { return .needMore(searched: headEnd.start, awaiting: headEnd.end + length) }
        request.body = Array(bytes[headEnd.end..<(headEnd.end + length)])
        return .complete(request, consumed: headEnd.end + length)
    }

    /// Rejects a head early when its first line is already wrong (a client sending garbage
    /// need not fill the buffer before it hears 400).
    private func checkPrefix(_ bytes: [UInt8]) throws(HTTPParseError) {
        var start = 0
        if bytes.starts(with: [13, 10]) { start = 2 } else if bytes.first == 10 { start = 1 }
        for b in bytes[start...] {
            if b == 0x20 || b == 13 || b == 10 { break }
            if !Self.isTokenByte(b) { throw .bad("method is not a token") }
        }
        if let lineEnd = bytes[start...].firstIndex(of: 10) {
            _ = try parseRequestLine(Self.stripCR(bytes[start..<lineEnd]))
        } else if bytes.count - start > limits.maxTargetBytes + 32 {
            throw HTTPParseError(.uriTooLong, "request line exceeds \(limits.maxTargetBytes) bytes")
        }
    }

    /// The range of the blank line that ends the head: start of the `CRLF CRLF` (or `LF LF`)
    /// and the index after it.
    static func endOfHead(_ bytes: [UInt8], from start: Int = 0) -> (start: Int, end: Int)? {
        var i = max(0, start)
        while i < bytes.count {
            if bytes[i] == 10 {
                if i + 1 < bytes.count, bytes[i + 1] == 10 { return (i, i + 2) }
                if i + 2 < bytes.count, bytes[i + 1] == 13, bytes[i + 2] == 10 { return (i, i + 3) }
            }
            i += 1
        }
        return nil
    }

    /// Lines split at LF, each without its CR.
    static func lines(_ head: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        head.split(separator: 10, omittingEmptySubsequences: false).map(stripCR)
    }

    static func stripCR(_ line: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        line.last == 13 ? line.dropLast() : line
    }

    private func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPRequest {
        let parts = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .bad("request line is not 'METHOD target HTTP/1.1'") }
        let method = parts[0], target = parts[1], version = parts[2]
        guard !method.isEmpty, method.allSatisfy(Self.isTokenByte) else { throw .bad("method is not a token") }
        guard target.count <= limits.maxTargetBytes else { throw HTTPParseError(.uriTooLong, "target exceeds \(limits.maxTargetBytes) bytes") }
        guard target.first == UInt8(ascii: "/"), target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .bad("target must be a path starting with /")
        }
        guard version.count == 8, version.starts(with: Array("HTTP/".utf8)) else { throw .bad("not an HTTP version") }
        guard version.elementsEqual(Array("HTTP/1.1".utf8)) || version.elementsEqual(Array("HTTP/1.0".utf8)) else {
            throw HTTPParseError(.versionNotSupported, "only HTTP/1.1 and 1.0 are served")
        }
        let targetText = String(decoding: target, as: UTF8.self)
        let pathPart = target.split(separator: UInt8(ascii: "?"), maxSplits: 1, omittingEmptySubsequences: false)
        guard let path = Self.percentDecode(pathPart[0], plusIsSpace: false) else { throw .bad("bad percent-encoding in path") }
        var query: [String: String] = [:]
        if pathPart.count == 2 {
            for pair in pathPart[1].split(separator: UInt8(ascii: "&")) {
                let kv = pair.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
                guard let key = Self.percentDecode(kv[0], plusIsSpace: true),
                      let value = kv.count == 2 ? Self.percentDecode(kv[1], plusIsSpace: true) : "" else {
                    throw .bad("bad percent-encoding in query")
                }
                query[key] = value
            }
        }
        return HTTPRequest(method: String(decoding: method, as: UTF8.self), target: targetText, path: path, query: query,
                           version: String(decoding: version, as: UTF8.self))
    }

    static func parseField(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (name: String, value: String) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw .bad("header field without a colon") }
        let name = line[..<colon]
        // RFC 9112 §5.1: no whitespace between name and colon; §5.2: obs-fold rejected.
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else { throw .bad("header field name is not a token") }
        var value = line[(colon + 1)...]
        while let f = value.first, f == 0x20 || f == 0x09 { value = value.dropFirst() }
        while let l = value.last, l == 0x20 || l == 0x09 { value = value.dropLast() }
        guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else { throw .bad("control character in a header value") }
        return (String(decoding: name, as: UTF8.self).lowercased(), String(decoding: value, as: UTF8.self))
    }

    /// tchar (RFC 9110 §5.6.2).
    static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(b)
        }
    }

    /// Percent-decoded UTF-8; nil for a bad escape or invalid UTF-8.
    static func percentDecode(_ bytes: ArraySlice<UInt8>, plusIsSpace: Bool) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let b = bytes[i]
            if b == UInt8(ascii: "%") {
                guard i + 2 < bytes.endIndex, let hi = hexValue(bytes[i + 1]), let lo = hexValue(bytes[i + 2]) else { return nil }
                out.append(hi << 4 | lo)
                i += 3
            } else {
                out.append(plusIsSpace && b == UInt8(ascii: "+") ? 0x20 : b)
                i += 1
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
