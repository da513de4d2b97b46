import RoomcastAdvertising

/// Resolvable private addresses (Core 5.4 Vol 6 Part B §1.3.2.2): 24 bits of `prand` whose
/// two top bits are `01`, then `hash = ah(IRK, prand)` (Core 5.4 Vol 3 Part H §2.2.2).
public enum ResolvablePrivateAddress {
    /// The address (display order, most significant byte first) for `irk` and the 22 random
    /// bits of `random`; nil only when libcrypto cannot run AES.
    public static func make(irk: IdentityResolvingKey, random: UInt32) -> [UInt8]? {
        var prand = (random & 0x3F_FFFF) | 0x40_0000
        // The random part must not be all zeros or all ones (§1.3.2.2).
        if prand & 0x3F_FFFF == 0 { prand |= 1 }
        if prand & 0x3F_FFFF == 0x3F_FFFF { prand &= ~1 }
        guard let hash = AddressResolver.ah(irk: irk.key, prand: prand) else { return nil }
        return [UInt8(truncatingIfNeeded: prand >> 16), UInt8(truncatingIfNeeded: prand >> 8), UInt8(truncatingIfNeeded: prand),
                UInt8(truncatingIfNeeded: hash >> 16), UInt8(truncatingIfNeeded: hash >> 8), UInt8(truncatingIfNeeded: hash)]
    }
}
