import Foundation
import Shared

/// What a recorded scenario's beacons put on the air, so that its packets (`raw.jsonl`: a
/// time, a node, an id and an RSSI, as RSSI logs from other systems come) can become the
/// captures the edge agent replays (`roomcast-sim capture`). The agent decodes the frame back
/// to the same id: an iBeacon id becomes an iBeacon frame, an Eddystone id an Eddystone-UID
/// frame, each with the beacon's `measured_power` as its calibrated power.
public enum RecordedAdvertisers {
    /// A beacon of `beacons.json` that no frame carries.
    public struct UnsupportedBeacon: Error, CustomStringConvertible {
        public var id: BeaconID
        public var description: String {
            "beacon \(id): only ibeacon and eddystone ids can be written as captures"
        }
    }

    /// Writes `directory/nodes/<node>.btsnoop` for `scenario` (loaded from `directory`): what
    /// `roomcast-sim capture` does.
    public static func writeCaptures(of scenario: Scenario, in directory: URL) throws {
        let recorded = GeneratedScenario(scenario: scenario, bound: DecisionTimeline(), receiverOffsets: [:],
                                         advertisers: try advertisers(for: scenario.beacons))
        try BTSnoopScenarioWriter(directory: directory).write(recorded)
    }

    /// Calibrated power for a beacon without `measured_power`: the iBeacon default of the
    /// agent's ranging (`ranging.default_measured_power`).
    static let defaultPower = -59

    /// One advertiser per beacon, each with a static random address of its own (the same id
    /// always gets the same address).
    public static func advertisers(for beacons: [ScenarioBeacon]) throws -> [BeaconID: SimulatedAdvertiser] {
        var out: [BeaconID: SimulatedAdvertiser] = [:]
        for beacon in beacons {
            let power = beacon.measuredPower ?? defaultPower
            guard let data = frame(for: beacon.id, power: power) else { throw UnsupportedBeacon(id: beacon.id) }
            // ADV_NONCONN_IND, as beacons send.
            out[beacon.id] = SimulatedAdvertiser(id: beacon.id, address: .fixed(ScenarioSimulator.staticAddress(for: beacon.id, seed: 0), random: true),
                                                 eventType: 0x03, data: data)
        }
        return out
    }

    /// The advertising data that decodes to `id`; nil for ids no beacon frame carries.
    static func frame(for id: BeaconID, power: Int) -> [UInt8]? {
        let value = id.rawValue.drop(while: { $0 != ":" }).dropFirst()
        let parts = value.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        switch id.scheme {
        case "ibeacon":
            // BeaconID validated the form: five UUID groups, then major and minor.
            guard parts.count == 7, let uuid = Hex.decode(parts[0..<5].joined()), uuid.count == 16,
                  let major = UInt16(parts[5]), let minor = UInt16(parts[6]) else { return nil }
            return AdvertisingPayload.iBeacon(uuid: uuid, major: major, minor: minor, power: power)
        case "eddystone":
            guard parts.count == 2, let namespace = Hex.decode(parts[0]), namespace.count == 10,
                  let instance = Hex.decode(parts[1]), instance.count == 6 else { return nil }
            return AdvertisingPayload.eddystoneUID(namespace: namespace, instance: instance, power: power)
        default:
            return nil
        }
    }
}
