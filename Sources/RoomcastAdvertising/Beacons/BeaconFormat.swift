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
        case manufacturer(@Sendable (ManufacturerData, BeaconDecoder) -> Frame)
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
        BeaconFormat("AltBeacon", .manufacturer { m, _ in
            AltBeacon.decode(companyID: m.companyID, m.data).map { .beacon(.altBeacon($0)) } ?? .notThisFormat
        }),
        BeaconFormat("Estimote Nearable", .manufacturer { m, _ in
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

    /// The manufacturer-data readers of `all`, in order (the hot path walks these).
    static let manufacturerReaders: [@Sendable (ManufacturerData, BeaconDecoder) -> Frame] = all.compactMap {
        if case .manufacturer(let read) = $0.reader { return read }
        return nil
    }

    /// The service-data readers of `all` with their UUIDs, in order.
    static let serviceReaders: [(uuid: UInt16, read: @Sendable (ArraySlice<UInt8>) -> Frame)] = all.compactMap {
        if case .service(let uuid, let read) = $0.reader { return (uuid, read) }
        return nil
    }
}
