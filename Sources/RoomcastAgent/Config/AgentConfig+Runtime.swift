import Foundation
import RoomcastAdvertising
import RoomcastHCI
import RoomcastMQTT
import Shared
import RoomcastConfig

extension AgentConfig {
    /// The ranging filter and distance model this config asks for.
    public var rangingConfig: RangingConfig {
        var r = RangingConfig()
        let f = ranging.filter
        switch f.kind {
        case .medianKalman:
            r.medianWindow = f.window
        case .kalman:
            r.medianWindow = 1
        case .median:
            r.medianWindow = f.window
            r.kalman = false
        case .none:
            r.medianWindow = 1
            r.kalman = false
        }
        if f.kind == .medianKalman || f.kind == .kalman {
            r.processNoise = f.processNoise
            r.measurementNoise = f.measurementNoise
        }
        r.outlierGate = max(1, f.outlierDb / f.measurementNoise.squareRoot())
        r.pathLossExponent = ranging.pathLossExponent
        r.rxAdjust = ranging.rxAdjustDb
        r.defaultPower = ranging.defaultPower
        r.immediateBelow = ranging.immediateM
        r.nearBelow = ranging.nearM
        r.forgetAfter = ranging.forgetAfterS
        r.unknownAfter = min(r.unknownAfter, ranging.forgetAfterS)
        for b in beacons {
            if let id = BeaconID(b.id), let p = b.power { r.powerOverrides[id] = p }
        }
        return r
    }

    /// The agent core's settings.
    public var agentSettings: AgentSettings {
        AgentSettings(node: node, room: room, topics: mqtt.topics, ranging: rangingConfig,
                      reportInterval: publish.reportIntervalS, significantChangeDB: publish.significantChangeDb,
                      significantChangeMeters: publish.significantChangeM, telemetryInterval: publish.telemetryIntervalS,
                      outputs: outputs.enabled, adapter: source.description,
                      maxTrackedBeacons: maxTrackedBeacons)
    }

    /// How the radio scans, advertises and recovers.
    public func radioOptions(record: String?) throws(ConfigError) -> RadioOptions {
        var options = RadioOptions()
        options.scan = ScanSettings(type: scan.active ? .active : .passive, interval: scan.intervalMs / 1000,
                                    window: scan.windowMs / 1000)
        options.recovery = RecoveryPolicy(stallTimeout: scan.restartAfterS)
        options.recordPath = record
        options.waitForAdapter = true
        options.burstWindow = scan.burstWindowMs.map { $0 / 1000 }
        if advertise.enabled {
            guard let uuid = advertise.uuid,
                  let data = IBeaconAdvertisement.encode(uuidString: uuid, major: advertise.major, minor: advertise.minor,
                                                         power: Int8(clamping: advertise.power)) else {
                throw ConfigError(problems: [ConfigProblem(path: "advertise.uuid", message: "not a UUID")])
            }
            options.advertise = AdvertisingSettings(data: data, interval: advertise.intervalMs / 1000)
        }
        return options
    }
}

