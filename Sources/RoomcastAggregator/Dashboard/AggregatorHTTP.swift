import Foundation
import RoomcastHTTP
import Shared
import Synchronization
import RoomcastLogging

/// The aggregator's HTTP listener (`http:`): the dashboard at `/`, its live updates at
/// `/events` (Server-Sent Events), `/api/state`, `/metrics` and `/healthz` (docs/http.md).
/// Handlers run on the server's connection threads; they ask the runtime actor through
/// `Readers` and wait for it there, never on the cooperative pool.
public final class AggregatorHTTP: Sendable {
    /// Where the data comes from: the service passes closures over its runtime and MQTT client.
    public struct Readers: Sendable {
        public var snapshot: @Sendable () async -> DashboardSnapshot
        public var metrics: @Sendable () async -> AggregatorMetricsSample

        public init(snapshot: @escaping @Sendable () async -> DashboardSnapshot,
                    metrics: @escaping @Sendable () async -> AggregatorMetricsSample) {
            self.snapshot = snapshot
            self.metrics = metrics
        }
    }

    public let server: HTTPServer
    public let events: EventStream
    private let readers: Readers
    private let lastPushed = Mutex<[UInt8]>([])
    /// How long a handler waits for the runtime before answering 503 (a wedged actor must show
    /// in `/healthz`, not hang the connection).
    static let answerTimeout: Double = 3

    public init(configuration: HTTPServer.Configuration, config: HTTPConfig, readers: Readers, logger: Logger,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.readers = readers
        // Each event is the whole state: a slow page gets the newest, not a backlog.
        let events = EventStream(maxClients: config.maxEventStreams, replacing: ["state"])
        self.events = events
        var router = HTTPRouter(authorization: HTTPAuthorization(token: config.resolvedToken(environment: environment)),
                                protectReads: config.protectReads)
        // The routes are made before the server whose counters `/metrics` shows: they reach it
        // through this box, weakly (the server holds the routes).
        let counters = CountersBox()
        Self.addRoutes(to: &router, events: events, readers: readers, counters: counters)
        let routes = router
        let server = HTTPServer(configuration: configuration, logger: logger) { routes.respond(to: $0) }
        self.server = server
        counters.server.withLock { $0.server = server }
    }

    private final class CountersBox: Sendable {
        struct Weak: Sendable { weak var server: HTTPServer? }
        let server = Mutex(Weak())
        var value: HTTPServer.Counters? { server.withLock { $0.server }?.counters }
    }

    /// Listens (see `HTTPServer.start`).
    public func start() throws(HTTPServerError) { try server.start() }

    /// Ends every event stream and closes the listener.
    public func shutdown() {
        events.finish()
        server.shutdown()
    }

    /// True while a dashboard is open: only then is a snapshot built each second.
    public var hasWatchers: Bool { events.clientCount > 0 }

    /// Sends `snapshot` to every open dashboard, unless it is what they already have.
    public func push(_ snapshot: DashboardSnapshot) {
        guard let bytes = try? WireFormat.encode(snapshot) else { return }
        let changed = lastPushed.withLock { last -> Bool in
            guard last != bytes else { return false }
            last = bytes
            return true
        }
        if changed { events.publish(ServerSentEvent(name: "state", data: String(decoding: bytes, as: UTF8.self))) }
    }

    private static func addRoutes(to router: inout HTTPRouter, events: EventStream, readers: Readers, counters: CountersBox) {
        router.get("/") { _ in
            HTTPResponse(contentType: "text/html; charset=utf-8", body: Array(DashboardAssets.html.utf8),
                         headers: DashboardAssets.pageHeaders)
        }
        router.get("/dashboard.js") { _ in
            HTTPResponse(contentType: "text/javascript; charset=utf-8", body: Array(DashboardAssets.script.utf8),
                         headers: [("Cache-Control", "no-cache")])
        }
        router.get("/dashboard.css") { _ in
            HTTPResponse(contentType: "text/css; charset=utf-8", body: Array(DashboardAssets.style.utf8),
                         headers: [("Cache-Control", "no-cache")])
        }
        let snapshots = SingleFlight(readers.snapshot), samples = SingleFlight(readers.metrics)
        router.get("/events") { _ in
            events.response {
                guard let snapshot = snapshots.value(timeout: answerTimeout), let bytes = try? WireFormat.encode(snapshot) else { return [] }
                return [ServerSentEvent(name: "state", data: String(decoding: bytes, as: UTF8.self))]
            }
        }
        router.get("/api/state") { _ in
            guard let snapshot = snapshots.value(timeout: answerTimeout), let bytes = try? WireFormat.encode(snapshot) else { return busy() }
            return HTTPResponse(contentType: "application/json", body: bytes, headers: [("Cache-Control", "no-store")])
        }
        router.get("/metrics") { _ in
            guard var sample = samples.value(timeout: answerTimeout) else { return busy() }
            sample.eventStreams = events.clientCount
            sample.eventsDropped = events.dropped
            sample.http = counters.value
            return HTTPResponse(contentType: PrometheusText.contentType, body: Array(sample.render().utf8))
        }
        router.get("/healthz", access: .open) { _ in
            // Healthy when the runtime answers: the broker's state is reported, not judged (a
            // supervisor restarting the aggregator would not bring the broker back).
            guard let sample = samples.value(timeout: answerTimeout) else {
                return .text("unhealthy: the aggregator did not answer within \(Int(answerTimeout)) s\n", status: .serviceUnavailable)
            }
            let nodes = sample.noNodeHeard ? "nodes: none heard since connecting (see the log)\n" : ""
            let lease = sample.leaseUnreadable ? "lease: the broker refuses this instance the lease topic; standing by (see the log)\n" : ""
            return .text("ok\nmqtt: \(sample.mqttConnected ? "connected" : "disconnected")\nactive: \(sample.active)\n\(nodes)\(lease)",
                         headers: [("Cache-Control", "no-store")])
        }
    }

    static func busy() -> HTTPResponse {
        .text("the aggregator is busy; try again\n", status: .serviceUnavailable, headers: [("Retry-After", "1")])
    }
}
