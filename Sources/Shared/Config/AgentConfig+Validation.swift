import Foundation

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

        let f = ranging.filter
        checks.range(f.window, 1...100, at: "ranging.filter.window")
        checks.positive(f.processNoise, at: "ranging.filter.process_noise")
        checks.positive(f.measurementNoise, at: "ranging.filter.measurement_noise")
        checks.range(f.outlierDb, 0...100, at: "ranging.filter.outlier_db", unit: " dB")
        checks.range(ranging.pathLossExponent, 1.0...6.0, at: "ranging.path_loss_exponent")
        checks.range(ranging.rxAdjustDb, -50...50, at: "ranging.rx_adjust_db", unit: " dB")
        checks.range(ranging.defaultPower, -127...20, at: "ranging.default_power", unit: " dBm")
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

        for (i, region) in regions.enumerated() {
            Self.validate(region, at: "regions[\(i)]", into: &checks)
        }
        checks.unique(regions.map(\.name), list: "regions")
        Self.validate(beacons, list: "beacons", into: &checks)
        for (i, irk) in irks.enumerated() {
            checks.topicName(irk.name, at: "irks[\(i)].name")
            if BeaconID.irk(irk.name) == nil, TopicName.problem(with: irk.name) == nil {
                checks.add("irks[\(i)].name", "must make a valid beacon id 'irk:\(irk.name.lowercased())' (letters, digits, '-', '_', '.')")
            }
            if irk.keyBytes == nil {
                checks.add("irks[\(i)].key", "must be 32 hex digits (16 bytes)")
            }
        }
        checks.unique(irks.map(\.name), list: "irks")
        for (i, rule) in fingerprints.enumerated() {
            Self.validate(rule, at: "fingerprints[\(i)]", into: &checks)
        }
        checks.unique(fingerprints.map(\.name), list: "fingerprints")

        if advertise.enabled {
            if let uuid = advertise.uuid {
                if UUID(uuidString: uuid) == nil { checks.add("advertise.uuid", "not a UUID '\(ConfigNode.excerpt(uuid))'") }
            } else {
                checks.add("advertise.uuid", "required when advertise.enabled is true")
            }
        } else if let uuid = advertise.uuid, UUID(uuidString: uuid) == nil {
            checks.add("advertise.uuid", "not a UUID '\(ConfigNode.excerpt(uuid))'")
        }
        checks.range(advertise.power, -127...20, at: "advertise.power", unit: " dBm")
        checks.range(advertise.intervalMs, 20...10240, at: "advertise.interval_ms", unit: " ms")
        return checks.problems
    }

    /// Known-beacon list checks shared with the aggregator's `beacons:`.
    static func validate(_ beacons: [SiteModel.KnownBeacon], list: String, into checks: inout ConfigChecks) {
        for (i, beacon) in beacons.enumerated() {
            if let name = beacon.name { checks.topicName(name, at: "\(list)[\(i)].name") }
            if let power = beacon.power { checks.range(power, -127...20, at: "\(list)[\(i)].power", unit: " dBm") }
        }
        checks.unique(beacons.map(\.id.rawValue), list: list, field: "id")
    }

    static func validate(_ region: Region, at path: String, into checks: inout ConfigChecks) {
        checks.topicName(region.name, at: path + ".name")
        if let uuid = region.uuid, UUID(uuidString: uuid) == nil {
            checks.add(path + ".uuid", "not a UUID '\(ConfigNode.excerpt(uuid))'")
        }
        if let ns = region.namespace, Hex.decode(ns)?.count != 10 {
            checks.add(path + ".namespace", "must be 20 hex digits (an Eddystone namespace)")
        }
        if let instance = region.instance, Hex.decode(instance)?.count != 6 {
            checks.add(path + ".instance", "must be 12 hex digits (an Eddystone instance)")
        }
        switch (region.uuid != nil, region.namespace != nil) {
        case (false, false): checks.add(path, "needs uuid (iBeacon) or namespace (Eddystone)")
        case (true, true): checks.add(path, "give uuid (iBeacon) or namespace (Eddystone), not both")
        default: break
        }
        if region.uuid == nil, region.major != nil || region.minor != nil {
            checks.add(path + (region.major != nil ? ".major" : ".minor"), "only applies to an iBeacon region (with uuid)")
        }
        if region.uuid != nil, region.major == nil, region.minor != nil {
            checks.add(path + ".minor", "needs major too")
        }
        if region.namespace == nil, region.instance != nil {
            checks.add(path + ".instance", "only applies to an Eddystone region (with namespace)")
        }
    }

    static func validate(_ rule: FingerprintRule, at path: String, into checks: inout ConfigChecks) {
        checks.topicName(rule.name, at: path + ".name")
        if TopicName.problem(with: rule.name) == nil, BeaconID.fingerprint(rule.name, "0") == nil {
            checks.add(path + ".name", "must make a valid beacon id 'fp:\(rule.name.lowercased())-...' (letters, digits, '-', '_', '.')")
        }
        if rule.manufacturerID == nil, rule.prefixHex == nil, rule.serviceUUID == nil, rule.localName == nil {
            checks.add(path, "needs at least one of manufacturer_id, prefix_hex, service_uuid, local_name")
        }
        if let prefix = rule.prefixHex, Hex.decode(prefix)?.isEmpty ?? true {
            checks.add(path + ".prefix_hex", "must be an even number of hex digits")
        }
        if rule.prefixHex != nil, rule.manufacturerID == nil {
            checks.add(path + ".prefix_hex", "needs manufacturer_id (the prefix is matched after the company id)")
        }
        if let service = rule.serviceUUID {
            let short = service.count == 4 || service.count == 8
            if !(short && Hex.decode(service) != nil) && UUID(uuidString: service) == nil {
                checks.add(path + ".service_uuid", "must be a 16-bit (4 hex digits), 32-bit (8 hex digits) or 128-bit UUID")
            }
        }
        if let name = rule.localName, name.isEmpty {
            checks.add(path + ".local_name", "must not be empty")
        }
    }
}
