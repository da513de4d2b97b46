import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Shared

/// `edge-agent decode <hex>`: a full HCI event (with or without the H4 0x04
/// byte), an LE Advertising Report parameter block, or bare AD structures,
/// decoded to JSON with the wire contract's field names.
public enum DecodeCommand {
    /// What the input turned out to be, and every advertisement in it.
    public struct Output: Encodable {
        public var input: String
        public var reports: [AdvertisementReport]
    }

    public enum Failure: Error, CustomStringConvertible {
        case notHex
        case undecodable(String)

        public var description: String {
            switch self {
            case .notHex: "input is not hex (digits 0-9 a-f, optionally separated by spaces, ':' or '-')"
            case .undecodable(let why): "cannot decode: \(why)"
            }
        }
    }

    /// Decodes `hex` with the tracking rules of `config`.
    public static func decode(_ hex: String, config: AdvertisingConfig = AdvertisingConfig()) throws -> Output {
        guard let bytes = Hex.decode(hex), !bytes.isEmpty else { throw Failure.notHex }
        let decoder = try AdvertisementDecoder(config: config)

        func reports(from event: HCIEvent) -> [AdvertisementReport] {
            event.advertisingReports.map { r in
                let decoded = decoder.decode(r.data, address: BLEAddress(value: r.addressValue),
                                             addressType: BLEAddressType(hci: r.addressType.rawValue), rssi: r.rssi)
                var report = AdvertisementReport(decoded)
                report.fingerprints = decoder.fingerprints(decoded).map(\.rawValue)
                return report
            }
        }

        // 1. A full HCI event, with or without the H4 packet indicator.
        var eventError: String?
        for (candidate, label) in [(bytes.first == 0x04 ? Array(bytes.dropFirst()) : nil, "hci-event-h4"),
                                   (bytes.first == 0x3E ? bytes : nil, "hci-event")] {
            guard let candidate else { continue }
            do {
                let event = try HCIEvent.decode(candidate)
                let found = reports(from: event)
                if !found.isEmpty { return Output(input: label, reports: found) }
                eventError = "an HCI event without advertising reports"
            } catch {
                eventError = "\(label): \(error)"
            }
        }
        // 2. LE Advertising Report parameters (Num_Reports first).
        if bytes.count <= 254, let count = bytes.first, (1...25).contains(count),
           let event = try? HCIEvent.decode([0x3E, UInt8(bytes.count + 1), 0x02] + bytes) {
            let found = reports(from: event)
            if !found.isEmpty { return Output(input: "le-advertising-report", reports: found) }
        }
        // 3. Bare AD structures.
        let decoded = decoder.decode(bytes)
        if decoded.data.structureCount > 0 {
            var report = AdvertisementReport(decoded)
            report.fingerprints = decoder.fingerprints(decoded).map(\.rawValue)
            return Output(input: "ad-structures", reports: [report])
        }
        throw Failure.undecodable(eventError ?? "no HCI event, advertising report or AD structure in \(bytes.count) byte(s)"
                                  + (decoded.data.issues.first.map { "; \($0)" } ?? ""))
    }

    /// The JSON text printed by the command.
    public static func json(_ output: Output) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(output), as: UTF8.self)
    }
}
