import RoomcastConfig

/// An MQTT broker address, `mqtt[s]://[user[:password]@]host[:port]`.
///
/// IPv6 hosts go in brackets (`mqtt://[::1]:1883`); the port defaults to 1883,
/// or 8883 for `mqtts`. `description` never shows the password.
public struct BrokerURL: Sendable, Equatable, ConfigStringValue, CustomStringConvertible {
    /// True for `mqtts://`.
    public var isTLS: Bool
    /// Host name or address, without IPv6 brackets (as libmosquitto wants it).
    public var host: String
    public var port: Int
    public var username: String?
    /// A `Secret`: the URL's description and config text show `***` in its place.
    public var password: Secret?

    public init(isTLS: Bool = false, host: String, port: Int? = nil, username: String? = nil, password: String? = nil) {
        self.isTLS = isTLS
        self.host = host
        self.port = port ?? (isTLS ? 8883 : 1883)
        self.username = username
        self.password = password.map { Secret($0) }
    }

    /// `mqtt://localhost:1883`.
    public static let localhost = BrokerURL(host: "localhost")

    /// Parses `text`; the error says what is wrong and how the URL should look.
    public init(parsing text: String) throws(ConfigValueError) {
        func fail(_ message: String) -> ConfigValueError {
            ConfigValueError(message: "\(message) in broker URL '\(BrokerURL.redact(text))'; expected mqtt[s]://[user[:password]@]host[:port]")
        }
        guard let schemeEnd = text.range(of: "://") else {
            throw fail("missing 'mqtt://' or 'mqtts://'")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        switch scheme {
        case "mqtt": isTLS = false
        case "mqtts": isTLS = true
        default: throw fail("unsupported scheme '\(scheme)'")
        }
        var rest = text[schemeEnd.upperBound...]
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        if rest.contains("/") || rest.contains("?") || rest.contains("#") {
            throw fail("unexpected path, query or fragment")
        }
        if let at = rest.lastIndex(of: "@") {
            let userinfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userinfo.firstIndex(of: ":") {
                username = BrokerURL.percentDecode(userinfo[..<colon])
                password = Secret(BrokerURL.percentDecode(userinfo[userinfo.index(after: colon)...]))
            } else {
                username = BrokerURL.percentDecode(userinfo)
                password = nil
            }
            if username?.isEmpty == true { throw fail("empty user name") }
        } else {
            username = nil
            password = nil
        }
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw fail("unclosed '[' around the IPv6 address") }
            host = String(rest[rest.index(after: rest.startIndex)..<close])
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw fail("unexpected text after ']'") }
                portText = after.dropFirst()
            }
            guard host.contains(":"), host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." || $0 == "%" || $0.isLetter || $0.isNumber }) else {
                throw fail("'\(host)' is not an IPv6 address")
            }
        } else {
            let colons = rest.filter { $0 == ":" }.count
            if colons > 1 { throw fail("IPv6 addresses must be written in brackets, like [::1]") }
            if let colon = rest.firstIndex(of: ":") {
                host = String(rest[..<colon])
                portText = rest[rest.index(after: colon)...]
            } else {
                host = String(rest)
            }
            guard host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_") }) else {
                throw fail("host '\(host)' contains characters a host name cannot have")
            }
        }
        if host.isEmpty { throw fail("missing host") }
        if let portText {
            guard let p = Int(portText), (1...65535).contains(p), portText.allSatisfy(\.isNumber) else {
                // Text after the colon that is not a number may be a password whose host is missing.
                throw fail(portText.allSatisfy(\.isNumber) ? "port '\(portText)' is not a number from 1 to 65535"
                                                          : "the port is not a number from 1 to 65535")
            }
            port = p
        } else {
            port = isTLS ? 8883 : 1883
        }
    }

    /// The URL with the password replaced by `***`, safe to log.
    public var redacted: String {
        var s = isTLS ? "mqtts://" : "mqtt://"
        if let username {
            s += BrokerURL.percentEncode(username)
            if password != nil { s += ":***" }
            s += "@"
        }
        s += host.contains(":") ? "[\(host)]" : host
        return s + ":\(port)"
    }

    /// Same as `redacted`: a broker URL is never printed with its password.
    public var description: String { redacted }

    /// The redacted form: configs are encoded only to be shown.
    public var configText: String { redacted }

    /// A URL we could not parse, safe to show: whatever follows the user name up to the last "@"
    /// is hidden, with a scheme or without one (`bob:pw@host`), and so is text after a colon that
    /// is no port (`mqtt://bob:pw`, a password whose host is missing).
    static func redact(_ text: String) -> String {
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        // `user:password@` is hidden by `excerpt` itself.
        if let at = text.lastIndex(of: "@"), at >= start { return ConfigNode.excerpt(text) }
        let authority = text[start...]
        guard let colon = authority.lastIndex(of: ":"), !authority.contains("["),
              !authority[authority.index(after: colon)...].allSatisfy({ $0.isNumber || $0 == "/" }) else {
            return ConfigNode.excerpt(text)
        }
        return ConfigNode.excerpt(String(text[..<colon]) + ":***")
    }

    static func percentDecode(_ s: Substring) -> String {
        var bytes: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let b = it.popFirst() {
            if b == UInt8(ascii: "%"), it.count >= 2,
               let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) {
                bytes.append(v)
                it = it.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func percentEncode(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            let c = Character(Unicode.Scalar(b))
            if b < 0x80, c.isLetter || c.isNumber || "-._~".contains(c) { out.append(c) } else { out += "%" + String(b, radix: 16, uppercase: true).leftPadded(2) }
        }
        return out
    }
}

private extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

extension BrokerURL: ConfigPlaceholder {
    package static var configPlaceholder: BrokerURL { .localhost }
}
