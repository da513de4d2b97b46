import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RoomcastAggregator
import Shared
import Testing
import TestSupport

/// The dashboard and `/metrics` of a running system, seen by real clients: the simulated home
/// replayed by real edge agents into mosquitto, the aggregator with `--http`, a headless Chromium
/// rendering the page, and a Prometheus scraping it.
@Suite(.serialized, .requiresMosquitto, .requiresChromium, .requiresPrometheus) struct DashboardLiveTests {
    /// Whether the page draws `beacon` in `room` (its marker carries both as attributes).
    static func page(_ dom: String, shows beacon: BeaconID, in room: String) -> Bool {
        dom.range(of: #"data-beacon="\#(NSRegularExpression.escapedPattern(for: beacon.rawValue))"[^>]*data-room="\#(room)""#,
                  options: .regularExpression) != nil
    }

    /// Opens `/events` on `port` and reads the reply's head; returns the open socket (the stream
    /// holds one of the server's event stream slots until it is closed).
    static func holdEventStream(_ port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard ok == 0 else { close(fd); throw HeadlessBrowser.ProtocolError(description: "cannot connect to \(port)") }
        let request = Array("GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buf = [UInt8](repeating: 0, count: 512)
        let n = recv(fd, &buf, buf.count, 0)
        guard n > 0, String(decoding: buf[..<n], as: UTF8.self).hasPrefix("HTTP/1.1 200") else {
            close(fd)
            throw HeadlessBrowser.ProtocolError(description: "/events was not served: \(String(decoding: buf[..<max(0, n)], as: UTF8.self))")
        }
        return fd
    }

    /// Waits until the live page's DOM satisfies `condition`; returns it and when it first did.
    static func waitForPage(_ browser: HeadlessBrowser, _ session: String, _ what: String, timeout: Double = 20,
                            _ condition: @escaping @Sendable (String) -> Bool) async throws -> (dom: String, at: Double) {
        try await offPool {
            let deadline = Date().addingTimeInterval(timeout)
            var dom = ""
            while Date() < deadline {
                dom = (try browser.evaluate("document.documentElement.outerHTML", session: session) as? String) ?? ""
                if condition(dom) { return (dom, Date().timeIntervalSince1970) }
                Thread.sleep(forTimeInterval: 0.1)  // polling a page the test does not control; bounded by the deadline
            }
            throw HeadlessBrowser.ProtocolError(description: "the page never showed \(what) within \(timeout) s; last DOM:\n\(dom.prefix(3000))")
        }
    }

    @Test func theDashboardShowsTheHomeAndFollowsAMove() async throws {
        let port = try freePort()
        // The hall's door into the living room, on the hall's outline (y = 6, x 1–2 m).
        let rig = try await FaultRig.start(refreshInterval: 60, aggregatorArguments: ["--http", "127.0.0.1:\(port)"],
                                           doorways: ["hall": "[[[1, 6], [2, 6]]]"])
        var browser: HeadlessBrowser?
        do {
            _ = try await FaultTests.warmUp(rig)
            let (probe, _) = try await FaultTests.probeBaseline(rig)
            let chromium = try RequiredTool.chromium.require()
            let b = try HeadlessBrowser(chromium: chromium, directory: rig.directory)
            browser = b
            // Every event stream slot taken (8, the default): the page's stream is refused (503),
            // which ends an EventSource for good. The page must try again by itself once a slot
            // is free, not stay on "reconnecting…" with nothing behind it.
            let held = try await offPool { try (0..<8).map { _ in try Self.holdEventStream(port) } }
            let session = try await offPool { try b.open("http://127.0.0.1:\(port)/") }
            _ = try await Self.waitForPage(b, session, "the refused stream") { $0.contains(#"data-connected="false""#) }
            for fd in held { close(fd) }
            // Floor 0 of the house: its rooms, its nodes online, and the probe in the office. The
            // page retries 3 s after the refusal; the closed streams' slots are free within a second.
            let (first, _) = try await Self.waitForPage(b, session, "the probe in the office", timeout: 45) { dom in
                Self.page(dom, shows: FaultRig.probeID, in: "office")
            }
            for room in ["living", "kitchen", "hall", "office"] {
                #expect(first.contains(#"data-room="\#(room)""#), "room \(room) on the page")
            }
            for node in ["living-pi", "kitchen-pi", "hall-pi", "office-pi"] {
                #expect(first.range(of: #"data-node="\#(node)"[^>]*data-status="online""#, options: .regularExpression) != nil,
                        "node \(node) online on the page")
            }
            #expect(first.contains(#"data-connected="true""#), "the live stream is connected")
            // The hall's doorway is drawn over its wall, where the site puts it.
            #expect(first.range(of: #"<line class="doorway" data-doorway="hall"[^>]*x2=""#, options: .regularExpression) != nil,
                    "the hall's doorway on the plan")

            // The probe walks to the kitchen: the open page follows by itself (Server-Sent Events).
            let followed = try await rig.follow(probe, to: "kitchen-pi", room: "kitchen")
            let publishedAt = FaultRig.now
            let (second, shownAt) = try await Self.waitForPage(b, session, "the probe in the kitchen", timeout: 10) { dom in
                Self.page(dom, shows: FaultRig.probeID, in: "kitchen")
            }
            #expect(!Self.page(second, shows: FaultRig.probeID, in: "office"))
            print("dashboard: the move to the kitchen published \(FaultTests.s(followed)) after it began; the open page showed it "
                  + "\(FaultTests.s(max(0, shownAt - publishedAt))) after that")
            await probe.stop()
        } catch {
            browser?.shutdown()
            await rig.shutdown()
            throw error
        }
        browser?.shutdown()
        await rig.shutdown()
    }

    /// The dashboard's port held by another process (the run before still closing, another
    /// service) costs the home nothing: the aggregator decides as ever, says why the dashboard is
    /// not there, and serves it once the port is free, with no restart.
    @Test func aTakenDashboardPortDoesNotStopPresence() async throws {
        let held = try RefusingPort()
        let rig = try await FaultRig.start(refreshInterval: 60, aggregatorArguments: ["--http", "127.0.0.1:\(held.port)"])
        do {
            _ = try await FaultTests.warmUp(rig)
            let log = try String(contentsOfFile: "\(rig.directory)/aggregator.log", encoding: .utf8)
            #expect(log.contains("cannot listen") && log.contains("another process holds the port"), "\(log.suffix(2000))")
            held.release()
            try await eventually("the dashboard on the freed port", timeout: .seconds(30), poll: .milliseconds(200)) {
                (try? await LocalHTTP.get(held.port, "/metrics"))?.status == 200
            }
            let metrics = try await LocalHTTP.get(held.port, "/metrics").body
            #expect(LocalHTTP.value(metrics, "roomcast_decisions_total").map { $0 >= 1 } == true, "\(metrics.prefix(600))")
            let after = try String(contentsOfFile: "\(rig.directory)/aggregator.log", encoding: .utf8)
            #expect(after.components(separatedBy: "effective config").count == 2, "the aggregator started more than once")
        } catch {
            await rig.shutdown()
            throw error
        }
        await rig.shutdown()
    }

    /// Prometheus's answer to `query` as (labels, value) pairs.
    static func query(_ prometheusPort: Int, _ query: String) async throws -> [([String: String], Double)] {
        var components = URLComponents(string: "http://127.0.0.1:\(prometheusPort)/api/v1/query")!
        components.queryItems = [URLQueryItem(name: "query", value: query)]
        let (data, _) = try await URLSession.shared.data(from: components.url!)
        struct Answer: Decodable {
            struct Data: Decodable {
                struct Sample: Decodable { var metric: [String: String]; var value: [ValueField] }
                var result: [Sample]
            }
            var status: String
            var data: Data
        }
        enum ValueField: Decodable {
            case time(Double), text(String)
            init(from decoder: Decoder) throws {
                let c = try decoder.singleValueContainer()
                if let d = try? c.decode(Double.self) { self = .time(d) } else { self = .text(try c.decode(String.self)) }
            }
        }
        let answer = try JSONDecoder().decode(Answer.self, from: data)
        return answer.data.result.compactMap { sample in
            guard case .text(let v)? = sample.value.last, let value = Double(v) else { return nil }
            return (sample.metric, value)
        }
    }

    @Test func aRealPrometheusScrapesWhatTheReplayDid() async throws {
        let port = try freePort()
        let rig = try await FaultRig.start(refreshInterval: 60, aggregatorArguments: ["--http", "127.0.0.1:\(port)"])
        let prometheusPort = try freePort()
        var prometheus: ChildProcess?
        do {
            _ = try await FaultTests.warmUp(rig)
            let config = "\(rig.directory)/prometheus.yml"
            try """
                global: {scrape_interval: 1s, evaluation_interval: 1s}
                scrape_configs:
                  - job_name: roomcast
                    static_configs: [{targets: ["127.0.0.1:\(port)"]}]
                """.write(toFile: config, atomically: true, encoding: .utf8)
            prometheus = try ChildProcess(try RequiredTool.prometheus.require(), [
                "--config.file=\(config)", "--storage.tsdb.path=\(rig.directory)/tsdb",
                "--web.listen-address=127.0.0.1:\(prometheusPort)",
            ], stdoutPath: "\(rig.directory)/prometheus.log", stderrPath: "\(rig.directory)/prometheus.log")
            try await eventually("Prometheus scraping the aggregator", timeout: .seconds(60), poll: .milliseconds(500)) {
                let up = (try? await Self.query(prometheusPort, #"up{job="roomcast"}"#)) ?? []
                return up.first?.1 == 1
            }
            // The probe moves once more, so a room change happened while Prometheus watched.
            let (probe, _) = try await FaultTests.probeBaseline(rig)
            _ = try await rig.follow(probe, to: "kitchen-pi", room: "kitchen")
            let movedAt = FaultRig.now
            try await eventually("a scrape after the move", timeout: .seconds(30), poll: .milliseconds(500)) {
                let t = (try? await Self.query(prometheusPort, "timestamp(roomcast_decisions_total)"))?.first?.1 ?? 0
                return t > movedAt + 1
            }
            await probe.stop()

            // Against what the observer saw the aggregator publish.
            let presences = rig.messages.compactMap(\.presence)
            let decisions = try #require(try await Self.query(prometheusPort, "roomcast_decisions_total").first?.1)
            #expect(decisions >= Double(rig.beacons.count + 1), "every beacon and the probe decided at least once: \(decisions)")
            #expect(decisions <= Double(presences.count), "no more decisions than presence messages seen: \(decisions) vs \(presences.count)")
            let switches = try await Self.query(prometheusPort, #"roomcast_room_changes_total{kind="switch"}"#).first?.1 ?? 0
            #expect(switches >= 2, "the probe's two moves are room switches: \(switches)")
            // Every switch the fusion engine makes says when its evidence began to lead.
            let latencies = try await Self.query(prometheusPort, "roomcast_switch_latency_seconds_count").first?.1 ?? 0
            let latencySum = try await Self.query(prometheusPort, "roomcast_switch_latency_seconds_sum").first?.1 ?? 0
            #expect(latencies == switches, "a latency per switch: \(latencies) of \(switches)")
            #expect(latencies > 0 && latencySum / latencies < 30, "mean switch latency \(latencySum / max(latencies, 1)) s")
            let perNode = try await Self.query(prometheusPort, "roomcast_node_readings_total")
            let counted = Set(perNode.filter { $0.1 > 0 }.compactMap { $0.0["node"] })
            #expect(counted.isSuperset(of: rig.nodes), "readings counted for every node: \(counted.sorted())")
            let online = try await Self.query(prometheusPort, "roomcast_node_online == 1")
            #expect(Set(online.compactMap { $0.0["node"] }) == Set(rig.nodes), "every node online")
            let accepted = try #require(try await Self.query(prometheusPort, "roomcast_readings_accepted_total").first?.1)
            // Readings only: the intake's count took every message (the presence echoed back,
            // statuses, the lease) and ran several percent over. One query, so both sides come
            // from one scrape: readings go on arriving between two queries (5 % apart under ASan).
            let ratio = try #require(try await Self.query(
                prometheusPort, "roomcast_readings_accepted_total / scalar(sum(roomcast_node_readings_total))").first?.1)
            #expect(ratio >= 0.99 && ratio <= 1.01, "accepted readings are the per-node counts' sum: \(ratio) of it")
            let kitchen = try await Self.query(prometheusPort, #"roomcast_room_occupancy{room="kitchen"}"#).first?.1 ?? 0
            #expect(kitchen >= 1, "the probe is counted in the kitchen")
            let held = try await Self.query(prometheusPort, "roomcast_decisions_held").first?.1
            #expect(held == 0, "decisions are not held while the broker is up")
            print("metrics: Prometheus scraped \(Int(decisions)) decisions, \(Int(switches)) switches, \(Int(accepted)) readings "
                  + "from \(counted.count) nodes; the observer saw \(presences.count) presence messages")
        } catch {
            prometheus?.send(SIGTERM)
            await rig.shutdown()
            throw error
        }
        prometheus?.send(SIGTERM)
        if let prometheus { _ = await prometheus.waitForExit() }
        await rig.shutdown()
    }

    @Test func theEdgeAgentServesItsMetrics() async throws {
        let bin = try FaultRig.productsDirectory()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-agent-http-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try await ChildProcess.run("\(bin)/roomcast-sim", ["generate", "--layout", "house", "--seed", "4", "--duration", "120",
                                                           "--out", "\(dir)/home"], in: dir)
        // Its port is held at the start (the run before not gone yet): the agent scans on and
        // listens once the port is free.
        let held = try RefusingPort()
        let port = held.port
        let config = "\(dir)/agent.yaml"
        try (String(contentsOfFile: "\(dir)/home/agent.yaml", encoding: .utf8) + "\nhttp:\n  listen: \"127.0.0.1:\(port)\"\n")
            .write(toFile: config, atomically: true, encoding: .utf8)
        let agent = try ChildProcess("\(bin)/edge-agent", [
            "run", "-c", config, "--node", "kitchen-pi", "--source", "btsnoop:\(dir)/home/nodes/kitchen-pi.btsnoop",
            "--speed", "realtime", "--dry-run",
        ], stdoutPath: "\(dir)/agent.out", stderrPath: "\(dir)/agent.log")
        defer { agent.send(SIGKILL) }
        // Read through a file handle: Foundation's `String(contentsOfFile:)` leaked its read buffer
        // here under AddressSanitizer, polling a log the agent was writing.
        try await eventually("the agent says its port is taken", timeout: .seconds(30), poll: .milliseconds(100)) {
            let log = FileHandle(forReadingAtPath: "\(dir)/agent.log")
            defer { try? log?.close() }
            return String(decoding: (try? log?.readToEnd()) ?? Data(), as: UTF8.self).contains("cannot listen")
        }
        held.release()
        try await eventually("the agent's listener", timeout: .seconds(30), poll: .milliseconds(100)) {
            (try? await LocalHTTP.get(port, "/healthz"))?.status == 200
        }
        let health = try await LocalHTTP.get(port, "/healthz")
        #expect(health.body.contains("node: kitchen-pi") && health.body.contains("mqtt: none (dry run)"), "\(health.body)")
        // Two scrapes a few seconds apart: the counters move with the replay, and agree with what it printed.
        try await eventually("readings counted", timeout: .seconds(30), poll: .milliseconds(200)) {
            (LocalHTTP.value((try? await LocalHTTP.get(port, "/metrics"))?.body ?? "", "roomcast_agent_readings_total") ?? 0) > 0
        }
        let first = try await LocalHTTP.get(port, "/metrics")
        #expect(first.status == 200)
        let adverts1 = try #require(LocalHTTP.value(first.body, "roomcast_agent_advertisements_total"))
        try await eventually("more advertisements", timeout: .seconds(30), poll: .milliseconds(200)) {
            (LocalHTTP.value((try? await LocalHTTP.get(port, "/metrics"))?.body ?? "", "roomcast_agent_advertisements_total") ?? 0) > adverts1
        }
        let second = try await LocalHTTP.get(port, "/metrics").body
        let readings = try #require(LocalHTTP.value(second, "roomcast_agent_readings_total"))
        #expect(readings >= 1)
        #expect(LocalHTTP.value(second, "roomcast_agent_beacons_tracked").map { $0 >= 1 } == true)
        #expect(LocalHTTP.value(second, "roomcast_agent_beacons_max") == 4096)
        #expect(LocalHTTP.value(second, "roomcast_agent_hci_errors_total") == 0)
        #expect(LocalHTTP.value(second, "roomcast_agent_reports_dropped_total") == 0)
        #expect(!second.contains("roomcast_agent_mqtt_connected"), "no broker series in a dry run")
        agent.send(SIGTERM)
        _ = await agent.waitForExit()
        // Every reading counted by the scrape was printed by the time the agent stopped.
        let printed = try String(contentsOfFile: "\(dir)/agent.out", encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("/beacons/") }.count
        #expect(Double(printed) >= readings, "readings counted \(readings), reading lines printed \(printed)")
        print("agent metrics: \(Int(readings)) readings and \(Int(LocalHTTP.value(second, "roomcast_agent_advertisements_total") ?? 0)) advertisements counted while the replay printed \(printed) reading lines")
    }
}
