import Foundation
import Shared
import Synchronization
import Testing
import TestSupport
@testable import RoomcastHTTP
import RoomcastLogging

/// The server on a real loopback socket, spoken to with raw bytes.
@Suite struct HTTPServerTests {
    static func start(maxConnections: Int = 4, timeout: Double = 2, router: HTTPRouter) throws -> HTTPServer {
        let server = HTTPServer(configuration: .init(endpoint: .init(host: "127.0.0.1", port: 0), maxConnections: maxConnections,
                                                     limits: .init(maxRequestBytes: 2048), requestTimeout: timeout),
                                logger: Logger(label: "test", level: .critical)) { router.respond(to: $0) }
        try server.start()
        return server
    }

    static var router: HTTPRouter {
        var r = HTTPRouter(authorization: HTTPAuthorization(token: "s3cret"))
        r.get("/hello") { req in .text("hello \(req.query["name"] ?? "you")\n") }
        r.post("/change") { _ in .text("changed\n") }
        return r
    }

    /// A client socket connected to the server on `port`; `receiveBuffer` sets SO_RCVBUF first.
    static func connected(_ port: UInt16, receiveBuffer: Int32? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard ok == 0 else {
            let e = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: e) ?? .ECONNREFUSED)
        }
        return fd
    }

    /// Sends a GET of `path` on `fd`.
    static func sendGet(_ fd: Int32, _ path: String) {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Sends `bytes` and reads until the server closes the connection.
    static func exchange(_ port: UInt16, _ bytes: [UInt8], halfClose: Bool = true) throws -> String {
        try exchangeEnding(port, bytes, halfClose: halfClose).reply
    }

    /// `exchange`, also saying whether the connection ended in a reset rather than the server's
    /// FIN. A client on another system (or behind a lossy link) loses an answer still unread
    /// when the reset comes.
    static func exchangeEnding(_ port: UInt16, _ bytes: [UInt8], halfClose: Bool = true) throws -> (reply: String, reset: Bool) {
        let fd = try connected(port)
        defer { close(fd) }
        var tv = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if halfClose { shutdown(fd, Int32(SHUT_WR)) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        var reset = false
        while true {
            let n = recv(fd, &buf, buf.count, 0)
            if n < 0 { reset = errno == ECONNRESET }
            if n <= 0 { break }
            out += buf[..<n]
        }
        return (String(decoding: out, as: UTF8.self), reset)
    }

    /// A server on loopback answers only requests that name this machine by loopback: a page
    /// whose own name was made to resolve to 127.0.0.1 (DNS rebinding) sends its own name, and
    /// would otherwise read the dashboard from the user's browser as its own origin.
    @Test func aServerOnLoopbackAnswersOnlyToLoopbackNames() async throws {
        let server = try Self.start(router: Self.router)
        defer { server.shutdown() }
        for host in ["localhost", "localhost:\(server.port)", "127.0.0.1:\(server.port)", "127.8.9.10", "[::1]:\(server.port)", "LOCALHOST"] {
            let reply = try await onThread { try Self.exchange(server.port, Array("GET /hello HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8)) }
            #expect(reply.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(host)")
        }
        for host in ["evil.example:\(server.port)", "evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "[::1]x", "127.0.0.256"] {
            let reply = try await onThread { try Self.exchange(server.port, Array("GET /hello HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8)) }
            #expect(reply.hasPrefix("HTTP/1.1 421 Misdirected Request\r\n"), "\(host): \(reply.prefix(40))")
        }
    }

    /// A port another process holds (the run before not gone yet) is said once and tried again
    /// until it is free; the server then answers there, without a restart. What waiting cannot
    /// mend is thrown at once, and a server shut down does not listen when its retry comes.
    @Test func aTakenPortIsListenedOnOnceFreed() async throws {
        let held = try RefusingPort()
        let log = InMemoryLogHandler()
        let server = HTTPServer(configuration: .init(endpoint: .init(host: "127.0.0.1", port: UInt16(held.port))),
                                logger: Logger(label: "test", level: .info, handler: log)) { Self.router.respond(to: $0) }
        defer { server.shutdown() }
        #expect(try !server.startOrKeepTrying(retryInterval: 0.1))
        let errors = log.records(atLeast: .warning)
        #expect(errors.count == 1 && errors.first?.message.hasPrefix("cannot listen") == true
                && errors.first?.metadata["error"]?.contains("another process holds the port") == true, "\(errors)")
        // Held for a while: retried every 0.1 s, each retry failing.
        try await Task.sleep(for: .milliseconds(500))
        held.release()
        try await eventually("the server listens on the freed port", timeout: .seconds(10), poll: .milliseconds(50)) {
            server.port == UInt16(held.port)
        }
        let reply = try await onThread { try Self.exchange(UInt16(held.port), Array("GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)) }
        #expect(reply.hasPrefix("HTTP/1.1 200 OK\r\n") && reply.hasSuffix("hello you\n"), "\(reply.prefix(80))")
        // The failed retries were said no more than once a minute.
        #expect(log.records(atLeast: .warning).count == 1, "\(log.records(atLeast: .warning))")

        let privileged = HTTPServerError(endpoint: "0.0.0.0:80", underlying: SystemCallError(call: "bind", errno: 13))
        #expect(!privileged.isTransient && HTTPServerError(endpoint: "192.0.2.1:8267", underlying: SystemCallError(call: "bind", errno: 99)).isTransient)
        let stopped = HTTPServer(configuration: .init(endpoint: .init(host: "127.0.0.1", port: 0)), logger: .silent) { _ in .text("no\n") }
        stopped.shutdown()
        try stopped.start()
        #expect(stopped.port == 0, "a server shut down before its (re)try listened")
    }

    @Test func servesARouteAndClosesTheConnection() async throws {
        let server = try Self.start(router: Self.router)
        defer { server.shutdown() }
        let before = time(nil)
        let reply = try await onThread { try Self.exchange(server.port, Array("GET /hello?name=kitchen HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)) }
        let after = time(nil)
        #expect(reply.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(reply.contains("Content-Length: 14\r\n"))
        #expect(reply.contains("Connection: close\r\n"))
        // An origin server with a clock says when it answered (RFC 9110 §6.6.1).
        let date = reply.split(separator: "\r\n").first { $0.hasPrefix("Date: ") }.map { String($0.dropFirst(6)) }
        // Stamped between the request and the reply, however slow the machine.
        #expect(date.map { d in (before...after).contains { HTTPServer.httpDate($0) == d } } == true, "\(date ?? "no Date")")
        #expect(reply.hasSuffix("\r\n\r\nhello kitchen\n"))
        let head = try await onThread { try Self.exchange(server.port, Array("HEAD /hello HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)) }
        #expect(head.hasPrefix("HTTP/1.1 200 OK\r\n") && head.hasSuffix("\r\n\r\n"))
    }

    @Test func unknownPathsAndMethodsGetTheirStatus() async throws {
        let server = try Self.start(router: Self.router)
        defer { server.shutdown() }
        let missing = try await onThread { try Self.exchange(server.port, Array("GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)) }
        #expect(missing.hasPrefix("HTTP/1.1 404 "))
        let wrong = try await onThread { try Self.exchange(server.port, Array("DELETE /hello HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)) }
        #expect(wrong.hasPrefix("HTTP/1.1 405 ") && wrong.contains("Allow: GET, HEAD\r\n"))
    }

    @Test func changesNeedTheToken() async throws {
        let server = try Self.start(router: Self.router)
        defer { server.shutdown() }
        let post = "POST /change HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n"
        let none = try await onThread { try Self.exchange(server.port, Array((post + "\r\n").utf8)) }
        #expect(none.hasPrefix("HTTP/1.1 401 ") && none.contains("WWW-Authenticate: Basic"))
        let wrong = try await onThread { try Self.exchange(server.port, Array((post + "Authorization: Bearer s3cre\r\n\r\n").utf8)) }
        #expect(wrong.hasPrefix("HTTP/1.1 401 "))
        let bearer = try await onThread { try Self.exchange(server.port, Array((post + "Authorization: Bearer s3cret\r\n\r\n").utf8)) }
        #expect(bearer.hasPrefix("HTTP/1.1 200 "))
        let basic = "Basic " + Data("anyone:s3cret".utf8).base64EncodedString()
        let viaBasic = try await onThread { try Self.exchange(server.port, Array((post + "Authorization: \(basic)\r\n\r\n").utf8)) }
        #expect(viaBasic.hasPrefix("HTTP/1.1 200 "))
    }

    @Test func withoutATokenChangesAreForbiddenAndReadsCanBeProtected() {
        var open = HTTPRouter()
        open.post("/change") { _ in .text("changed\n") }
        #expect(open.respond(to: HTTPRequest(method: "POST", target: "/change", path: "/change")).status == .forbidden)
        var guarded = HTTPRouter(authorization: HTTPAuthorization(token: "t"), protectReads: true)
        guarded.get("/page") { _ in .text("page") }
        guarded.get("/healthz", access: .open) { _ in .text("ok") }
        #expect(guarded.respond(to: HTTPRequest(method: "GET", target: "/page", path: "/page")).status == .unauthorized)
        #expect(guarded.respond(to: HTTPRequest(method: "GET", target: "/healthz", path: "/healthz")).status == .ok)
        let authorized = HTTPRequest(method: "GET", target: "/page", path: "/page", headers: [("authorization", "Bearer t")])
        #expect(guarded.respond(to: authorized).status == .ok)
    }

    @Test func garbageGets400AndTheServerKeepsServing() async throws {
        let server = try Self.start(router: Self.router)
        defer { server.shutdown() }
        let garbage = try await onThread { try Self.exchange(server.port, [0x16, 0x03, 0x01, 0x00, 0xA5, 0x01, 0x00, 0x00, 0xA1, 0x03, 0x03]) }
        #expect(garbage.hasPrefix("HTTP/1.1 400 "))
        let big = try await onThread { try Self.exchange(server.port, Array(("POST /change HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n").utf8)) }
        #expect(big.hasPrefix("HTTP/1.1 413 "))
        let ok = try await onThread { try Self.exchange(server.port, Array("GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)) }
        #expect(ok.hasPrefix("HTTP/1.1 200 "))
        #expect(server.counters.responses[400] == 1 && server.counters.responses[413] == 1)
    }

    @Test func httpDatesAreInTheIMFFixdateForm() {
        #expect(HTTPServer.httpDate(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPServer.httpDate(1_796_428_800) == "Sat, 05 Dec 2026 00:00:00 GMT")
    }

    /// A refusal sent while the client is still sending its body must reach it: closed with
    /// that body unread, the socket resets the connection, and the reset can take the answer
    /// with it before the client reads it.
    @Test func aTooLargeRequestStillBeingSentGets413() async throws {
        let server = try Self.start(router: Self.router)
        defer { server.shutdown() }
        let body = [UInt8](repeating: 0x61, count: 400_000)
        for _ in 0..<5 {
            let (reply, reset) = try await onThread {
                try Self.exchangeEnding(server.port, Array("POST /change HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body,
                                        halfClose: false)
            }
            #expect(reply.hasPrefix("HTTP/1.1 413 "), "\(reply.prefix(60))")
            #expect(!reset, "the 413 ended in a reset")
        }
    }

    @Test func aSlowClientTimesOutWith408() async throws {
        let server = try Self.start(timeout: 0.5, router: Self.router)
        defer { server.shutdown() }
        // Half a request and no end: the server answers 408 once the request time is up.
        let reply = try await onThread { try Self.exchange(server.port, Array("GET /hello HTTP/1.1\r\n".utf8), halfClose: false) }
        #expect(reply.hasPrefix("HTTP/1.1 408 "))
        #expect(server.counters.timeouts == 1)
    }

    /// A health checker's `GET /healthz HTTP/1.0` names no host (HTTP/1.0 need not): answered,
    /// on loopback too; HTTP/1.1 without one is still a bad request.
    @Test func anHTTP10RequestWithoutHostIsAnswered() async throws {
        let server = try Self.start(router: Self.router)
        defer { server.shutdown() }
        let old = try await onThread { try Self.exchange(server.port, Array("GET /hello HTTP/1.0\r\n\r\n".utf8)) }
        #expect(old.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(old.prefix(60))")
        let new = try await onThread { try Self.exchange(server.port, Array("GET /hello HTTP/1.1\r\n\r\n".utf8)) }
        #expect(new.hasPrefix("HTTP/1.1 400 "), "\(new.prefix(60))")
    }

    /// A client that takes its answer slowly, but fast enough that each write to it moves some
    /// of it before the write's timeout (a slow link, or a client doing it on purpose), gets the
    /// answer within the request timeout or not at all: it cannot hold its slot for as long as
    /// the whole answer takes, each partial write a fresh wait.
    @Test func aClientThatReadsSlowlyLosesTheConnectionAtTheTimeout() async throws {
        var router = HTTPRouter(authorization: HTTPAuthorization(token: nil))
        // Far more than the kernel buffers for a socket's sending side (tcp_wmem's ceiling, 4 MiB
        // by default): at the client's pace, about 40 s to take whole.
        let wmem = (try? String(contentsOfFile: "/proc/sys/net/ipv4/tcp_wmem", encoding: .utf8))?
            .split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) } ?? 4 << 20
        let size = 6 * max(wmem, 4 << 20)
        router.get("/big") { _ in HTTPResponse(contentType: "text/plain", body: [UInt8](repeating: 0x78, count: size)) }
        let server = try Self.start(timeout: 3, router: router)
        defer { server.shutdown() }
        // The client reads until the server ends the connection, or it has the whole answer:
        // what it got tells the two apart, however slow the machine. Its receive buffer is kept
        // small, so what the kernel buffers on both sides stays far below the answer.
        let received = try await onThread { () throws -> Int in
            let fd = try Self.connected(server.port, receiveBuffer: 256 * 1024)
            defer { close(fd) }
            // A server that stalls without closing ends the read too; the slot's check below fails then.
            var patience = timeval(tv_sec: 60, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size))
            Self.sendGet(fd, "/big")
            var buf = [UInt8](repeating: 0, count: 64 * 1024)
            var total = 0
            // About 640 kB/s, until the end of the connection (a close or a reset).
            while true {
                var got = 0
                while got < 256 * 1024 {
                    let n = recv(fd, &buf, buf.count, 0)
                    if n <= 0 { return total }
                    got += n
                    total += n
                }
                usleep(400_000)
            }
        }
        #expect(received < size, "the client took the whole answer, \(received) bytes, at a pace that needs about 40 s")
        #expect((server.counters.responses[200] ?? 0) == 1, "the answer began: \(server.counters.responses)")
        try await eventually("the slot freed", timeout: .seconds(30)) { server.counters.open == 0 }
    }

    @Test func connectionsOverTheLimitAreRefusedWith503() async throws {
        let server = try Self.start(maxConnections: 1, timeout: 120, router: Self.router)
        defer { server.shutdown() }
        // One client holds the only slot by sending nothing (a long request time: on a loaded
        // machine the 408 must not free the slot before the test looks).
        let holder = try Self.connected(server.port)
        defer { close(holder) }
        try await eventually("the first connection to be admitted", timeout: .seconds(60)) { server.counters.open == 1 }
        // The refusal ends with the server's FIN, not a reset: the request it did not read is
        // drained first.
        let (reply, reset) = try await onThread { try Self.exchangeEnding(server.port, Array("GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8), halfClose: false) }
        #expect(reply.hasPrefix("HTTP/1.1 503 "))
        #expect(!reset, "the 503 ended in a reset")
        #expect(server.counters.refusedBusy == 1)
    }

    @Test func eventStreamsDeliverWhatIsPublishedAndEndAtShutdown() async throws {
        let events = EventStream(maxClients: 1)
        var router = HTTPRouter()
        router.get("/events") { _ in events.response { [ServerSentEvent(name: "state", data: "first")] } }
        // Long bounds: under a sanitizer's pass with the whole suite at once, the reader's thread
        // has sent its request more than a minute after it connected, and a 408 would end the
        // stream unopened.
        let server = try Self.start(timeout: 300, router: router)
        let port = server.port
        let reader = Task { try await onThread { try Self.exchange(port, Array("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8), halfClose: false) } }
        try await eventually("the stream to open", timeout: .seconds(240)) { events.clientCount == 1 }
        // A second stream over the limit is refused.
        let second = try await onThread { try Self.exchange(port, Array("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)) }
        #expect(second.hasPrefix("HTTP/1.1 503 "))
        events.publish(ServerSentEvent(name: "state", data: "two\nlines"))
        events.finish()
        let text = try await reader.value
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n") && text.contains("Content-Type: text/event-stream"))
        #expect(text.hasSuffix("\r\n\r\nretry: 2000\n\nevent: state\ndata: first\n\nevent: state\ndata: two\ndata: lines\n\n"))
        server.shutdown()
    }

    /// A page that closed its stream while nothing was published kept its slot until a write
    /// failed: a keep-alive away, and a write after a close may succeed once. A page reconnecting
    /// with every slot taken was refused by its own old stream. The slot is now free within a
    /// second of the close, with nothing written.
    @Test func aClosedStreamFreesItsSlotWithNothingPublished() async throws {
        let events = EventStream(maxClients: 1, keepAlive: 600)
        var router = HTTPRouter()
        router.get("/events") { _ in events.response { [] } }
        let server = try Self.start(timeout: 300, router: router)
        defer { events.finish(); server.shutdown() }
        let fd = try Self.connected(server.port)
        Self.sendGet(fd, "/events")
        try await eventually("the stream to open", timeout: .seconds(240)) { events.clientCount == 1 }
        close(fd)
        try await eventually("the closed stream's slot to be free", timeout: .seconds(30)) { events.clientCount == 0 }
        // The page's next stream is served.
        let port = server.port
        let next = Task { try await onThread { try Self.exchange(port, Array("GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8), halfClose: false) } }
        try await eventually("the next stream to open", timeout: .seconds(240)) { events.clientCount == 1 }
        events.finish()
        #expect(try await next.value.hasPrefix("HTTP/1.1 200 OK\r\n"))
    }

    /// A dashboard's events are each the whole state. A slow page was sent its backlog of up to
    /// 16 states, oldest first, before the current one; the newest now replaces one still queued.
    @Test func aNewerStateReplacesOneStillQueued() {
        var queue: [ServerSentEvent] = []
        var lost = 0
        for k in 0..<20 { lost += EventStream.enqueue(ServerSentEvent(name: "state", data: "\(k)"), into: &queue, maxQueued: 16, replacing: ["state"]) }
        #expect(queue.map(\.data) == ["19"] && lost == 0)
        // Other events queue as before, the oldest going past the bound.
        var plain: [ServerSentEvent] = []
        for k in 0..<20 { lost += EventStream.enqueue(ServerSentEvent(name: "note", data: "\(k)"), into: &plain, maxQueued: 16, replacing: ["state"]) }
        #expect(plain.first?.data == "4" && plain.count == 16 && lost == 4)
    }

    @Test func prometheusTextEscapesAndAccumulatesBuckets() {
        var p = PrometheusText()
        var h = Histogram(bounds: [1, 5])
        for v in [0.5, 2, 7] { h.observe(v) }
        p.counter("x_total", help: "A count.", 3, labels: [("room", "a\"b\\c\nd")])
        p.histogram("lat_seconds", help: "Latency.", h)
        #expect(p.text == """
            # HELP x_total A count.
            # TYPE x_total counter
            x_total{room="a\\"b\\\\c\\nd"} 3
            # HELP lat_seconds Latency.
            # TYPE lat_seconds histogram
            lat_seconds_bucket{le="1"} 1
            lat_seconds_bucket{le="5"} 2
            lat_seconds_bucket{le="+Inf"} 3
            lat_seconds_sum 9.5
            lat_seconds_count 3

            """)
        // A CR LF is one Character: its line feed is escaped all the same, and no line breaks.
        #expect(PrometheusText.escape("a\r\nb") == "a\r\\nb")
    }
}

/// Runs blocking socket I/O on a thread of its own. Not `offPool`: that runs one job at a time
/// on a small machine, and these jobs block on the server (an open event stream blocks until
/// the stream ends), so they must not queue behind one another.
func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
