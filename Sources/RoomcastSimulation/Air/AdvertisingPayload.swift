import RoomcastAdvertising
import RoomcastHCI
import Shared

/// Advertising data (AD structures, Core 5.4 Vol 3 Part C §11) for the simulated
/// transmitters: beacons in their standard frames, phones and neighbours' devices in
/// shapes seen in real captures.
public enum AdvertisingPayload {
    /// An iBeacon frame (flags + Apple `02 15`), `power` the calibrated RSSI at 1 m.
    public static func iBeacon(uuid: [UInt8], major: UInt16, minor: UInt16, power: Int) -> [UInt8] {
        IBeaconAdvertisement.encode(uuid: uuid, major: major, minor: minor, power: Int8(clamping: power))
    }

    /// An Eddystone-UID frame: flags, the 0xFEAA service UUID, and service data
    /// `00 <tx power at 0 m> <namespace 10> <instance 6> 00 00` (Eddystone spec, UID frame).
    /// `power` is the 1 m reference; Eddystone carries the 0 m power, 41 dB above it.
    public static func eddystoneUID(namespace: [UInt8], instance: [UInt8], power: Int) -> [UInt8] {
        var out: [UInt8] = [0x02, 0x01, 0x06, 0x03, 0x03, 0xAA, 0xFE, 0x17, 0x16, 0xAA, 0xFE, 0x00]
        out.append(UInt8(bitPattern: Int8(clamping: power + 41)))
        out += padded(namespace, 10) + padded(instance, 6) + [0x00, 0x00]
        return out
    }

    /// An iPhone's background advertisement: flags and Apple "Nearby Info" manufacturer data
    /// (type 0x10), whose five bytes are status flags the resolver does not look at.
    public static func applePhone(status: [UInt8]) -> [UInt8] {
        [0x02, 0x01, 0x1A, 0x0A, 0xFF, 0x4C, 0x00, 0x10, 0x05] + padded(status, 5)
    }

    /// Where `applePhone`'s five status bytes sit.
    public static let applePhoneStatusBytes = 9..<14

    /// An Android phone's advertisement: flags and Google Fast Pair service data (0xFE2C)
    /// with a 3-byte model id.
    public static func androidPhone(model: [UInt8]) -> [UInt8] {
        [0x02, 0x01, 0x06, 0x03, 0x03, 0x2C, 0xFE, 0x06, 0x16, 0x2C, 0xFE] + padded(model, 3)
    }

    /// A Windows PC's Microsoft CDP beacon (company 0x0006): not a beacon, not tracked.
    public static func microsoftCDP(salt: [UInt8]) -> [UInt8] {
        [0x02, 0x01, 0x1A, 0x0B, 0xFF, 0x06, 0x00, 0x01, 0x09, 0x20, 0x02] + padded(salt, 4)
    }

    /// A device that only gives its complete local name.
    public static func named(_ name: String) -> [UInt8] {
        let n = Array(name.utf8.prefix(26))
        return [0x02, 0x01, 0x06, UInt8(n.count + 1), 0x09] + n
    }

    private static func padded(_ bytes: [UInt8], _ count: Int) -> [UInt8] {
        Array(bytes.prefix(count)) + [UInt8](repeating: 0, count: max(0, count - bytes.count))
    }
}
