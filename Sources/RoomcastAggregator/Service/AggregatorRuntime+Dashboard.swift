import RoomcastFusion
import Shared

extension AggregatorRuntime {
    /// The dashboard's view at `now` (see `DashboardSnapshot`).
    public func dashboardSnapshot(now: Double, connected: Bool) -> DashboardSnapshot {
        dashboardSnapshots += 1
        let activity = core.nodeActivity.nodes
        let offline = core.offline
        let skew = core.skewedNodes
        let floors = Dictionary(core.site.rooms.map { ($0.name, $0.floor) }, uniquingKeysWith: { a, _ in a })
        let model = FusionModel()
        var nodes = core.site.nodes.map { n in
            DashboardSnapshot.Node(name: n.name, room: n.room, position: n.position,
                                   status: DashboardSnapshot.status(online: !offline.contains(n.name), lastSeen: activity[n.name]?.lastSeen, now: now),
                                   lastSeen: activity[n.name]?.lastSeen, readings: activity[n.name]?.readings ?? 0,
                                   clockOffsetS: skew[n.name], title: n.title,
                                   floor: n.room.flatMap { floors[$0] }
                                       ?? n.position.map { model.floor(atHeight: $0.count >= 3 ? $0[2] : model.defaultNodeHeight) })
        }
        // An open site (no nodes listed) shows every node heard.
        let listed = Set(nodes.map(\.name))
        for (name, a) in activity.sorted(by: { $0.key < $1.key }) where !listed.contains(name) {
            nodes.append(DashboardSnapshot.Node(name: name, room: nil, position: nil,
                                                status: DashboardSnapshot.status(online: !offline.contains(name), lastSeen: a.lastSeen, now: now),
                                                lastSeen: a.lastSeen, readings: a.readings, clockOffsetS: skew[name],
                                                title: DisplayName.title(for: name)))
        }
        var rooms = core.site.rooms.map { DashboardSnapshot.Room(name: $0.name, floor: $0.floor, polygon: $0.polygon,
                                                                 doorways: $0.doorways, title: $0.title) }
        // Rooms fusion made of nodes the site does not list (`auto_nodes`): the page shows a
        // beacon in its room's card, and without the room it showed the beacon nowhere.
        let beacons = core.currentDecisions().map(core.publisher.withLastRoom)
        let configured = Set(rooms.map(\.name))
        var made: [String: Int] = [:]
        for d in beacons { if let room = d.room, !configured.contains(room), made[room] == nil { made[room] = d.floor ?? 0 } }
        rooms += made.sorted { $0.key < $1.key }.map {
            DashboardSnapshot.Room(name: $0.key, floor: $0.value, polygon: nil, doorways: nil, title: DisplayName.title(for: $0.key))
        }
        var snapshot = DashboardSnapshot(ts: now, active: isActive, connected: connected, rooms: rooms, nodes: nodes, beacons: beacons)
        snapshot.seq = dashboardSnapshots
        return snapshot
    }

    /// The core's counters for `/metrics`; the service adds the MQTT client's.
    public func metricsSample(now: Double) -> AggregatorMetricsSample {
        let decisions = core.currentDecisions()
        var occupancy: [String: Int] = [:]
        for room in core.site.rooms { occupancy[room.name] = 0 }
        for d in decisions { if let room = d.room { occupancy[room, default: 0] += 1 } }
        let fusion = core.engine.counters
        return AggregatorMetricsSample(
            // Readings, Roomcast's and ESPresense's: the intake's count is of every message it
            // took (our own presence echoed back, statuses, leases) and not ESPresense's.
            now: now, accepted: core.nodeActivity.readings, rejected: core.intake.rejected,
            fusionRejected: Dictionary(uniqueKeysWithValues: FusionRejectReason.allCases.map { ($0, fusion.rejected($0)) }),
            nodes: core.nodeActivity.nodes,
            configuredNodes: core.site.nodes.map(\.name), offlineNodes: core.offline, clockOffsets: core.skewedNodes,
            stats: core.presenceStats, beaconsTracked: core.engine.capacityUse?.tracked ?? decisions.count,
            beaconsEvicted: core.evictedBeacons, occupancy: occupancy, away: decisions.count { $0.room == nil },
            active: isActive, standby: standbyEnabled, decisionsHeld: core.decisionsHeld(at: now),
            stateFileFailures: learnedSaveFailures, sharedIDBeacons: core.sharedIDBeacons,
            noNodeHeard: firstNodeOverdue, leaseUnreadable: standbyEnabled && leaseUnreadable)
    }
}
