import Shared

/// A string-valued choice in a config (`kind: median_kalman`) whose decoding
/// error lists the allowed values and suggests the closest one.
public protocol ConfigEnum: RawRepresentable, CaseIterable, Codable, Sendable where RawValue == String {}

extension ConfigEnum {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        guard let value = Self(rawValue: text) else {
            let allowed = Self.allCases.map(\.rawValue)
            var message = "expected one of \(allowed.joined(separator: ", ")), found \(ConfigNode.shown(text))"
            if let guess = Suggestion.closest(to: text, in: allowed) { message += "; did you mean '\(guess)'?" }
            throw DecodingError.dataCorruptedError(in: c, debugDescription: message)
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}
