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

/// The beacon frames found in one advertisement and the look-alikes refused.
public struct BeaconScan: Sendable, Equatable {
    public var beacons: [Beacon] = []
    public var rejections: [BeaconRejection] = []
    public init() {}
}

/// Why a frame that looked like a beacon format was refused. Kept as a value so the hot path
/// builds no strings; `description` formats it when someone looks.
public struct BeaconRejection: Sendable, Equatable, Encodable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        /// Apple manufacturer data whose type byte is not iBeacon's 0x02 0x15.
        case appleNotIBeacon(type: UInt8?)
        /// An iBeacon-shaped frame from a company not in the allow-list.
        case companyNotAllowed(companyID: UInt16)
        /// `02 15` but fewer than 23 bytes.
        case shortIBeacon(length: Int)
        /// Service data on 0xFEAA that is not a valid Eddystone frame.
        case eddystone(Eddystone.Failure)
        /// Service data on 0xFD6F shorter than 20 bytes.
        case shortExposureNotification(length: Int)
    }

    public let reason: Reason

    public init(_ reason: Reason) { self.reason = reason }

    /// The format the frame looked like.
    public var format: String {
        switch reason {
        case .appleNotIBeacon, .companyNotAllowed, .shortIBeacon: return "ibeacon"
        case .eddystone: return "eddystone"
        case .shortExposureNotification: return "exposure-notification"
        }
    }

    public var description: String {
        switch reason {
        case .appleNotIBeacon(let t):
            return "ibeacon: Apple frame of type \(t.map { "0x" + ADIssue.hex2($0) } ?? "none"), not an iBeacon"
        case .companyNotAllowed(let c):
            return "ibeacon: iBeacon-shaped frame from company 0x\(String(c, radix: 16)), not allow-listed"
        case .shortIBeacon(let n):
            return "ibeacon: iBeacon frame of \(n) bytes, expected 23"
        case .eddystone(let f):
            return "eddystone: \(f)"
        case .shortExposureNotification(let n):
            return "exposure-notification: service data of \(n) bytes, expected 20"
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
