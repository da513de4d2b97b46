import Foundation
import RoomcastFusion
import RoomcastHTTP
import RoomcastLogging
import Shared
import Testing
import TestSupport
@testable import RoomcastAggregator

/// Rooms the plan cannot draw, in the real page: a room without a polygon beside rooms with
/// one (a garden with a node), and the rooms fusion makes of the nodes a site does not list.
/// The page drew only the plan's rooms, or with no room configured nothing at all, and a beacon
/// in such a room was shown nowhere (not away either).
@Suite(.serialized, .requiresChromium) struct DashboardRoomsTests {
    /// A runtime on `site` where `cat` has been heard loudest at `node` for 30 s.
    static func runtime(site: SiteModel, loudAt node: String, quietAt other: String?) async throws -> AggregatorRuntime<FusionEngine> {
        var config = AggregatorConfig(site: site, discovery: .init(enabled: false))
        config.fusion.learnCalibration = false
        let runtime = AggregatorRuntime(core: config.makeCore(), election: nil, refreshInterval: 60, startedAt: 0, logger: .silent)
        await runtime.brokerConnected(now: 0)
        var seq: UInt64 = 0
        var now = 0.0
        while now < 30 {
            now += 0.5
            var out = await runtime.tick(now: now)
            for m in out where m.topic == runtime.syncTopic { out += await runtime.handle(topic: m.topic, payload: m.payload, now: now) }
            guard now == now.rounded() else { continue }
            for (n, rssi) in [(node, -58.0)] + (other.map { [($0, -75.0)] } ?? []) {
                seq += 1
                let r = BeaconReading(id: cat, node: n, ts: now, seq: seq, rssi: Int(rssi), rssiFiltered: rssi, power: -59,
                                      distance: 1, proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
                _ = await runtime.handle(topic: Topics().nodeBeacon(n, cat), payload: try WireFormat.encode(r), now: now)
            }
        }
        return runtime
    }

    static func directory() throws -> String {
        let dir = NSTemporaryDirectory() + "roomcast-dashboard-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Serves `runtime`'s dashboard and waits until the page shows the cat in `room`.
    static func expectPage(of runtime: AggregatorRuntime<FusionEngine>, showsCatIn room: String, directory: String) async throws {
        let port = try freePort()
        let http = AggregatorHTTP(configuration: HTTPServer.Configuration(HTTPConfig(listen: "127.0.0.1:\(port)"))!,
                                  config: HTTPConfig(listen: "127.0.0.1:\(port)"),
                                  sources: .init(snapshot: { await runtime.dashboardSnapshot(now: 30, connected: true) },
                                                 metrics: { await runtime.metricsSample(now: 30) }),
                                  logger: .silent)
        try http.start()
        // As the service does: the state pushed once a second to open pages (what a page gets
        // when it connects waits for the runtime at most 3 s, which a loaded machine can miss).
        let pusher = Task {
            var now = 30.0
            while !Task.isCancelled {
                http.push(await runtime.dashboardSnapshot(now: now, connected: true))
                now += 1
                try? await Task.sleep(for: .seconds(1))
            }
        }
        let browser = try HeadlessBrowser(chromium: try RequiredTool.chromium.require(), directory: directory)
        defer { pusher.cancel(); browser.shutdown(); http.shutdown() }
        let session = try await offPool { try browser.open("http://127.0.0.1:\(port)/") }
        _ = try await DashboardLiveTests.waitForPage(browser, session, "the cat in \(room)") { dom in
            DashboardLiveTests.page(dom, shows: cat, in: room)
        }
    }

    @Test func aRoomWithoutAPolygonBesideThePlanShowsItsBeacons() async throws {
        let site = SiteModel(
            rooms: [.init(name: "kitchen", polygon: [[0, 0], [4, 0], [4, 4], [0, 4]]), .init(name: "garden")],
            nodes: [.init(name: "kitchen-pi", room: "kitchen", position: [2, 2, 2]), .init(name: "garden-pi", room: "garden")])
        let runtime = try await Self.runtime(site: site, loudAt: "garden-pi", quietAt: "kitchen-pi")
        #expect(await runtime.decision(for: cat)?.room == "garden")
        let directory = try Self.directory()
        try await Self.expectPage(of: runtime, showsCatIn: "garden", directory: directory)
    }

    @Test func aRoomMadeOfAnUnlistedNodeIsShownWithItsBeacons() async throws {
        let runtime = try await Self.runtime(site: SiteModel(), loudAt: "hall-pi", quietAt: nil)
        #expect(await runtime.decision(for: cat)?.room == "hall-pi")
        let snapshot = await runtime.dashboardSnapshot(now: 30, connected: true)
        #expect(snapshot.rooms.map(\.name) == ["hall-pi"], "the room fusion made is in the page's document")
        let directory = try Self.directory()
        try await Self.expectPage(of: runtime, showsCatIn: "hall-pi", directory: directory)
    }
}
