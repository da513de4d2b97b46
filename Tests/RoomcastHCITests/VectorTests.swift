import RoomcastHCI
import Shared
import TestSupport
import Testing
import Foundation

/// Full HCI events from other projects' test suites (TestSupport/Vectors):
/// every one must decode or throw cleanly, the consistent ones must decode,
/// and the address and RSSI the peer asserts must match ours.
@Suite struct VectorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let source: String
        /// H4 packet (indicator first).
        let packet: [UInt8]
        /// nil when the vector does not say (our own consistency check of its bytes).
        let consistent: Bool?
        let addresses: [String]
        let rssi: Int?
        var testDescription: String { source }
    }

    static let files = ["ble_monitor", "beacontools", "pureswift_bluetooth", "aioblescan"]

    static func cases() throws -> [Case] {
        var out = [Case]()
        for file in files {
            for v in try TestVectors.load(file) {
                guard let level = v.hexLevel, let hex = v.hex else { continue }
                let packet: [UInt8]
                switch level {
                case "hci_event_with_h4": packet = Hex.decode(hex) ?? []
                case "hci_event_no_h4": packet = [0x04] + (Hex.decode(hex) ?? [])
                case "le_adv_report_params":
                    guard let full = v.json["hex_as_full_hci_event"] as? String else { continue }
                    packet = Hex.decode(full) ?? []
                default: continue
                }
                let check = v.json["hci_check"] as? [String: Any]
                var addresses = [String]()
                var rssi: Int?
                collect(v.expect, addresses: &addresses, rssi: &rssi)
                out.append(Case(source: v.source, packet: packet, consistent: check?["consistent"] as? Bool,
                                addresses: addresses, rssi: rssi))
            }
        }
        return out
    }

    /// Finds the address and RSSI fields whatever the peer called them.
    static func collect(_ value: Any?, addresses: inout [String], rssi: inout Int?) {
        if let dict = value as? [String: Any] {
            for (key, v) in dict {
                switch key {
                case "mac", "bt_addr", "address", "mac address":
                    if let s = v as? String { addresses.append(normalise(s)) }
                case "addresses":
                    for s in v as? [String] ?? [] { addresses.append(normalise(s)) }
                case "rssi":
                    // Some peers assert only that a value exists (`true`); skip those.
                    if let n = v as? NSNumber, String(cString: n.objCType) != "c" { rssi = n.intValue }
                default:
                    collect(v, addresses: &addresses, rssi: &rssi)
                }
            }
        } else if let array = value as? [Any] {
            for v in array { collect(v, addresses: &addresses, rssi: &rssi) }
        }
    }

    /// Peer expectations whose "mac" is a derived sub-device identity, with the reason.
    static let payloadIdentities = [
        // Govee H5178 reports its outdoor sensor as the advertiser address + 1.
        "custom-components/ble_monitor custom_components/ble_monitor/test/test_govee_parser.py::TestGovee.test_Govee_H5178_sensor_1":
            "a4c138dfc546",
    ]

    static func normalise(_ s: String) -> String {
        s.lowercased().filter { $0 != ":" && $0 != "-" }
    }

    @Test func thereAreEnoughVectors() throws {
        let all = try Self.cases()
        #expect(all.count >= 300)
        #expect(all.filter { $0.consistent == false }.count >= 13)
        #expect(all.filter { $0.rssi != nil }.count >= 250)
        #expect(all.filter { !$0.addresses.isEmpty }.count >= 280)
    }

    @Test(arguments: try cases())
    func decodesOrThrowsCleanly(_ c: Case) throws {
        let result = Result { () throws(HCIDecodeError) in try HCIPacket.decode(h4: c.packet, timestamp: 0) }
        switch (c.consistent, result) {
        case (false, .success(let p)):
            Issue.record("a broken vector decoded: \(p)")
        case (false, .failure):
            break
        case (_, .failure(let e)):
            Issue.record("a consistent vector did not decode: \(e)")
        case (_, .success(let packet)):
            let reports = packet.eventReports
            #expect(!reports.isEmpty)
            if !c.addresses.isEmpty {
                let ours = Set(reports.map { Hex.encode($0.address) })
                let payloads = reports.map { Hex.encode($0.data) }
                for address in c.addresses where address.count == 12 {
                    // ble_monitor takes some devices' identity from the payload (Sonoff:
                    // 0000 + 4 payload bytes) or numbers sub-sensors (Govee H5178 outdoor
                    // sensor = address + 1); those are not the advertiser address.
                    let fromPayload = payloads.contains { $0.contains(address.drop { $0 == "0" }) }
                    let known = Self.payloadIdentities[c.source] == address
                    #expect(ours.contains(address) || fromPayload || known, "expected \(address), decoded \(ours)")
                }
            }
            if let rssi = c.rssi {
                #expect(reports.contains { $0.rssi == rssi }, "expected RSSI \(rssi), decoded \(reports.map(\.rssi))")
            }
        }
    }
}
