/// A radio PHY (Core 5.4 Vol 4 Part E §7.7.65.13 Primary_PHY / Secondary_PHY).
public enum PHY: Sendable, Hashable {
    case le1M
    case le2M
    case leCoded
    case other(UInt8)

    public init(rawValue: UInt8) {
        switch rawValue {
        case 0x01: self = .le1M
        case 0x02: self = .le2M
        case 0x03: self = .leCoded
        default: self = .other(rawValue)
        }
    }
}
