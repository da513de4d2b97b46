import Foundation

/// An integer in config that may be written as a number or as a string such as `"0x004C"`
/// (YAML users write company ids in hex).
public struct ConfigNumber: Codable, Sendable, Equatable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// The text as written, for error messages.
    public let text: String
    /// The value, nil when `text` is not an integer.
    public let value: Int?

    public init(integerLiteral value: Int) {
        self.value = value
        self.text = String(value)
    }

    public init(_ text: String) {
        self.text = text
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        // The forms every other integer key takes (`DecodingState`): decimal, `0x` hex, `0o` octal.
        value = t.hasPrefix("0x") ? Int(t.dropFirst(2), radix: 16) : t.hasPrefix("0o") ? Int(t.dropFirst(2), radix: 8) : Int(t)
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        // As text first: the config decoder reads any scalar as text, and records a problem for
        // an integer it cannot read even where a fallback then succeeds (a quoted "0x0059" was
        // refused). A decoder that keeps numbers apart from text (JSON) gets its number.
        do {
            self.init(try c.decode(String.self))
        } catch DecodingError.typeMismatch {
            self.init(integerLiteral: try c.decode(Int.self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        if let value, String(value) == text { try c.encode(value) } else { try c.encode(text) }
    }

    public var description: String { text }
}
