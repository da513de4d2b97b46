extension AggregatorConfig {
    /// Every semantic problem of the site and the settings.
    public func validate() -> [ConfigProblem] {
        var checks = ConfigChecks()
        mqtt.validate(at: "mqtt", into: &checks)

        let coordinate = -100_000.0...100_000.0
        for (i, room) in rooms.enumerated() {
            let path = "rooms[\(i)]"
            checks.topicName(room.name, at: path + ".name")
            checks.range(room.floor, -100...300, at: path + ".floor")
            if let polygon = room.polygon {
                if polygon.count < 3 {
                    checks.add(path + ".polygon", "needs at least 3 points, found \(polygon.count)")
                }
                for (j, point) in polygon.enumerated() {
                    if point.count != 2 {
                        checks.add("\(path).polygon[\(j)]", "must be [x, y] (2 numbers), found \(point.count)")
                    } else if !point.allSatisfy(coordinate.contains) {
                        checks.add("\(path).polygon[\(j)]", "coordinates must be within ±100000 m")
                    }
                }
            }
        }
        checks.unique(rooms.map(\.name), list: "rooms")

        let roomNames = Set(rooms.map(\.name))
        for (i, node) in nodes.enumerated() {
            let path = "nodes[\(i)]"
            checks.topicName(node.name, at: path + ".name")
            if let room = node.room, !roomNames.contains(room) {
                var message = "unknown room '\(ConfigNode.excerpt(room))'"
                if let guess = Suggestion.closest(to: room, in: roomNames) { message += "; did you mean '\(guess)'?" }
                else if roomNames.isEmpty { message += "; list it under rooms:" }
                checks.add(path + ".room", message)
            }
            if let position = node.position {
                if position.count != 3 {
                    checks.add(path + ".position", "must be [x, y, z] (3 numbers), found \(position.count)")
                } else if !position.allSatisfy(coordinate.contains) {
                    checks.add(path + ".position", "coordinates must be within ±100000 m")
                }
            }
            checks.range(node.rxAdjust, -50...50, at: path + ".rx_adjust", unit: " dB")
        }
        checks.unique(nodes.map(\.name), list: "nodes")
        let tracked = Set(beacons.map(\.id))
        var transmitter: [BeaconID: Int] = [:]
        for (i, node) in nodes.enumerated() {
            guard let beacon = node.beacon else { continue }
            if let j = transmitter[beacon] {
                checks.add("nodes[\(i)].beacon", "duplicate beacon '\(beacon.rawValue)' (also nodes[\(j)])")
            } else {
                transmitter[beacon] = i
            }
            if tracked.contains(beacon) {
                checks.add("nodes[\(i)].beacon", "'\(beacon.rawValue)' is also under beacons:; a node's own beacon calibrates the receivers and is never tracked")
            }
        }
        AgentConfig.validate(beacons, list: "beacons", into: &checks)

        checks.range(fusion.awayTimeoutS, 1...86400, at: "fusion.away_timeout_s", unit: " s")
        checks.range(fusion.switchMargin, 0...1, at: "fusion.switch_margin")
        checks.range(fusion.minDwellS, 0...3600, at: "fusion.min_dwell_s", unit: " s")
        checks.range(fusion.maxReadingAgeS, 0.1...3600, at: "fusion.max_reading_age_s", unit: " s")
        checks.range(fusion.fingerprintSigma, 0.5...30, at: "fusion.fingerprint_sigma", unit: " dB")
        checks.range(fusion.fingerprintOwnSigma, 0...60, at: "fusion.fingerprint_own_sigma", unit: " dB")
        checks.range(fusion.quietIntervals, 0...100, at: "fusion.quiet_intervals")
        checks.range(fusion.loneNodeHoldS, 0...600, at: "fusion.lone_node_hold_s", unit: " s")
        if !Fusion.roomFilters.contains(fusion.roomFilter) {
            checks.add("fusion.room_filter", "must be one of \(Fusion.roomFilters.joined(separator: ", ")), not '\(fusion.roomFilter)'")
        }

        checks.topicPrefix(discovery.prefix, at: "discovery.prefix")
        checks.range(output.refreshIntervalS, 0...86400, at: "output.refresh_interval_s", unit: " s")

        let floors = Set(rooms.map(\.floor))
        for (i, floor) in (partition.floors ?? []).enumerated() where !floors.contains(floor) {
            checks.add("partition.floors[\(i)]", "no room is on floor \(floor)")
        }
        for (i, room) in (partition.rooms ?? []).enumerated() where !roomNames.contains(room) {
            var message = "unknown room '\(ConfigNode.excerpt(room))'"
            if let guess = Suggestion.closest(to: room, in: roomNames) { message += "; did you mean '\(guess)'?" }
            checks.add("partition.rooms[\(i)]", message)
        }
        checks.range(standby.leaseS, 1...600, at: "standby.lease_s", unit: " s")
        if let u = standby.guardUsername, u.isEmpty { checks.add("standby.guard_username", "must not be empty") }
        http.validate(at: "http", into: &checks)
        return checks.problems
    }
}
