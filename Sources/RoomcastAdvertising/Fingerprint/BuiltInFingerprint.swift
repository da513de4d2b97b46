import Shared

/// Fingerprints shipped with Roomcast for devices that broadcast their own stable identity
/// inside the payload (docs/fingerprints.md). All are opt-in.
public enum BuiltInFingerprint: String, CaseIterable, Sendable, Codable {
    /// Ruuvi Tag, data format 5 (RAWv2): manufacturer 0x0499, MAC in bytes 18-23.
    case ruuvi
    /// Xiaomi MiBeacon: service data 0xFE95 with the "MAC included" frame-control bit; MAC
    /// in bytes 5-10, least significant first.
    case xiaomi
    /// ATC / pvvx custom thermometer firmware: service data 0x181A, MAC first
    /// (13-byte ATC1441 format most significant first, 15/17-byte pvvx format least significant first).
    case atc
    /// Estimote Telemetry and Nearable: the device identifier in every frame.
    case estimote

    /// The `fp:` id for the advertisement, or nil when this fingerprint does not apply.
    public func match(_ ad: AdvertisingData, beacons: [Beacon]) -> BeaconID? {
        switch self {
        case .ruuvi:
            guard let m = ad.manufacturerData(company: 0x0499), m.data.count >= 24, m[at: 0] == 5 else { return nil }
            return id(m.data.dropFirst(18).prefix(6))
        case .xiaomi:
            guard let s = ad.serviceData(uuid16: 0xFE95), s.data.count >= 11,
                  let fc = s[at: 0], fc & 0x10 != 0 else { return nil }
            return id(s.data.dropFirst(5).prefix(6).reversed())
        case .atc:
            guard let s = ad.serviceData(uuid16: 0x181A) else { return nil }
            switch s.data.count {
            case 13: return id(s.data.prefix(6))
            case 15, 17: return id(s.data.prefix(6).reversed())
            default: return nil
            }
        case .estimote:
            for b in beacons {
                switch b {
                case .estimoteTelemetry(let t): return BeaconID.fingerprint(rawValue, Hex.encode(t.identifier))
                case .estimoteNearable(let n): return BeaconID.fingerprint(rawValue, Hex.encode(n.identifier))
                default: continue
                }
            }
            return nil
        }
    }

    /// The kind readings of devices found by this fingerprint carry.
    public var kind: BeaconKind { self == .estimote ? .estimote : .device }

    private func id<S: Sequence>(_ mac: S) -> BeaconID? where S.Element == UInt8 {
        let bytes = Array(mac)
        guard bytes.count == 6, bytes != [0, 0, 0, 0, 0, 0] else { return nil }
        return BeaconID.fingerprint(rawValue, Hex.encode(bytes))
    }
}
