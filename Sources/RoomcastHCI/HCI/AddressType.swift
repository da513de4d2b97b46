/// The advertiser's address type (Core 5.4 Vol 4 Part E §7.7.65.2 / §7.7.65.13).
public enum AddressType: Sendable, Hashable, CustomStringConvertible {
    case `public`
    case random
    /// A resolved public identity address (0x02).
    case publicIdentity
    /// A resolved static random identity address (0x03).
    case randomIdentity
    /// No address provided, anonymous advertisement (0xFF, extended reports only).
    case anonymous
    case other(UInt8)

    public init(rawValue: UInt8) {
        switch rawValue {
        case 0x00: self = .public
        case 0x01: self = .random
        case 0x02: self = .publicIdentity
        case 0x03: self = .randomIdentity
        case 0xFF: self = .anonymous
        default: self = .other(rawValue)
        }
    }

    public var rawValue: UInt8 {
        switch self {
        case .public: 0x00
        case .random: 0x01
        case .publicIdentity: 0x02
        case .randomIdentity: 0x03
        case .anonymous: 0xFF
        case let .other(v): v
        }
    }

    public var description: String {
        switch self {
        case .public: "public"
        case .random: "random"
        case .publicIdentity: "public-identity"
        case .randomIdentity: "random-identity"
        case .anonymous: "anonymous"
        case let .other(v): "other(\(v))"
        }
    }
}
