/// Estimote Nearable (sticker): manufacturer data of company 0x015D.
public struct EstimoteNearable: Sendable, Equatable {
    /// 8-byte identifier, stable per sticker.
    public var identifier: [UInt8]
    public var hardwareVersion: UInt8
    public var firmwareVersion: UInt8
    /// Temperature in °C.
    public var temperature: Double
    public var isMoving: Bool

    public static let companyID: UInt16 = 0x015D

    /// Decodes the bytes after the company id; nil unless it is a nearable frame.
    public static func decode(_ d: ArraySlice<UInt8>) -> EstimoteNearable? {
        let s = d.startIndex
        guard d.count >= 14, d[s] == 0x01 else { return nil }
        var raw = Int(UInt16(d[s + 11]) | UInt16(d[s + 12]) << 8) & 0x0FFF
        if raw >= 2048 { raw -= 4096 }
        return EstimoteNearable(identifier: Array(d[(s + 1)..<(s + 9)]), hardwareVersion: d[s + 9],
                                firmwareVersion: d[s + 10], temperature: Double(raw) / 16,
                                isMoving: d[s + 13] & 0x40 != 0)
    }
}
