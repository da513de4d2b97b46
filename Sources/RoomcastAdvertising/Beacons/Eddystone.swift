/// An Eddystone frame: service data on UUID 0xFEAA (github.com/google/eddystone).
///
/// TX power convention: Eddystone carries the calibrated TX power at **0 m**. A 1 m reference
/// RSSI, which the ranging code expects, is that value minus 41 dB (the free-space loss over the
/// first metre, as the Android Beacon Library's layouts `p:3-3:-41` do); see `referencePower`.
public enum Eddystone: Sendable, Equatable {
    /// Eddystone-UID: 10-byte namespace + 6-byte instance.
    case uid(txPower: Int8, namespace: [UInt8], instance: [UInt8])
    /// Eddystone-URL: the decoded URL and the raw scheme + encoded bytes.
    case url(txPower: Int8, url: String, encoded: [UInt8])
    /// Eddystone-TLM, plain (version 0): telemetry in clear.
    case tlm(EddystoneTLM)
    /// Eddystone-TLM, encrypted (version 1, eTLM): only salt and MIC are readable.
    case encryptedTLM(encrypted: [UInt8], salt: UInt16, mic: UInt16)
    /// Eddystone-EID: an 8-byte ephemeral id that rotates; not trackable without the beacon's key.
    case eid(txPower: Int8, eid: [UInt8])

    /// The service UUID Eddystone uses.
    public static let serviceUUID: UInt16 = 0xFEAA
    /// dB subtracted from the 0 m TX power to get a 1 m reference.
    public static let oneMetreLoss = 41

    /// Why a frame on 0xFEAA did not decode.
    public enum Failure: Error, Equatable, Sendable {
        case empty
        case tooShort(frameType: UInt8, length: Int)
        case badURL
        case unknownFrameType(UInt8)
        case unknownTLMVersion(UInt8)
    }

    /// Decodes the service data bytes after the 0xFEAA UUID.
    public static func decode(_ d: ArraySlice<UInt8>) -> Result<Eddystone, Failure> {
        guard let frame = d.first else { return .failure(.empty) }
        let s = d.startIndex
        func short() -> Result<Eddystone, Failure> { .failure(.tooShort(frameType: frame, length: d.count)) }
        switch frame {
        case 0x00:
            // RFU bytes 18-19 are optional: many beacons leave them out.
            guard d.count >= 18 else { return short() }
            return .success(.uid(txPower: Int8(bitPattern: d[s + 1]), namespace: Array(d[(s + 2)..<(s + 12)]),
                                 instance: Array(d[(s + 12)..<(s + 18)])))
        case 0x10:
            guard d.count >= 3 else { return short() }
            let field = d[(s + 2)...]
            guard let url = EddystoneURLCodec.decode(field) else { return .failure(.badURL) }
            return .success(.url(txPower: Int8(bitPattern: d[s + 1]), url: url, encoded: Array(field)))
        case 0x20:
            guard d.count >= 2 else { return short() }
            switch d[s + 1] {
            case 0x00:
                guard d.count >= 14 else { return short() }
                return .success(.tlm(EddystoneTLM(
                    batteryMillivolts: UInt16(d[s + 2]) << 8 | UInt16(d[s + 3]),
                    temperatureRaw: Int16(bitPattern: UInt16(d[s + 4]) << 8 | UInt16(d[s + 5])),
                    advertisementCount: be32(d, s + 6), uptimeTenths: be32(d, s + 10))))
            case 0x01:
                guard d.count >= 18 else { return short() }
                return .success(.encryptedTLM(encrypted: Array(d[(s + 2)..<(s + 14)]),
                                              salt: UInt16(d[s + 14]) << 8 | UInt16(d[s + 15]),
                                              mic: UInt16(d[s + 16]) << 8 | UInt16(d[s + 17])))
            default:
                return .failure(.unknownTLMVersion(d[s + 1]))
            }
        case 0x30:
            guard d.count >= 10 else { return short() }
            return .success(.eid(txPower: Int8(bitPattern: d[s + 1]), eid: Array(d[(s + 2)..<(s + 10)])))
        default:
            return .failure(.unknownFrameType(frame))
        }
    }

    static func be32(_ d: ArraySlice<UInt8>, _ j: Int) -> UInt32 {
        UInt32(d[j]) << 24 | UInt32(d[j + 1]) << 16 | UInt32(d[j + 2]) << 8 | UInt32(d[j + 3])
    }
}
