import Foundation

/// An iBeacon frame: manufacturer data `02 15` + proximity UUID, major, minor, measured power.
///
/// Apple's company id is 0x004C; other companies' `02 15` frames are look-alikes and are
/// accepted only when their company id is allow-listed (`BeaconDecoder.iBeaconCompanies`).
public struct IBeacon: Sendable, Equatable {
    public var companyID: UInt16
    public var uuid: UUID
    public var major: UInt16
    public var minor: UInt16
    /// Measured power: RSSI in dBm at 1 m, calibrated by the vendor. Already a 1 m reference.
    public var measuredPower: Int8

    /// The Apple type byte of an iBeacon.
    static let type: UInt8 = 0x02
    /// The length byte that follows it (21 bytes of uuid, major, minor, power).
    static let length: UInt8 = 0x15

    /// Decodes the bytes after the company id; nil unless they start `02 15` and hold 21 more bytes.
    /// Bytes beyond those 23 (some sensors append their own) are ignored.
    public static func decode(companyID: UInt16, _ d: ArraySlice<UInt8>) -> IBeacon? {
        let s = d.startIndex
        guard d.count >= 23, d[s] == type, d[s + 1] == length else { return nil }
        let uuid = d.withContiguousStorageIfAvailable { buf -> UUID in
            let p = buf.baseAddress! + 2
            return UUID(uuid: (p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7],
                               p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15]))
        } ?? UUID(uuid: (d[s + 2], d[s + 3], d[s + 4], d[s + 5], d[s + 6], d[s + 7], d[s + 8], d[s + 9],
                         d[s + 10], d[s + 11], d[s + 12], d[s + 13], d[s + 14], d[s + 15], d[s + 16], d[s + 17]))
        return IBeacon(companyID: companyID, uuid: uuid,
                       major: UInt16(d[s + 18]) << 8 | UInt16(d[s + 19]),
                       minor: UInt16(d[s + 20]) << 8 | UInt16(d[s + 21]),
                       measuredPower: Int8(bitPattern: d[s + 22]))
    }
}

extension IBeacon {
    /// An iBeacon frame (`02 15 …`) in manufacturer data: Apple's, or from a company in
    /// `allowed`. Other Apple frames, and look-alikes of other companies, are refused.
    static func frame(_ m: ManufacturerData, allowing allowed: Set<UInt16>) -> BeaconFormat.Frame {
        let d = m.data
        let isIBeaconShape = d.count >= 2 && d[d.startIndex] == IBeacon.type && d[d.startIndex + 1] == IBeacon.length
        if m.companyID == BeaconDecoder.appleCompanyID {
            guard isIBeaconShape else { return .rejected(BeaconRejection(.appleNotIBeacon(type: d.first))) }
        } else if isIBeaconShape && !allowed.contains(m.companyID) {
            return .rejected(BeaconRejection(.companyNotAllowed(companyID: m.companyID)))
        } else if !isIBeaconShape {
            return .notThisFormat
        }
        if let b = IBeacon.decode(companyID: m.companyID, d) { return .beacon(.iBeacon(b)) }
        return .rejected(BeaconRejection(.shortIBeacon(length: d.count)))
    }
}
