/// The address type an HCI advertising report gives (Core 5.4 Vol 4 Part E §7.7.65.2).
public enum BLEAddressType: Sendable, Hashable, Codable, CustomStringConvertible {
    case `public`
    case random
    /// Public identity address, resolved by the controller's resolving list.
    case publicIdentity
    /// Random (static) identity address, resolved by the controller's resolving list.
    case randomIdentity
    case other(UInt8)

    /// From the HCI Address_Type byte.
    public init(hci: UInt8) {
        switch hci {
        case 0: self = .public
        case 1: self = .random
        case 2: self = .publicIdentity
        case 3: self = .randomIdentity
        default: self = .other(hci)
        }
    }

    /// Parses `public`, `random`, `public_identity`, `random_identity` or a number 0-255.
    public init?(_ text: String) {
        switch text.lowercased() {
        case "public", "0": self = .public
        case "random", "1": self = .random
        case "public_identity", "2": self = .publicIdentity
        case "random_identity", "3": self = .randomIdentity
        default:
            guard let n = UInt8(text) else { return nil }
            self = .other(n)
        }
    }

    public var description: String {
        switch self {
        case .public: return "public"
        case .random: return "random"
        case .publicIdentity: return "public_identity"
        case .randomIdentity: return "random_identity"
        case .other(let n): return "type_\(n)"
        }
    }

    /// True for the random types (whose top address bits carry the sub-type).
    public var isRandom: Bool { self == .random || self == .randomIdentity }

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        let s = try c.decode(String.self)
        self = BLEAddressType(s) ?? .other(0xFF)
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
