import RoomcastFusion
import RoomcastHTTP
import Shared

/// The aggregator's counters and gauges at one moment, as `/metrics` exposes them
/// (docs/http.md lists every series). The runtime fills the core's part; the service adds the
/// MQTT client's and the HTTP server's.
public struct AggregatorMetricsSample: Sendable {
    public var now: Double
    public var accepted: UInt64
    public var rejected: [InputIntake.Rejection: UInt64]
    /// Readings the intake passed that fusion refused (late, repeated, from a node it took as
    /// offline), by reason.
    public var fusionRejected: [FusionRejectReason: UInt64] = [:]
    public var nodes: [String: NodeActivity.Node]
    /// Nodes configured in the site (shown with zero readings until heard).
    public var configuredNodes: [String]
    public var offlineNodes: Set<String>
    public var clockOffsets: [String: Double]
    public var stats: PresenceStats
    public var beaconsTracked: Int
    public var beaconsEvicted: UInt64
    /// Decisions in force per room (away beacons under no room).
    public var occupancy: [String: Int]
    public var away: Int
    public var active: Bool
    public var standby: Bool
    public var decisionsHeld: Bool
    /// Writes of `learn.state_file` that failed.
    public var stateFileFailures: UInt64 = 0
    /// Beacons whose id two transmitters advertise at once (`SharedIDWatch`).
    public var sharedIDBeacons = 0
    /// No node heard since connecting, for longer than a site whose messages arrive takes (`FirstNodeWait`).
    public var noNodeHeard = false
    /// Hot standby is on and the broker refuses this instance the lease topic: it stands by while it does.
    public var leaseUnreadable = false
    public var mqttConnected = false
    public var mqttReconnects = 0
    public var mqttDroppedInbound = 0
    public var mqttReceived = 0
    public var mqttPublishFailures = 0
    public var http: HTTPServer.Counters?
    public var eventStreams = 0
    public var eventsDropped: UInt64 = 0

    /// The Prometheus text of the sample.
    public func render() -> String {
        var p = PrometheusText()
        p.gauge("roomcast_build_info", help: "Always 1; the version is a label.", 1, labels: [("version", RoomcastVersion.current)])
        p.counter("roomcast_readings_accepted_total", help: "Readings accepted from the nodes.", Double(accepted))
        p.family("roomcast_readings_rejected_total", .counter, help: "Inbound messages rejected, by reason.")
        for reason in InputIntake.Rejection.allCases {
            p.sample("roomcast_readings_rejected_total", [("reason", reason.rawValue)], Double(rejected[reason] ?? 0))
        }
        p.family("roomcast_fusion_readings_rejected_total", .counter, help: "Readings the intake passed that fusion refused, by reason.")
        for reason in FusionRejectReason.allCases {
            p.sample("roomcast_fusion_readings_rejected_total", [("reason", reason.description)], Double(fusionRejected[reason] ?? 0))
        }
        let names = Set(configuredNodes).union(nodes.keys).sorted()
        p.family("roomcast_node_readings_total", .counter, help: "Readings accepted per node.")
        for n in names { p.sample("roomcast_node_readings_total", [("node", n)], Double(nodes[n]?.readings ?? 0)) }
        p.family("roomcast_node_last_seen_seconds", .gauge, help: "Unix time of the newest reading per node (0: never).")
        for n in names { p.sample("roomcast_node_last_seen_seconds", [("node", n)], nodes[n]?.lastSeen ?? 0) }
        p.family("roomcast_node_online", .gauge, help: "1 while a node sends readings and its status is not offline.")
        for n in names {
            let up = !offlineNodes.contains(n) && (nodes[n].map { now - $0.lastSeen <= DashboardSnapshot.silentAfter } ?? false)
            p.sample("roomcast_node_online", [("node", n)], up ? 1 : 0)
        }
        p.family("roomcast_node_clock_offset_seconds", .gauge, help: "Clock offset of nodes whose clock is off (positive: behind).")
        for (n, offset) in clockOffsets.sorted(by: { $0.key < $1.key }) { p.sample("roomcast_node_clock_offset_seconds", [("node", n)], offset) }

        p.counter("roomcast_decisions_total", help: "Presence decisions published (changes).", Double(stats.decisions))
        p.family("roomcast_room_changes_total", .counter,
                 help: "Room changes published: switch (room to room), away, return, handover (to or from another partition's rooms).")
        p.sample("roomcast_room_changes_total", [("kind", "switch")], Double(stats.switches))
        p.sample("roomcast_room_changes_total", [("kind", "away")], Double(stats.aways))
        p.sample("roomcast_room_changes_total", [("kind", "return")], Double(stats.returns))
        p.sample("roomcast_room_changes_total", [("kind", "handover")], Double(stats.handovers))
        p.counter("roomcast_flaps_total", help: "Switches back to the room left within \(Int(stats.flapWindow)) s.", Double(stats.flaps))
        p.histogram("roomcast_away_latency_seconds", help: "Seconds from a beacon's last reading to its away decision.", stats.awayLatency)
        p.histogram("roomcast_switch_latency_seconds", help: "Seconds from when the new room's evidence began to lead to the switch.",
                    stats.switchLatency)
        p.gauge("roomcast_beacons_tracked", help: "Beacons the fusion engine tracks.", Double(beaconsTracked))
        p.counter("roomcast_beacons_evicted_total", help: "Unknown beacons evicted at capacity.", Double(beaconsEvicted))
        p.family("roomcast_room_occupancy", .gauge, help: "Beacons whose decision in force is this room.")
        for (room, n) in occupancy.sorted(by: { $0.key < $1.key }) { p.sample("roomcast_room_occupancy", [("room", room)], Double(n)) }
        p.gauge("roomcast_beacons_away", help: "Beacons whose decision in force is away.", Double(away))
        p.gauge("roomcast_beacons_shared_id", help: "Beacons whose id two transmitters advertise at once.", Double(sharedIDBeacons))
        p.gauge("roomcast_decisions_held", help: "1 while decisions are held (deaf, or just reconnected).", decisionsHeld ? 1 : 0)
        p.gauge("roomcast_lease_active", help: "1 while this instance publishes (always without standby).", active ? 1 : 0)
        p.gauge("roomcast_standby_enabled", help: "1 when hot standby is configured.", standby ? 1 : 0)
        p.counter("roomcast_state_file_failures_total", help: "Writes of the learned rooms' state file that failed.",
                  Double(stateFileFailures))

        p.gauge("roomcast_mqtt_connected", help: "1 while connected to the broker.", mqttConnected ? 1 : 0)
        p.counter("roomcast_mqtt_reconnects_total", help: "Broker connections re-established.", Double(mqttReconnects))
        p.counter("roomcast_mqtt_received_total", help: "Inbound MQTT messages received.", Double(mqttReceived))
        p.counter("roomcast_mqtt_inbound_dropped_total", help: "Inbound messages dropped because fusion was behind.", Double(mqttDroppedInbound))
        p.counter("roomcast_mqtt_publish_failures_total", help: "Publishes that failed.", Double(mqttPublishFailures))
        if let http {
            p.family("roomcast_http_responses_total", .counter, help: "HTTP responses, by status code.")
            for (code, n) in http.responses.sorted(by: { $0.key < $1.key }) { p.sample("roomcast_http_responses_total", [("code", "\(code)")], Double(n)) }
            p.counter("roomcast_http_refused_total", help: "Connections refused because the connection limit was reached.", Double(http.refusedBusy))
            p.counter("roomcast_http_timeouts_total", help: "Connections closed because the request did not arrive in time.", Double(http.timeouts))
            p.gauge("roomcast_http_connections", help: "Open HTTP connections.", Double(http.open))
            p.gauge("roomcast_http_event_streams", help: "Open dashboard event streams.", Double(eventStreams))
            p.counter("roomcast_http_events_dropped_total", help: "Dashboard events a slow client lost.", Double(eventsDropped))
        }
        return p.text
    }
}
