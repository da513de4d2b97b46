/// How fast a capture is replayed: at the pace it was recorded, as fast as
/// the consumer takes it, or `factor` times the recorded pace.
public enum ReplaySpeed: Sendable, Hashable, CustomStringConvertible {
    case realtime
    case max
    case factor(Double)

    /// Parses `realtime`, `max`, or a positive factor such as `2`, `0.5` or `10x`.
    public init?(_ text: String) {
        switch text.lowercased() {
        case "realtime", "1", "1x": self = .realtime
        case "max", "fast": self = .max
        default:
            var t = Substring(text)
            if t.hasSuffix("x") || t.hasSuffix("X") { t = t.dropLast() }
            guard let f = Double(t), f > 0, f.isFinite else { return nil }
            self = .factor(f)
        }
    }

    /// The pace relative to the capture; nil for `max` (no waiting).
    public var factor: Double? {
        switch self {
        case .realtime: 1
        case .max: nil
        case let .factor(f): f
        }
    }

    public var description: String {
        switch self {
        case .realtime: "realtime"
        case .max: "max"
        case let .factor(f): "\(f)x"
        }
    }
}
