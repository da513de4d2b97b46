/// The Eddystone-URL (and UriBeacon) URL compression: a scheme prefix byte, then text in
/// which bytes 0x00-0x0D stand for common endings (github.com/google/eddystone/eddystone-url).
public enum EddystoneURLCodec {
    static let schemes = ["http://www.", "https://www.", "http://", "https://"]
    static let expansions = [".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
                             ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov"]

    /// Decodes scheme byte + encoded URL. Nil when the scheme byte is unknown or a byte is
    /// neither printable ASCII nor an expansion code.
    public static func decode<C: Collection>(_ field: C) -> String? where C.Element == UInt8 {
        guard let first = field.first, Int(first) < schemes.count else { return nil }
        var out = schemes[Int(first)]
        for b in field.dropFirst() {
            switch b {
            case 0x00...0x0D: out += expansions[Int(b)]
            case 0x21...0x7E: out.unicodeScalars.append(Unicode.Scalar(b))
            default: return nil // 0x0E-0x20 are reserved; 0x7F+ are not allowed
            }
        }
        return out
    }

    /// Encodes a URL (scheme and host case-insensitive); nil when it has no http(s) scheme
    /// or a character outside printable ASCII.
    public static func encode(_ url: String) -> [UInt8]? {
        let lower = url.lowercased()
        // Longest scheme first so "http://www." wins over "http://".
        guard let (code, prefix) = schemes.enumerated().sorted(by: { $0.element.count > $1.element.count })
            .first(where: { lower.hasPrefix($0.element) }).map({ ($0.offset, $0.element) }) else { return nil }
        var rest = Substring(url.dropFirst(prefix.count))
        // The host is case-insensitive; the path is not.
        let hostEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        rest = Substring(rest[..<hostEnd].lowercased()) + rest[hostEnd...]
        var out: [UInt8] = [UInt8(code)]
        var i = rest.startIndex
        outer: while i < rest.endIndex {
            for (n, e) in expansions.enumerated() where rest[i...].hasPrefix(e) {
                out.append(UInt8(n))
                i = rest.index(i, offsetBy: e.count)
                continue outer
            }
            guard let a = rest[i].asciiValue, a >= 0x21, a <= 0x7E else { return nil }
            out.append(a)
            i = rest.index(after: i)
        }
        return out
    }
}
