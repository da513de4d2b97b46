/// Finds beacon frames in decoded AD structures by trying every format of `BeaconFormat.all`.
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
    /// Each frame is read by the first format that claims it.
    public func decode(_ data: AdvertisingData) -> BeaconScan {
        var scan = BeaconScan()
        decode(data, into: &scan)
        return scan
    }

    /// Decodes into `scan`, which ends up as `decode(data)` would return it; its arrays keep their
    /// storage (see `AdvertisingData.decode(_:into:)`).
    public func decode(_ data: AdvertisingData, into scan: inout BeaconScan) {
        scan.beacons.empty()
        scan.rejections.empty()
        for m in data.manufacturerData {
            for reader in BeaconFormat.manufacturerReaders where reader.offered(m) {
                if add(reader.read(m, self), to: &scan) { break }
            }
        }
        for s in data.serviceData {
            guard let short = s.uuid.uuid16 else { continue }
            for (uuid, read) in BeaconFormat.serviceReaders where uuid == short {
                if add(read(s.data), to: &scan) { break }
            }
        }
    }

    /// Adds what a format found; true when the frame was the format's.
    private func add(_ frame: BeaconFormat.Frame, to scan: inout BeaconScan) -> Bool {
        switch frame {
        case .beacon(let b): scan.beacons.append(b)
        case .rejected(let r): scan.rejections.append(r)
        case .notThisFormat: return false
        }
        return true
    }
}
