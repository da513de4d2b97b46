/// The controller's LE feature bits (Core 5.4 Vol 6 Part B §4.6), as returned by
/// LE Read Local Supported Features (Core 5.4 Vol 4 Part E §7.8.3).
public struct LEFeatures: Sendable, Hashable {
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Whether feature bit `bit` is set.
    public func contains(bit: Int) -> Bool { rawValue >> UInt64(bit) & 1 == 1 }

    /// Bit 12: LE Extended Advertising, hence the extended scan commands.
    public var extendedAdvertising: Bool { contains(bit: 12) }
    /// Bit 11: LE Coded PHY.
    public var codedPHY: Bool { contains(bit: 11) }
}
