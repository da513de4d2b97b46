import Foundation
import RoomcastAdvertising
import RoomcastConfig
import Shared

extension AgentConfig {
    /// Every semantic problem: names that cannot be topic levels, ranges, ids.
    public func validate() -> [ConfigProblem] {
        var checks = ConfigChecks()
        checks.topicName(node, at: "node")
        if let room { checks.topicName(room, at: "room") }
        mqtt.validate(at: "mqtt", into: &checks)

        checks.range(scan.intervalMs, 2.5...10240, at: "scan.interval_ms", unit: " ms")
        checks.range(scan.windowMs, 2.5...10240, at: "scan.window_ms", unit: " ms")
        if scan.windowMs > scan.intervalMs {
            checks.add("scan.window_ms", "must not exceed scan.interval_ms (\(scan.intervalMs))")
        }
        checks.range(scan.restartAfterS, 0...86400, at: "scan.restart_after_s", unit: " s")
        if scan.restartAfterS > 0 && scan.restartAfterS < 5 {
            // Seconds without a report are common in a quiet room; every fourth restart resets the adapter.
            checks.add("scan.restart_after_s", "must be 0 (never) or at least 5 s, found \(scan.restartAfterS): a quiet room "
                       + "would restart the scan, and reset the adapter, every few seconds")
        }
        if let window = scan.burstWindowMs { checks.range(window, 0...100, at: "scan.burst_window_ms", unit: " ms") }

        let f = ranging.filter
        checks.range(f.window, 1...100, at: "ranging.filter.window")
        checks.positive(f.processNoise, at: "ranging.filter.process_noise")
        checks.positive(f.measurementNoise, at: "ranging.filter.measurement_noise")
        // Finite is not enough: a variance near Double's limit overflows in the filter, and its
        // estimate becomes NaN (published as null).
        if f.processNoise > 10_000 { checks.add("ranging.filter.process_noise", "must be at most 10000 dB² per second") }
        if f.measurementNoise > 10_000 { checks.add("ranging.filter.measurement_noise", "must be at most 10000 dB²") }
        checks.range(f.outlierDb, 0...100, at: "ranging.filter.outlier_db", unit: " dB")
        checks.range(ranging.pathLossExponent, 1.0...6.0, at: "ranging.path_loss_exponent")
        checks.range(ranging.rxAdjustDb, -50...50, at: "ranging.rx_adjust_db", unit: " dB")
        // A level at 1 m is below 0 dBm; 0 is "not measured", and put every beacon at 100 m.
        checks.range(ranging.defaultPower, -127...(-1), at: "ranging.default_power", unit: " dBm")
        checks.range(ranging.immediateM, 0.01...100, at: "ranging.immediate_m", unit: " m")
        checks.range(ranging.nearM, 0.01...1000, at: "ranging.near_m", unit: " m")
        if ranging.nearM <= ranging.immediateM {
            checks.add("ranging.near_m", "must be greater than ranging.immediate_m (\(ranging.immediateM))")
        }
        checks.range(ranging.forgetAfterS, 1...86400, at: "ranging.forget_after_s", unit: " s")

        checks.range(publish.reportIntervalS, 0.05...3600, at: "publish.report_interval_s", unit: " s")
        checks.range(publish.significantChangeDb, 0...100, at: "publish.significant_change_db", unit: " dB")
        checks.range(publish.significantChangeM, 0...1000, at: "publish.significant_change_m", unit: " m")
        checks.range(publish.telemetryIntervalS, 1...86400, at: "publish.telemetry_interval_s", unit: " s")

        // Shown in payloads (readings, region events), never topic levels: "Tag #3" is a name.
        for (i, region) in regions.enumerated() { checks.displayName(region.name, at: "regions[\(i)].name") }
        for (i, beacon) in beacons.enumerated() { checks.displayName(beacon.name, at: "beacons[\(i)].name") }
        // The tracking sections' own rules; this file calls known_beacons `beacons`.
        for line in advertising.validate() {
            let text = line.hasPrefix("known_beacons") ? "beacons" + line.dropFirst("known_beacons".count) : Substring(line)
            guard let colon = text.range(of: ": ") else { checks.add("", String(text)); continue }
            checks.add(String(text[..<colon.lowerBound]), String(text[colon.upperBound...]))
        }

        checks.range(maxTrackedBeacons, 1...1_000_000, at: "max_tracked_beacons")
        // Known beacons and IRK phones are evicted last; with room for all of them, never.
        let configured = beacons.count + irks.count
        if (1...1_000_000).contains(maxTrackedBeacons), maxTrackedBeacons < configured {
            checks.add("max_tracked_beacons", "must be at least the number of beacons and irks configured (\(configured))")
        }

        if advertise.enabled {
            if let uuid = advertise.uuid {
                if UUID(uuidString: uuid) == nil { checks.add("advertise.uuid", "not a UUID '\(ConfigNode.excerpt(uuid))'") }
            } else {
                checks.add("advertise.uuid", "required when advertise.enabled is true")
            }
        } else if let uuid = advertise.uuid, UUID(uuidString: uuid) == nil {
            checks.add("advertise.uuid", "not a UUID '\(ConfigNode.excerpt(uuid))'")
        }
        // The level at 1 m a receiver ranges by, not the adapter's transmit power: a receiver
        // takes 0 and above as no level (docs/beacons.md) and ranges the beacon at its default.
        checks.range(advertise.power, Beacon.plausibleReferencePower, at: "advertise.power", unit: " dBm")
        checks.range(advertise.intervalMs, 20...10240, at: "advertise.interval_ms", unit: " ms")
        http.validate(at: "http", servesEventStreams: false, into: &checks)
        return checks.problems
    }
}
