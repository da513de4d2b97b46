import Foundation
import Shared

/// One beacon frame found in an advertisement.
public enum Beacon: Sendable, Equatable {
    case iBeacon(IBeacon)
    case altBeacon(AltBeacon)
    case eddystone(Eddystone)
    /// UriBeacon (service 0xFED8), Eddystone-URL's predecessor with the same URL coding.
    case uriBeacon(txPower: Int8, url: String)
    case estimoteTelemetry(EstimoteTelemetry)
    case estimoteNearable(EstimoteNearable)
    case exposureNotification(ExposureNotification)

    /// A short, stable name of the format, as in reports and benchmark tables.
    public var format: String {
        switch self {
        case .iBeacon: return "ibeacon"
        case .altBeacon: return "altbeacon"
        case .eddystone(let e):
            switch e {
            case .uid: return "eddystone-uid"
            case .url: return "eddystone-url"
            case .tlm: return "eddystone-tlm"
            case .encryptedTLM: return "eddystone-etlm"
            case .eid: return "eddystone-eid"
            }
        case .uriBeacon: return "uribeacon"
        case .estimoteTelemetry: return "estimote-telemetry"
        case .estimoteNearable: return "estimote-nearable"
        case .exposureNotification: return "exposure-notification"
        }
    }

    /// The wire contract's kind for this frame, nil for frames that never become a reading
    /// on their own (TLM, Exposure Notification).
    public var kind: BeaconKind? {
        switch self {
        case .iBeacon: return .iBeacon
        case .altBeacon: return .altBeacon
        case .eddystone(let e):
            switch e {
            case .uid: return .eddystoneUID
            case .url: return .eddystoneURL
            case .eid: return .eddystoneEID
            case .tlm, .encryptedTLM: return nil
            }
        case .uriBeacon: return .eddystoneURL
        case .estimoteTelemetry, .estimoteNearable: return .estimote
        case .exposureNotification: return nil
        }
    }

    /// The beacon's own identity, for formats that carry a stable one.
    public var beaconID: BeaconID? {
        switch self {
        case .iBeacon(let b): return .iBeacon(uuid: b.uuid, major: b.major, minor: b.minor)
        case .altBeacon(let b): return .altBeacon(id1: b.id1, id2: b.id2, id3: b.id3)
        case .eddystone(.uid(_, let ns, let inst)): return .eddystone(namespace: ns, instance: inst)
        default: return nil
        }
    }

    /// The TX power field as the frame carries it (dBm): iBeacon measured power and AltBeacon
    /// reference RSSI are at 1 m, Eddystone and UriBeacon TX power at 0 m.
    public var advertisedPower: Int? {
        switch self {
        case .iBeacon(let b): return Int(b.measuredPower)
        case .altBeacon(let b): return Int(b.referenceRSSI)
        case .eddystone(.uid(let tx, _, _)), .eddystone(.url(let tx, _, _)), .eddystone(.eid(let tx, _)):
            return Int(tx)
        case .uriBeacon(let tx, _): return Int(tx)
        default: return nil
        }
    }

    /// Expected RSSI at 1 m (dBm), the reference the distance model uses.
    ///
    /// iBeacon measured power and AltBeacon reference RSSI are already at 1 m. Eddystone and
    /// UriBeacon advertise TX power at 0 m, converted here by subtracting 41 dB. A measured
    /// power of 0 means "not calibrated" (seen on cheap tags), and one outside −127 ... −1 dBm
    /// is no 1 m RSSI either: both give nil, for the readings as for the ranging.
    public var referencePower: Int? {
        let power: Int?
        switch self {
        case .iBeacon, .altBeacon: power = advertisedPower
        case .eddystone, .uriBeacon: power = advertisedPower.map { $0 - Eddystone.oneMetreLoss }
        default: power = nil
        }
        guard let power, Self.plausibleReferencePower ~= power else { return nil }
        return power
    }

    /// 1 m RSSI values a reference can have.
    public static let plausibleReferencePower = -127...(-1)

    /// Telemetry in the wire contract's shape, for frames that carry any.
    public var telemetry: BeaconTelemetry? {
        switch self {
        case .eddystone(.tlm(let t)):
            return BeaconTelemetry(batteryMillivolts: t.batteryMillivolts == 0 ? nil : Int(t.batteryMillivolts),
                                   temperature: t.temperature, advertisementCount: t.advertisementCount,
                                   uptime: t.uptime, encrypted: false)
        case .eddystone(.encryptedTLM):
            return BeaconTelemetry(encrypted: true)
        case .estimoteTelemetry(let e):
            switch e.subframe {
            case .a(let a): return BeaconTelemetry(motion: a.isMoving)
            case .b(let b):
                return BeaconTelemetry(batteryMillivolts: b.batteryMillivolts, batteryPercent: b.batteryLevel,
                                       temperature: b.temperature, uptime: b.uptimeSeconds)
            }
        case .estimoteNearable(let n):
            return BeaconTelemetry(temperature: n.temperature, motion: n.isMoving)
        default:
            return nil
        }
    }
}
