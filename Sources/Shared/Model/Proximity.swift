/// CoreLocation's proximity classes, as on the wire.
public enum Proximity: String, Codable, Sendable, CaseIterable {
    case immediate, near, far, unknown

    /// A class this release does not know is `unknown`, as CoreLocation says of a proximity it
    /// cannot tell: a newer agent may name new classes within v1 (docs/mqtt-api.md), and the
    /// reading's level and distance still hold.
    public init(from decoder: any Decoder) throws {
        self = Self(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .unknown
    }
}
