/// Finds beacon frames in decoded AD structures.
///
/// iBeacon: Apple (0x004C) manufacturer data `02 15 …`. Apple frames of other types (AirDrop,
/// Handoff, Nearby, Find My, …) are rejected, and so are `02 15` look-alikes from other
/// companies unless their company id is in `iBeaconCompanies`.
public struct BeaconDecoder: Sendable {
    public static let appleCompanyID: UInt16 = 0x004C
    static let uriBeaconUUID: UInt16 = 0xFED8

    /// Company ids whose `02 15` frames are accepted as iBeacons besides Apple's.
    public var iBeaconCompanies: Set<UInt16>

    public init(iBeaconCompanies: Set<UInt16> = []) {
        self.iBeaconCompanies = iBeaconCompanies
    }

    /// Every beacon frame in `data`, in AD order, plus why look-alike frames were refused.
    public func decode(_ data: AdvertisingData) -> BeaconScan {
        var scan = BeaconScan()
        for m in data.manufacturerData {
            decodeManufacturer(m, into: &scan)
        }
        for s in data.serviceData {
            guard let short = s.uuid.uuid16 else { continue }
            switch short {
            case Eddystone.serviceUUID:
                switch Eddystone.decode(s.data) {
                case .success(let e): scan.beacons.append(.eddystone(e))
                case .failure(let f): scan.rejections.append(BeaconRejection(.eddystone(f)))
                }
            case EstimoteTelemetry.serviceUUID:
                if let t = EstimoteTelemetry.decode(s.data) { scan.beacons.append(.estimoteTelemetry(t)) }
            case ExposureNotification.serviceUUID:
                if let e = ExposureNotification.decode(s.data) {
                    scan.beacons.append(.exposureNotification(e))
                } else {
                    scan.rejections.append(BeaconRejection(.shortExposureNotification(length: s.data.count)))
                }
            case Self.uriBeaconUUID:
                // Flags byte, TX power, then the URL field.
                let d = s.data
                if d.count >= 3, let url = EddystoneURLCodec.decode(d.dropFirst(2)) {
                    scan.beacons.append(.uriBeacon(txPower: Int8(bitPattern: d[d.startIndex + 1]), url: url))
                }
            default:
                break
            }
        }
        return scan
    }

    private func decodeManufacturer(_ m: ManufacturerData, into scan: inout BeaconScan) {
        let d = m.data
        if let alt = AltBeacon.decode(companyID: m.companyID, d) {
            scan.beacons.append(.altBeacon(alt))
            return
        }
        if m.companyID == EstimoteNearable.companyID, let n = EstimoteNearable.decode(d) {
            scan.beacons.append(.estimoteNearable(n))
            return
        }
        let isIBeaconShape = d.count >= 2 && d[d.startIndex] == IBeacon.type && d[d.startIndex + 1] == IBeacon.length
        if m.companyID == Self.appleCompanyID {
            guard isIBeaconShape else {
                scan.rejections.append(BeaconRejection(.appleNotIBeacon(type: d.first)))
                return
            }
        } else if isIBeaconShape && !iBeaconCompanies.contains(m.companyID) {
            scan.rejections.append(BeaconRejection(.companyNotAllowed(companyID: m.companyID)))
            return
        } else if !isIBeaconShape {
            return
        }
        if let b = IBeacon.decode(companyID: m.companyID, d) {
            scan.beacons.append(.iBeacon(b))
        } else {
            scan.rejections.append(BeaconRejection(.shortIBeacon(length: d.count)))
        }
    }
}
