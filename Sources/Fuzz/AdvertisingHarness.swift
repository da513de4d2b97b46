import Foundation
import RoomcastAdvertising
import Shared

/// Fuzzes the advertising pipeline the agent runs on every radio report.
///
/// Input: `[address type][6 address bytes, HCI order][rssi][AD bytes...]`; inputs shorter
/// than 8 bytes are AD bytes without an address. The decoder is configured with every
/// feature that reads AD bytes (regions, known beacons, an IRK, all built-in fingerprints and
/// offset-based rules), so one input reaches all of them.
enum AdvertisingHarness {
    static let headerSize = 8

    static let decoder: AdvertisementDecoder = {
        var c = AdvertisingConfig()
        c.regions = [
            RegionConfig(name: "office", uuid: "e2c56db5-dffb-48d2-b060-d0f5a71096e0"),
            RegionConfig(name: "eddy", namespace: "edd1ebeac04e5defa017"),
        ]
        c.knownBeacons = [KnownBeaconConfig(id: "mac:001122334455", name: "tag", power: -59)]
        // Core 5.4 Vol 3 Part H Appendix D.7 sample IRK, so seeds with 70:81:94:0d:fb:aa resolve.
        c.irks = [IRKConfig(name: "sample", key: "ec0234a357c8ad05341010a60a397d9b")]
        c.irkCacheSize = 64
        var bytes = FingerprintRuleConfig(name: "mfg-bytes", id: "manufacturer_bytes")
        bytes.companyId = 0x004C
        bytes.offset = 2
        bytes.length = 16
        var svc = FingerprintRuleConfig(name: "svc-bytes", id: "service_data_bytes")
        svc.serviceUuid = "feaa"
        svc.offset = 1
        svc.length = 4
        var name = FingerprintRuleConfig(name: "named", id: "local_name")
        name.localNamePrefix = ""
        var addr = FingerprintRuleConfig(name: "addr", id: "address")
        addr.companyId = 0x0059
        c.fingerprints = FingerprintConfig(builtins: ["all"], rules: [bytes, svc, name, addr])
        c.ibeaconCompanyIds = [0x0118]
        do { return try AdvertisementDecoder(config: c) } catch { fatalError("fuzz config invalid: \(error)") }
    }()

    static func run(_ input: [UInt8]) {
        var address: BLEAddress?
        var type: BLEAddressType?
        var rssi: Int?
        var ad = input
        if input.count >= headerSize {
            type = BLEAddressType(hci: input[0])
            address = BLEAddress(littleEndian: input[1..<7])
            rssi = Int(Int8(bitPattern: input[7]))
            ad = Array(input[headerSize...])
        }
        let decoded = decoder.decode(ad, address: address, addressType: type, rssi: rssi)
        let direct = AdvertisingData.decode(ad)
        FuzzCheck.require(direct == decoded.data, "AdvertisingData.decode is not deterministic")
        check(decoded)
    }

    /// What must hold for any decoded advertisement, however malformed its bytes.
    static func check(_ decoded: DecodedAdvertisement) {
        // Ids go into MQTT topics and must be valid by the rules everyone else parses them with.
        for b in decoded.scan.beacons {
            if let id = b.beaconID { FuzzCheck.require(BeaconID(id.rawValue) == id, "beacon id '\(id)' does not validate") }
        }
        if let id = decoded.identity?.id {
            FuzzCheck.require(BeaconID(id.rawValue) == id, "identity '\(id)' does not validate")
        }
        for id in decoder.fingerprints(decoded) {
            FuzzCheck.require(BeaconID(id.rawValue) == id, "fingerprint id '\(id)' does not validate")
        }
        // `edge-agent decode` prints this report and readings carry its telemetry: it must encode
        // (the wire encoder throws on NaN and infinities).
        let report = AdvertisementReport(decoded)
        do { _ = try WireFormat.encode(report) } catch { FuzzCheck.require(false, "report does not encode: \(error)") }
    }
}
