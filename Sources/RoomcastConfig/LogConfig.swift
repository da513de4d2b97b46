import RoomcastLogging
import Shared

/// The `log:` section: how much to log.
public struct LogConfig: Codable, Sendable, Equatable {
    /// Least severe level written (default `info`).
    public var level: Logger.Level

    public init(level: Logger.Level = .info) {
        self.level = level
    }

    enum CodingKeys: String, CodingKey { case level }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let name = try c.decodeIfPresent(String.self, forKey: .level) ?? "info"
        guard let level = Logger.Level(name: name) else {
            let names = Logger.Level.allCases.map(\.description)
            var message = "expected one of \(names.joined(separator: ", ")), found \(ConfigNode.shown(name))"
            if let guess = Suggestion.closest(to: name, in: names) { message += "; did you mean '\(guess)'?" }
            throw DecodingError.dataCorruptedError(forKey: .level, in: c, debugDescription: message)
        }
        self.level = level
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(level.description, forKey: .level)
    }
}
