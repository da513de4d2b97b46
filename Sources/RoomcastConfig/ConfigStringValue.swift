/// A config value written as one string and parsed with a clear error
/// (`mqtt://…` broker URLs, `hci:hci0` sources): the Codable glue once.
public protocol ConfigStringValue: Codable {
    init(parsing text: String) throws(ConfigValueError)
    /// The text written back when the config is encoded (for logs: never a secret).
    var configText: String { get }
}

extension ConfigStringValue {
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        let text = try c.decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: error.message)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(configText)
    }
}
