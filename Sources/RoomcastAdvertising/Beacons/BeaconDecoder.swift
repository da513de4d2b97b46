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
                case .failure(let f): scan.rejections.append(BeaconRejection(format: "eddystone", reason: "\(f)"))
                }
            case EstimoteTelemetry.serviceUUID:
                if let t = EstimoteTelemetry.decode(s.data) { scan.beacons.append(.estimoteTelemetry(t)) }
            case ExposureNotification.serviceUUID:
                if let e = ExposureNotification.decode(s.data) {
                    scan.beacons.append(.exposureNotification(e))
                } else {
                    scan.rejections.append(BeaconRejection(format: "exposure-notification",
                                                           reason: "service data of \(s.data.count) bytes, expected 20"))
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
                let type = d.first.map { "0x" + ADIssue.hex2($0) } ?? "none"
                scan.rejections.append(BeaconRejection(format: "ibeacon", reason: "Apple frame of type \(type), not an iBeacon"))
                return
            }
        } else if isIBeaconShape && !iBeaconCompanies.contains(m.companyID) {
            scan.rejections.append(BeaconRejection(
                format: "ibeacon", reason: "iBeacon-shaped frame from company 0x\(String(m.companyID, radix: 16)), not allow-listed"))
            return
        } else if !isIBeaconShape {
            return
        }
        if let b = IBeacon.decode(companyID: m.companyID, d) {
            scan.beacons.append(.iBeacon(b))
        } else {
            scan.rejections.append(BeaconRejection(format: "ibeacon", reason: "iBeacon frame of \(d.count) bytes, expected 23"))
        }
    }
}

/// The beacon frames found in one advertisement and the look-alikes refused.
public struct BeaconScan: Sendable, Equatable {
    public var beacons: [Beacon] = []
    public var rejections: [BeaconRejection] = []
    public init() {}
}

/// Why a frame that looked like a beacon format was refused.
public struct BeaconRejection: Sendable, Equatable, Encodable, CustomStringConvertible {
    public var format: String
    public var reason: String
    public var description: String { "\(format): \(reason)" }
}
