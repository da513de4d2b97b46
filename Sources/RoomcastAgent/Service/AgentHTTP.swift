import Foundation
import RoomcastHCI
import RoomcastHTTP
import RoomcastMQTT
import Shared
import RoomcastLogging

/// The edge agent's optional HTTP listener (`http:`): `/metrics` in Prometheus text and `/healthz`
/// (docs/http.md). Handlers run on the server's connection threads and read counters behind
/// locks and atomics only, so a scrape never waits on the radio or the broker.
public final class AgentHTTP: Sendable {
    /// One scrape's numbers.
    public struct Sample: Sendable {
        public var node: String
        public var stats: AgentCore.Stats
        public var advertisementRate: Double
        public var trackedBeacons: Int
        public var maxTrackedBeacons: Int
        public var radio: RadioCounters.Snapshot
        public var mqttConnected: Bool?
        public var mqttReconnects: Int
        public var mqttPublishFailures: Int

        /// The Prometheus text of this sample.
        public func render() -> String {
            var p = PrometheusText()
            let node = [("node", node)]
            p.gauge("roomcast_agent_info", help: "Always 1; the node this agent reports as.", 1, labels: node)
            p.counter("roomcast_agent_advertisements_total", help: "Advertising reports received from the radio.",
                      Double(radio.reports), labels: node)
            p.gauge("roomcast_agent_advertisements_per_second", help: "Advertising reports per second over the last complete 10-s window.",
                    advertisementRate, labels: node)
            p.counter("roomcast_agent_untracked_total", help: "Reports of nothing this agent tracks.", Double(stats.untracked), labels: node)
            p.counter("roomcast_agent_readings_total", help: "Readings made to publish (or written by --dry-run), including those dropped while the broker was away.", Double(stats.readings),
                      labels: node)
            p.gauge("roomcast_agent_beacons_tracked", help: "Beacons in the agent's table.", Double(trackedBeacons), labels: node)
            p.gauge("roomcast_agent_beacons_max", help: "The table's capacity (max_tracked_beacons).", Double(maxTrackedBeacons),
                    labels: node)
            p.counter("roomcast_agent_beacons_evicted_total", help: "Beacons evicted from the full table for a newcomer.",
                      Double(stats.evicted), labels: node)
            p.counter("roomcast_agent_beacons_refused_total", help: "Strangers not tracked, every place taken by known beacons.",
                      Double(stats.refused), labels: node)
            p.counter("roomcast_agent_beacons_unstable_total", help: "Transmitters found changing their beacon id (more than 10 ids from one address); their new ids are not tracked.",
                      Double(stats.unstableAddresses), labels: node)
            p.counter("roomcast_agent_reports_dropped_total", help: "Reports dropped because the agent fell behind the radio.",
                      Double(radio.dropped), labels: node)
            p.counter("roomcast_agent_hci_errors_total",
                      help: "Failed or timed-out HCI commands, hardware errors and undecodable packets.", Double(radio.hciErrors),
                      labels: node)
            p.counter("roomcast_agent_hci_resets_total", help: "Adapter resets.", Double(radio.resets), labels: node)
            p.counter("roomcast_agent_scan_restarts_total", help: "Scan restarts after a silent stretch.", Double(radio.scanRestarts),
                      labels: node)
            p.counter("roomcast_agent_adapter_reopens_total", help: "Reopens after the adapter vanished.", Double(radio.reopens),
                      labels: node)
            p.counter("roomcast_agent_fragments_discarded_total",
                      help: "Extended advertisements dropped unfinished (a chain of fragments that lost its end or found no room).",
                      Double(radio.fragmentsDiscarded), labels: node)
            if let mqttConnected {
                p.gauge("roomcast_agent_mqtt_connected", help: "1 while connected to the broker.", mqttConnected ? 1 : 0, labels: node)
                p.counter("roomcast_agent_mqtt_reconnects_total", help: "Broker connections re-established.", Double(mqttReconnects),
                          labels: node)
                p.counter("roomcast_agent_mqtt_publish_failures_total",
                          help: "Publishes that failed (not connected, queue full): those readings are dropped.",
                          Double(mqttPublishFailures), labels: node)
            }
            return p.text
        }
    }

    public let server: HTTPServer

    public init(configuration: HTTPServer.Configuration, config: HTTPConfig, sample: @escaping @Sendable () -> Sample,
                logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment) {
        var router = HTTPRouter(authorization: HTTPAuthorization(token: config.resolvedToken(environment: environment)),
                                protectReads: config.protectReads)
        router.get("/metrics") { _ in
            HTTPResponse(contentType: PrometheusText.contentType, body: Array(sample().render().utf8))
        }
        router.get("/healthz", access: .open) { _ in
            let s = sample()
            let mqtt = s.mqttConnected.map { $0 ? "connected" : "disconnected" } ?? "none (dry run)"
            return .text("ok\nnode: \(s.node)\nmqtt: \(mqtt)\nadvertisements_per_second: \(s.advertisementRate)\n",
                         headers: [("Cache-Control", "no-store")])
        }
        let routes = router
        server = HTTPServer(configuration: configuration, logger: logger) { routes.respond(to: $0) }
    }

    public func shutdown() { server.shutdown() }
}
