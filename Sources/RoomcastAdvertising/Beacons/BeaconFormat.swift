/// One beacon format `BeaconDecoder` knows: where its frames are carried (manufacturer data,
/// or service data under a 16-bit UUID) and how one is read. `all` is the one table of them;
/// a new format is a decoder beside the others in this folder and a row there.
public struct BeaconFormat: Sendable {
    /// What a format made of one frame.
    public enum Frame: Sendable, Equatable {
        case beacon(Beacon)
        /// The frame has the format's shape but is refused (a look-alike, or too short).
        case rejected(BeaconRejection)
        /// Not this format's frame; the next format is tried.
        case notThisFormat
    }

    public enum Reader: Sendable {
        /// Reads manufacturer data; the decoder's settings (allowed iBeacon companies) are passed in.
        /// With `companyID` or `prefix`, data of another company, or not starting with `prefix`, is
        /// not offered to the reader (it would answer `notThisFormat`): every advertisement's
        /// manufacturer data passes the table, and a call per format is most of what it costs.
        case manufacturer(companyID: UInt16? = nil, prefix: [UInt8] = [], @Sendable (ManufacturerData, BeaconDecoder) -> Frame)
        /// Reads service data under `uuid`.
        case service(uuid: UInt16, @Sendable (ArraySlice<UInt8>) -> Frame)
    }

    /// The format's name, for docs and tests.
    public let name: String
    public let reader: Reader

    public init(_ name: String, _ reader: Reader) {
        self.name = name
        self.reader = reader
    }

    /// Every format, in the order a frame is offered to them: the first that does not answer
    /// `notThisFormat` has it.
    public static let all: [BeaconFormat] = [
        BeaconFormat("AltBeacon", .manufacturer(prefix: [0xBE, 0xAC]) { m, _ in
            AltBeacon.decode(companyID: m.companyID, m.data).map { .beacon(.altBeacon($0)) } ?? .notThisFormat
        }),
        BeaconFormat("Estimote Nearable", .manufacturer(companyID: EstimoteNearable.companyID) { m, _ in
            guard m.companyID == EstimoteNearable.companyID, let n = EstimoteNearable.decode(m.data) else { return .notThisFormat }
            return .beacon(.estimoteNearable(n))
        }),
        BeaconFormat("iBeacon", .manufacturer { m, decoder in IBeacon.frame(m, allowing: decoder.iBeaconCompanies) }),
        BeaconFormat("Eddystone", .service(uuid: Eddystone.serviceUUID) { d in
            switch Eddystone.decode(d) {
            case .success(let e): .beacon(.eddystone(e))
            case .failure(let f): .rejected(BeaconRejection(.eddystone(f)))
            }
        }),
        BeaconFormat("Estimote Telemetry", .service(uuid: EstimoteTelemetry.serviceUUID) { d in
            EstimoteTelemetry.decode(d).map { .beacon(.estimoteTelemetry($0)) } ?? .notThisFormat
        }),
        BeaconFormat("Exposure Notification", .service(uuid: ExposureNotification.serviceUUID) { d in
            ExposureNotification.decode(d).map { .beacon(.exposureNotification($0)) }
                ?? .rejected(BeaconRejection(.shortExposureNotification(length: d.count)))
        }),
        BeaconFormat("URIBeacon", .service(uuid: BeaconDecoder.uriBeaconUUID) { d in
            // Flags byte, TX power, then the URL field.
            guard d.count >= 3, let url = EddystoneURLCodec.decode(d.dropFirst(2)) else { return .notThisFormat }
            return .beacon(.uriBeacon(txPower: Int8(bitPattern: d[d.startIndex + 1]), url: url))
        }),
    ]

    /// A manufacturer-data reader of `all` and the data it is offered.
    struct ManufacturerReader: Sendable {
        let companyID: UInt16?
        let prefix: [UInt8]
        let read: @Sendable (ManufacturerData, BeaconDecoder) -> Frame

        /// Whether `m` is offered to `read`: of `companyID` (when set) and starting with `prefix`.
        func offered(_ m: ManufacturerData) -> Bool {
            if let companyID, m.companyID != companyID { return false }
            guard m.data.count >= prefix.count else { return prefix.isEmpty }
            var i = m.data.startIndex
            for b in prefix {
                if m.data[i] != b { return false }
                i += 1
            }
            return true
        }
    }

    /// The manufacturer-data readers of `all`, in order (the hot path walks these).
    static let manufacturerReaders: [ManufacturerReader] = all.compactMap {
        if case .manufacturer(let companyID, let prefix, let read) = $0.reader {
            return ManufacturerReader(companyID: companyID, prefix: prefix, read: read)
        }
        return nil
    }

    /// The service-data readers of `all` with their UUIDs, in order.
    static let serviceReaders: [(uuid: UInt16, read: @Sendable (ArraySlice<UInt8>) -> Frame)] = all.compactMap {
        if case .service(let uuid, let read) = $0.reader { return (uuid, read) }
        return nil
    }
}
