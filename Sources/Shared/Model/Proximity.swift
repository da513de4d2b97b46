/// CoreLocation's proximity classes, as on the wire.
public enum Proximity: String, Codable, Sendable, CaseIterable {
    case immediate, near, far, unknown
}
