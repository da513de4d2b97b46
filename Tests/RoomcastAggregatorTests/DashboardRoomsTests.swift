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

    /// The dashboard's listener on a port the kernel picks as it binds: a port chosen free beforehand
    /// can be taken by another test before the listener binds it.
    static func serve(_ readers: AggregatorHTTP.Readers) throws -> (AggregatorHTTP, port: Int) {
        var configuration = HTTPServer.Configuration(HTTPConfig(listen: "127.0.0.1:8267"))!
        configuration.endpoint.port = 0
        let http = AggregatorHTTP(configuration: configuration, config: HTTPConfig(listen: "127.0.0.1:8267"), readers: readers,
                                  logger: .silent)
        try http.start()
        return (http, Int(http.server.port))
    }

    /// Serves `runtime`'s dashboard and waits until the page shows the cat in `room`.
    static func expectPage(of runtime: AggregatorRuntime<FusionEngine>, showsCatIn room: String, directory: String) async throws {
        let (http, port) = try Self.serve(.init(snapshot: { await runtime.dashboardSnapshot(now: 30, connected: true) },
                                          metrics: { await runtime.metricsSample(now: 30) }))
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

    /// The page shows the names people read (display names, or names derived from the ids), on
    /// the plan, the cards, the nodes' table and a beacon's label, and keys everything by the ids.
    @Test func namesShownAreDisplayNames() async throws {
        let site = SiteModel(
            rooms: [.init(name: "kitchen", polygon: [[0, 0], [4, 0], [4, 4], [0, 4]], displayName: "Kitchen & Dining"), .init(name: "garden_shed")],
            nodes: [.init(name: "kitchen-pi", room: "kitchen", position: [2, 2, 2], displayName: "Counter Pi"),
                    .init(name: "garden-pi", room: "garden_shed")])
        let runtime = try await Self.runtime(site: site, loudAt: "kitchen-pi", quietAt: "garden-pi")
        let built = await runtime.dashboardSnapshot(now: 30, connected: true)
        #expect(built.rooms.map(\.title) == ["Kitchen & Dining", "Garden Shed"])
        #expect(built.nodes.map(\.title) == ["Counter Pi", "Garden Pi"])
        #expect(built.beacons.first?.room == "kitchen")
        try await Self.withLivePage({ k in
            var s = built
            s.ts = 30 + Double(k)
            s.seq = UInt64(k + 1)
            return s
        }) { browser, session in
            try await Self.waitForUpdates(browser, session, 2)
            let shown = try await offPool {
                try browser.evaluate(##"""
                    [document.querySelector('#plan g.room[data-room="kitchen"] text')?.textContent,
                     [...document.querySelectorAll("#board .room-card h3")].map((h) => h.textContent).join(","),
                     [...document.querySelectorAll("#nodes tbody tr")].map((tr) => tr.cells[0].textContent + "/" + tr.cells[1].textContent).join(","),
                     document.querySelector("#plan g.beacon")?.getAttribute("aria-label")].join("|")
                    """##, session: session) as? String
            }
            #expect(shown == "Kitchen & Dining|Garden Shed|Counter Pi/Kitchen & Dining,Garden Pi/Garden Shed|\(cat.rawValue) in Kitchen & Dining")
        }
    }

    /// A node with a position but no room (a Pi on the landing a site lists for positions only)
    /// was drawn on every floor's plan. It is drawn on the storey its z lies in, one with no
    /// rooms too.
    @Test func aNodeWithoutARoomIsDrawnOnItsOwnFloor() async throws {
        let site = SiteModel(
            rooms: [.init(name: "kitchen", floor: 0, polygon: [[0, 0], [4, 0], [4, 4], [0, 4]]),
                    .init(name: "bedroom", floor: 1, polygon: [[0, 0], [4, 0], [4, 4], [0, 4]])],
            nodes: [.init(name: "kitchen-pi", room: "kitchen", position: [2, 2, 2]),
                    .init(name: "bedroom-pi", room: "bedroom", position: [2, 2, 5]),
                    .init(name: "landing-pi", room: nil, position: [3, 3, 4.2]), .init(name: "porch-pi", room: nil, position: [1, 1]),
                    .init(name: "attic-pi", room: nil, position: [2, 2, 7])])
        let runtime = try await Self.runtime(site: site, loudAt: "kitchen-pi", quietAt: "bedroom-pi")
        let built = await runtime.dashboardSnapshot(now: 30, connected: true)
        #expect(built.nodes.map(\.floor) == [0, 1, 1, 0, 2], "the room's floor, else the storey of z (none: a node's usual height)")
        // The attic has no room: its node is drawn on a plan of its own.
        for (floor, drawn) in [(0, "kitchen-pi,porch-pi"), (1, "bedroom-pi,landing-pi"), (2, "attic-pi")] {
            try await Self.withLivePage({ k in
                var s = built
                s.ts = 30 + Double(k)
                s.seq = UInt64(k + 1)
                return s
            }, fragment: "#floor=\(floor)") { browser, session in
                try await Self.waitForUpdates(browser, session, 2)
                let shown = try await offPool {
                    try browser.evaluate(##"[...document.querySelectorAll("#plan g.node")].map((g) => g.dataset.node).sort().join(",")"##,
                                         session: session) as? String
                }
                #expect(shown == drawn, "floor \(floor)")
            }
        }
    }

    /// A crowded room and an estimate far outside the plan: 200 beacons without a position in one
    /// room were drawn on one ring round its centre, one over the other, and a position estimated
    /// beyond the plan's box was drawn out of view.
    @Test func crowdedRoomsAndFarEstimatesStayVisible() async throws {
        let crowd = (0..<200).map { k in
            PresenceDecision(id: BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-\(k)")!, name: nil, room: "kitchen", floor: 0,
                             distance: nil, confidence: 0.9, node: "kitchen-pi", since: 0, lastSeen: 29, evidence: [], ts: 30)
        }
        var far = PresenceDecision(id: cat, name: "cat", room: "hall", floor: 0, distance: nil, confidence: 0.9,
                                   node: "hall-pi", since: 0, lastSeen: 29, evidence: [], ts: 30)
        far.position = [80, -40]
        let snapshot = DashboardSnapshot(
            ts: 30, active: true, connected: true,
            rooms: [.init(name: "kitchen", floor: 0, polygon: [[0, 0], [4, 0], [4, 4], [0, 4]]),
                    .init(name: "hall", floor: 0, polygon: [[4, 0], [6, 0], [6, 4], [4, 4]])],
            nodes: [.init(name: "kitchen-pi", room: "kitchen", position: [2, 2, 2], status: "online", lastSeen: 29, readings: 10),
                    .init(name: "hall-pi", room: "hall", position: [5, 2, 2], status: "online", lastSeen: 29, readings: 10)],
            beacons: crowd + [far])
        let idle = AggregatorRuntime(core: AggregatorConfig(site: SiteModel()).makeCore(), election: nil, refreshInterval: 60,
                                     startedAt: 0, logger: .silent)
        let (http, port) = try Self.serve(.init(snapshot: { snapshot }, metrics: { await idle.metricsSample(now: 30) }))
        let browser = try HeadlessBrowser(chromium: try RequiredTool.chromium.require(), directory: try Self.directory())
        defer { browser.shutdown(); http.shutdown() }
        let session = try await offPool { try browser.open("http://127.0.0.1:\(port)/") }
        _ = try await DashboardLiveTests.waitForPage(browser, session, "the far cat in the hall") { dom in
            DashboardLiveTests.page(dom, shows: cat, in: "hall")
        }
        // Each marker's circle and the kitchen's outline, in the page's own pixels.
        let script = """
        JSON.stringify({
          plan: (() => { const r = document.getElementById("plan").getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })(),
          kitchen: (() => { const r = document.querySelector('#plan g.room[data-room="kitchen"] polygon').getBoundingClientRect();
                            return [r.left, r.top, r.right, r.bottom]; })(),
          markers: [...document.querySelectorAll("#plan g.beacon")].map((g) => {
            const r = g.querySelector("circle").getBoundingClientRect();
            return [g.getAttribute("data-room"), (r.left + r.right) / 2, (r.top + r.bottom) / 2, (r.right - r.left) / 2];
          })
        })
        """
        let json = try await offPool { try browser.evaluate(script, session: session) as? String }
        struct Layout: Decodable {
            var plan: [Double]
            var kitchen: [Double]
            var markers: [[Marker]]
            enum Marker: Decodable {
                case room(String), number(Double)
                init(from decoder: Decoder) throws {
                    let c = try decoder.singleValueContainer()
                    if let s = try? c.decode(String.self) { self = .room(s) } else { self = .number(try c.decode(Double.self)) }
                }
                var number: Double { if case .number(let n) = self { n } else { .nan } }
            }
        }
        let layout = try JSONDecoder().decode(Layout.self, from: Data(try #require(json).utf8))
        let circles = layout.markers.map { (room: { if case .room(let r) = $0[0] { r } else { "" } }($0), x: $0[1].number, y: $0[2].number, r: $0[3].number) }
        #expect(circles.count == 201)
        let (left, top, right, bottom) = (layout.plan[0], layout.plan[1], layout.plan[2], layout.plan[3])
        for c in circles {
            #expect(c.x - c.r >= left && c.x + c.r <= right && c.y - c.r >= top && c.y + c.r <= bottom, "a marker out of view: \(c)")
        }
        let kitchen = circles.filter { $0.room == "kitchen" }
        for c in kitchen {
            #expect(c.x - c.r >= layout.kitchen[0] && c.x + c.r <= layout.kitchen[2] && c.y - c.r >= layout.kitchen[1] && c.y + c.r <= layout.kitchen[3],
                    "a kitchen marker outside the kitchen: \(c)")
        }
        var overlaps = 0
        for i in kitchen.indices {
            for j in kitchen.indices where j > i {
                let a = kitchen[i], b = kitchen[j]
                if ((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)).squareRoot() < a.r + b.r { overlaps += 1 }
            }
        }
        #expect(overlaps == 0, "\(overlaps) pairs of kitchen markers overlap")
    }
    /// Serves `snapshot(k)` to a real page, pushing the next one every 0.3 s, for `body`.
    static func withLivePage(_ snapshot: @escaping @Sendable (Int) -> DashboardSnapshot, fragment: String = "",
                             _ body: (HeadlessBrowser, String) async throws -> Void) async throws {
        let idle = AggregatorRuntime(core: AggregatorConfig(site: SiteModel()).makeCore(), election: nil, refreshInterval: 60,
                                     startedAt: 0, logger: .silent)
        let (http, port) = try Self.serve(.init(snapshot: { snapshot(0) }, metrics: { await idle.metricsSample(now: 30) }))
        let pusher = Task {
            var k = 1
            while !Task.isCancelled {
                http.push(snapshot(k))
                k += 1
                try? await Task.sleep(for: .milliseconds(300))
            }
        }
        let browser = try HeadlessBrowser(chromium: try RequiredTool.chromium.require(), directory: try Self.directory())
        defer { pusher.cancel(); browser.shutdown(); http.shutdown() }
        let session = try await offPool { try browser.open("http://127.0.0.1:\(port)/\(fragment)") }
        try await body(browser, session)
    }

    /// The number of updates the page has drawn.
    static func updates(_ browser: HeadlessBrowser, _ session: String) async throws -> Int {
        try await offPool { (try browser.evaluate("Number(document.body.dataset.updates)", session: session) as? NSNumber)?.intValue ?? 0 }
    }

    /// Waits until the page has drawn `count` more updates.
    static func waitForUpdates(_ browser: HeadlessBrowser, _ session: String, _ count: Int) async throws {
        let target = try await updates(browser, session) + count
        _ = try await DashboardLiveTests.waitForPage(browser, session, "\(count) more updates") { dom in
            guard let match = dom.firstMatch(of: /data-updates="(\d+)"/), let n = Int(match.1) else { return false }
            return n >= target
        }
    }

    /// An L-shaped bedroom with the hall in its notch. The mean of its corners lies in the hall,
    /// and the bedroom's name and its beacons without a position were drawn there.
    @Test func anLShapedRoomHoldsItsNameAndBeacons() async throws {
        let bedroom: [[Double]] = [[0, 0], [6, 0], [6, 2], [2, 2], [2, 6], [0, 6]]
        let beacons = (0..<9).map { k in
            PresenceDecision(id: BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-\(k)")!, name: "tag \(k)", room: "bedroom",
                             floor: 0, distance: nil, confidence: 0.9, node: "bedroom-pi", since: 0, lastSeen: 29, evidence: [], ts: 30)
        }
        let snapshot = DashboardSnapshot(
            ts: 30, active: true, connected: true,
            rooms: [.init(name: "bedroom", floor: 0, polygon: bedroom),
                    .init(name: "hall", floor: 0, polygon: [[2, 2], [6, 2], [6, 6], [2, 6]])],
            nodes: [.init(name: "bedroom-pi", room: "bedroom", position: [1, 1, 2], status: "online", lastSeen: 29, readings: 10)],
            beacons: beacons)
        try await Self.withLivePage({ k in var s = snapshot; s.ts += Double(k); return s }) { browser, session in
            try await Self.waitForUpdates(browser, session, 1)
            // Each point in the plan's own coordinates, tested against the two outlines.
            let script = """
            JSON.stringify((() => {
              const outline = (room) => document.querySelector(`#plan g.room[data-room="${room}"] polygon`);
              const inside = (room, x, y) => outline(room).isPointInFill(new DOMPoint(x, y));
              const label = document.querySelector('#plan g.room[data-room="bedroom"] text');
              const points = [[Number(label.getAttribute("x")), Number(label.getAttribute("y"))]];
              for (const g of document.querySelectorAll('#plan g.beacon[data-room="bedroom"]')) {
                const m = g.transform.baseVal.consolidate().matrix;
                points.push([m.e, m.f]);
              }
              return points.map(([x, y]) => [inside("bedroom", x, y), inside("hall", x, y)]);
            })())
            """
            let json = try #require(try await offPool { try browser.evaluate(script, session: session) as? String })
            let places = try JSONDecoder().decode([[Bool]].self, from: Data(json.utf8))
            #expect(places.count == 10, "the bedroom's name and its nine beacons")
            for (k, place) in places.enumerated() {
                #expect(place == [true, false], "\(k == 0 ? "the name" : "beacon \(k - 1)") is not in the bedroom")
            }
        }
    }

    /// The page redraws every update. A keyboard user's focus on a beacon stays on it, the Details
    /// card keeps its heading until something is picked, and a node's count that starts again
    /// (an aggregator restart) gives no negative rate.
    @Test func focusAndDetailsSurviveUpdates() async throws {
        let tag = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-1")!
        let snapshot: @Sendable (Int) -> DashboardSnapshot = { k in
            DashboardSnapshot(
                ts: 30 + Double(k), active: true, connected: true,
                rooms: [.init(name: "kitchen", floor: 0, polygon: [[0, 0], [4, 0], [4, 4], [0, 4]])],
                nodes: [.init(name: "kitchen-pi", room: "kitchen", position: [2, 2, 2], status: "online", lastSeen: 29,
                              readings: UInt64(10_000 - 10 * k))],
                beacons: [PresenceDecision(id: tag, name: "keys", room: "kitchen", floor: 0, distance: nil, confidence: 0.9,
                                           node: "kitchen-pi", since: 0, lastSeen: 29, evidence: [], ts: 30)])
        }
        try await Self.withLivePage(snapshot) { browser, session in
            try await Self.waitForUpdates(browser, session, 2)
            let details = try await offPool {
                try browser.evaluate(##"document.querySelector("#details h2")?.textContent + "|" + (document.querySelector("#details .hint") !== null)"##,
                                     session: session) as? String
            }
            #expect(details == "Details|true")
            let rates = try await offPool {
                try browser.evaluate(##"[...document.querySelectorAll("#nodes tbody td")].map((td) => td.textContent).join("|")"##,
                                     session: session) as? String
            }
            #expect(rates?.contains("|-") == false, "a negative rate: \(rates ?? "")")
            let marker = ##"#plan g.beacon[data-beacon="\##(tag.rawValue)"]"##
            let label = try await offPool {
                try browser.evaluate(#"document.querySelector('\#(marker)').getAttribute("aria-label")"#, session: session) as? String
            }
            #expect(label == "keys in kitchen")
            // Focus without a pointer event (which would select it too).
            try await offPool { _ = try browser.evaluate(#"document.querySelector('\#(marker)').focus()"#, session: session) }
            try await Self.waitForUpdates(browser, session, 3)
            let focused = try await offPool {
                try browser.evaluate("document.activeElement && document.activeElement.getAttribute('data-beacon')", session: session) as? String
            }
            #expect(focused == tag.rawValue)
        }
    }

    /// A page just connected can be sent, after the state it got first, a snapshot built before
    /// it (queued while the first was being made). It keeps the later one: shown, the older
    /// would undo a move, and list it twice in Recent moves.
    @Test func anOlderSnapshotAfterANewerOneIsNotShown() async throws {
        let snapshot: @Sendable (Int) -> DashboardSnapshot = { k in
            let (seq, room): (UInt64, String) = k == 0 ? (100, "kitchen") : k < 5 ? (UInt64(k), "office") : (UInt64(100 + k), "hall")
            var s = DashboardSnapshot(
                ts: 30 + Double(k), active: true, connected: true,
                rooms: ["kitchen", "office", "hall"].map { .init(name: $0, floor: 0, polygon: nil) },
                nodes: [],
                beacons: [PresenceDecision(id: cat, name: "cat", room: room, floor: 0, distance: nil, confidence: 0.9,
                                           node: "\(room)-pi", since: 0, lastSeen: 29, evidence: [], ts: 30 + Double(k))])
            s.seq = seq
            return s
        }
        try await Self.withLivePage(snapshot) { browser, session in
            _ = try await DashboardLiveTests.waitForPage(browser, session, "the cat in the hall") { dom in
                DashboardLiveTests.page(dom, shows: cat, in: "hall")
            }
            let moves = try await offPool {
                try browser.evaluate(##"[...document.querySelectorAll("#moves li")].map((li) => li.dataset.room).join(",")"##,
                                     session: session) as? String
            }
            #expect(moves == "hall", "moves shown: \(moves ?? "")")
        }
    }
}
