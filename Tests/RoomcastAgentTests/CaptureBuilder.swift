import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Shared

/// Builds small btsnoop captures of LE Advertising Report events for agent tests.
struct CaptureBuilder {
    struct Advert {
        var t: Double
        var address: [UInt8]      // display order
        var rssi: Int?            // nil = 127, not available
        var data: [UInt8]
    }

    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    /// AD bytes of an iBeacon.
    static func iBeacon(major: UInt16, minor: UInt16, power: Int8 = -59) -> [UInt8] {
        IBeaconAdvertisement.encode(uuidString: uuid, major: major, minor: minor, power: power)!
    }

    /// The LE Meta event parameters of one legacy advertising report (Core 5.4 Vol 4 Part E §7.7.65.2).
    static func event(_ a: Advert) -> [UInt8] {
        var p: [UInt8] = [0x02, 0x01, 0x03, 0x01] + a.address.reversed() + [UInt8(a.data.count)] + a.data
        p.append(UInt8(bitPattern: Int8(a.rssi ?? 127)))
        return [0x3E, UInt8(p.count)] + p
    }

    /// Writes the adverts to a temporary btsnoop file and returns its path.
    static func write(_ adverts: [Advert]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-\(UUID().uuidString).btsnoop").path
        let writer = try BTSnoopWriter(path: path)
        for a in adverts {
            try writer.write(type: .event, bytes: event(a), timestamp: a.t, direction: .controllerToHost)
        }
        try writer.flush()
        writer.shutdown()
        return path
    }
}
