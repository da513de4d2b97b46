import Foundation
import Shared
import Synchronization
#if canImport(Glibc)
import Glibc
import RoomcastLogging
#endif

/// A small HTTP/1.1 server on POSIX sockets: one accept thread and one thread per connection
/// (blocking I/O stays off the cooperative pool), at most `maxConnections` of them; each request
/// must arrive within `requestTimeout` and within the parser's size limits; one request per
/// connection (`Connection: close`), which keeps every table here bounded by the connection limit.
public final class HTTPServer: Sendable {
    public struct Configuration: Sendable {
        public var endpoint: HTTPConfig.Endpoint
        public var maxConnections: Int
        public var limits: HTTPRequestParser.Limits
        /// Seconds a client has to send its request; also how long a write may block.
        public var requestTimeout: Double

        public init(endpoint: HTTPConfig.Endpoint, maxConnections: Int = 16,
                    limits: HTTPRequestParser.Limits = .init(), requestTimeout: Double = 10) {
            self.endpoint = endpoint
            self.maxConnections = maxConnections
            self.limits = limits
            self.requestTimeout = requestTimeout
        }

        /// The server's settings from an `http:` config section (whose `listen` is valid).
        public init?(_ config: HTTPConfig) {
            guard let endpoint = config.endpoint else { return nil }
            self.init(endpoint: endpoint, maxConnections: config.maxConnections,
                      limits: .init(maxRequestBytes: config.maxRequestBytes), requestTimeout: config.requestTimeoutS)
        }
    }

    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse

    /// What the server counted, for `/metrics`.
    public struct Counters: Sendable, Equatable {
        public var responses: [Int: UInt64] = [:]
        /// Connections answered 503 at once because `maxConnections` were open.
        public var refusedBusy: UInt64 = 0
        public var timeouts: UInt64 = 0
        public var open: Int = 0
    }

    public let configuration: Configuration
    private let handler: Handler
    private let logger: Logger
    private struct State {
        var listenFD: Int32 = -1
        var wake: (read: Int32, write: Int32) = (-1, -1)
        var port: UInt16 = 0
        var stopped = false
        var connections: Set<Int32> = []
        /// Refused connections still being closed gracefully, each on its own short-lived thread.
        var lingeringRefusals = 0
        var counters = Counters()
        /// Listening again after a failed start (`startOrKeepTrying`), until it listens or stops.
        var retry: Task<Void, Never>?
    }

    /// How long a finished connection waits for the client to stop sending before it is closed.
    static let lingerSeconds = 2.0
    /// Refused connections closed gracefully at once; beyond this they are closed outright.
    static let maxLingeringRefusals = 16
    private let state = Mutex(State())

    public init(configuration: Configuration, logger: Logger, handler: @escaping Handler) {
        self.configuration = configuration
        self.logger = logger
        self.handler = handler
    }

    deinit { shutdown() }

    /// The port bound (the kernel's choice when the endpoint says 0).
    public var port: UInt16 { state.withLock { $0.port } }

    public var counters: Counters { state.withLock { $0.counters } }

    /// Binds, listens and starts the accept thread.
    public func start() throws(HTTPServerError) {
        let endpoint = configuration.endpoint
        do throws(SystemCallError) {
            let family = endpoint.isIPv6 ? AF_INET6 : AF_INET
            let fd = try Syscall.call("socket") { socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }
            var one: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            do {
                try Self.bind(fd, endpoint)
                try Syscall.call("listen") { listen(fd, 64) }
            } catch {
                close(fd)
                throw error
            }
            let port = Self.boundPort(fd, ipv6: endpoint.isIPv6)
            let wake: (read: Int32, write: Int32)
            do { wake = try Syscall.pipe() } catch {
                close(fd)  // or the port stays held, with no one to accept on it
                throw error
            }
            // Shut down meanwhile (a retry racing the end of the process): nothing listens.
            let stopped = state.withLock { s -> Bool in
                guard !s.stopped else { return true }
                s.listenFD = fd
                s.wake = wake
                s.port = port
                return false
            }
            if stopped {
                for descriptor in [fd, wake.read, wake.write] { close(descriptor) }
                return
            }
        } catch {
            throw HTTPServerError(endpoint: endpoint.description, underlying: error)
        }
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "roomcast-http-accept"
        thread.start()
        logger.info("http listening", metadata: ["http.listen": "\(endpoint.isIPv6 ? "[\(endpoint.host)]" : endpoint.host):\(port)"])
    }

    /// Listens now or, failing that, as soon as it can. A port another process holds (the run
    /// before not gone yet, another service) or an address not up yet at boot must not stop the
    /// work the listener only shows, nor restart it every few seconds: the failure is logged, and
    /// the listen tried again every `retryInterval` seconds until it succeeds or the server is
    /// shut down, the failure said again ever further apart. Returns whether it listens now.
    /// Throws what waiting cannot mend (a port that needs privileges), as `start` does.
    @discardableResult
    public func startOrKeepTrying(retryInterval: Double = 5) throws(HTTPServerError) -> Bool {
        do {
            try start()
            return true
        } catch {
            guard error.isTransient else { throw error }
            logger.error("cannot listen; the rest runs on and the listen is tried again", metadata: [
                "error": "\(error)", "retry_s": "\(retryInterval)"])
        }
        let task = Task { [weak self] in
            var pacing = LogPacing(interval: 60)
            _ = pacing.admit(now: Syscall.monotonicSeconds())
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(retryInterval))
                guard let self, !Task.isCancelled else { return }
                do {
                    try self.start()
                    return
                } catch {
                    let (admit, suppressed) = pacing.admit(now: Syscall.monotonicSeconds())
                    if admit {
                        self.logger.warning("still cannot listen; tried again", metadata: [
                            "error": "\(error)", "suppressed": "\(suppressed)"])
                    }
                }
            }
        }
        let stopped = state.withLock { s -> Bool in
            if !s.stopped { s.retry = task }
            return s.stopped
        }
        if stopped { task.cancel() }
        return false
    }

    /// Stops accepting, ends every open connection (streams included) and closes the socket.
    /// Idempotent.
    public func shutdown() {
        // The wake-up is written under the lock the accept loop closes the pipe under: written
        // after, it could reach a descriptor number already given to another file.
        state.withLock { s in
            guard !s.stopped else { return }
            s.stopped = true
            s.retry?.cancel()
            for fd in s.connections { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
            if s.wake.write >= 0 { _ = try? Syscall.writeAll(s.wake.write, [1]) }
        }
    }

    private func acceptLoop() {
        let (listenFD, wakeRead) = state.withLock { ($0.listenFD, $0.wake.read) }
        var acceptFailureLoggedAt = -Double.infinity
        var acceptFailuresSuppressed = 0
        defer {
            state.withLock { s in
                close(s.listenFD)
                close(s.wake.read)
                close(s.wake.write)
                s.listenFD = -1
                s.wake = (-1, -1)
            }
        }
        var fds = [pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        while true {
            guard (try? Syscall.call("poll") { poll(&fds, 2, -1) }) != nil else { continue }
            if fds[1].revents != 0 || state.withLock({ $0.stopped }) { return }
            guard fds[0].revents & Int16(POLLIN) != 0 else { continue }
            let client: Int32
            do {
                client = try Syscall.call("accept") { accept(listenFD, nil, nil) }
                // A child process (none today) must not inherit a client's socket.
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            } catch {
                // EMFILE and friends: the process is out of descriptors; back off rather than spin,
                // and say so at most once a minute (the pending connection wakes the poll at once).
                let now = Syscall.monotonicSeconds()
                if now - acceptFailureLoggedAt >= 60 {
                    acceptFailureLoggedAt = now
                    logger.warning("http accept failed", metadata: ["error": "\(error)", "suppressed": "\(acceptFailuresSuppressed)"])
                    acceptFailuresSuppressed = 0
                } else {
                    acceptFailuresSuppressed += 1
                }
                var pause = timespec(tv_sec: 0, tv_nsec: 100_000_000)
                nanosleep(&pause, nil)
                continue
            }
            let admitted = state.withLock { s -> Bool in
                guard !s.stopped, s.connections.count < configuration.maxConnections else { return false }
                s.connections.insert(client)
                s.counters.open = s.connections.count
                return true
            }
            guard admitted else {
                refuse(client)
                continue
            }
            let thread = Thread { [self] in serve(client) }
            thread.name = "roomcast-http-conn"
            thread.start()
        }
    }

    /// Answers 503 to a connection over the limit without reading it (a second's write timeout:
    /// the accept thread must not wait on a client).
    private func refuse(_ fd: Int32) {
        state.withLock { $0.counters.refusedBusy += 1 }
        try? Syscall.setTimeout(fd, option: SO_SNDTIMEO, seconds: 1)
        let body = Array("too many connections\n".utf8)
        let response = HTTPResponse(status: .serviceUnavailable, contentType: "text/plain; charset=utf-8", body: body,
                                    headers: [("Retry-After", "1")])
        try? Syscall.send(fd, Self.head(response, bodyLength: body.count) + body)
        let linger = state.withLock { s in
            guard s.lingeringRefusals < Self.maxLingeringRefusals else { return false }
            s.lingeringRefusals += 1
            return true
        }
        guard linger else {
            close(fd)
            return
        }
        let thread = Thread { [self] in
            Self.drainBeforeClosing(fd, within: 1)
            close(fd)
            state.withLock { $0.lingeringRefusals -= 1 }
        }
        thread.name = "roomcast-http-refuse"
        thread.start()
    }

    /// Makes the close that follows end the connection with a FIN after the answer, not a reset.
    /// Closed while the client's request (or the rest of a body too large to take) is still
    /// unread, a socket resets the connection, and a client on another system, or one whose copy
    /// of the answer is still in flight, loses the answer to the reset. So the sending side is
    /// shut first and what the client still sends is read and dropped until it closes, for
    /// `seconds` and 1 MiB at most.
    static func drainBeforeClosing(_ fd: Int32, within seconds: Double) {
        guard Glibc.shutdown(fd, Int32(SHUT_WR)) == 0 else { return }
        let deadline = Syscall.monotonicSeconds() + seconds
        var chunk = [UInt8](repeating: 0, count: 16_384)
        var drained = 0
        while drained < 1 << 20 {
            let remaining = deadline - Syscall.monotonicSeconds()
            guard remaining > 0 else { return }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, Int32(remaining * 1000) + 1) > 0 else { return }
            let n = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
            guard n > 0 else { return }  // the client's FIN, or an error
            drained += n
        }
    }

    /// Whether a `Host` header names this machine by loopback: `localhost`, `127.x.x.x` or
    /// `[::1]`, with or without a port. A server on loopback answers nothing else: a web page
    /// whose own name was made to resolve to 127.0.0.1 (DNS rebinding) would otherwise read it
    /// as that page's own origin from the user's browser.
    static func isLoopbackHost(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            let rest = name[name.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.dropFirst().allSatisfy(\.isNumber)) else { return false }
            return name[name.index(after: name.startIndex)..<close] == "::1"
        }
        if let colon = name.lastIndex(of: ":") {
            guard name[name.index(after: colon)...].allSatisfy(\.isNumber) else { return false }
            name = String(name[..<colon])
        }
        if name == "localhost" || name == "localhost." { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { $0.count <= 3 && UInt8($0) != nil }
    }

    private func serve(_ fd: Int32) {
        defer {
            // Still listed while it lingers, so `shutdown()` cuts the wait short; unlisted before
            // it is closed, as the accept thread may be given the same number at once.
            Self.drainBeforeClosing(fd, within: Self.lingerSeconds)
            state.withLock {
                $0.connections.remove(fd)
                $0.counters.open = $0.connections.count
            }
            close(fd)
        }
        try? Syscall.setTimeout(fd, option: SO_SNDTIMEO, seconds: configuration.requestTimeout)
        let parser = HTTPRequestParser(limits: configuration.limits)
        let deadline = Syscall.monotonicSeconds() + configuration.requestTimeout
        var buffer: [UInt8] = []
        var searched = 0, awaiting = 0
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            var outcome = HTTPRequestParser.Outcome.needMore(searched: searched, awaiting: awaiting)
            do { if buffer.count >= awaiting { outcome = try parser.parse(buffer, searched: searched) } } catch {
                logger.debug("http bad request", metadata: ["http.status": "\(error.status.code)", "error": error.message])
                respond(fd, .text(error.message + "\n", status: error.status), method: "GET")
                return
            }
            if case .complete(let request, _) = outcome {
                // HTTP/1.0 may name no host (a health checker's probe); browsers always do.
                let host = request.header("host")
                guard !configuration.endpoint.isLoopback || (host == nil && request.version == "HTTP/1.0")
                        || Self.isLoopbackHost(host ?? "") else {
                    respond(fd, .text("this server answers only to localhost\n", status: .misdirectedRequest), method: request.method)
                    return
                }
                respond(fd, handler(request), method: request.method)
                return
            }
            if case .needMore(let far, let length) = outcome { (searched, awaiting) = (far, length) }
            let remaining = deadline - Syscall.monotonicSeconds()
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = remaining > 0 ? ((try? Syscall.call("poll") { poll(&pfd, 1, Int32(remaining * 1000) + 1) }) ?? 0) : 0
            if ready == 0 {
                state.withLock { $0.counters.timeouts += 1 }
                if !buffer.isEmpty { respond(fd, .text("request timeout\n", status: .requestTimeout), method: "GET") }
                return
            }
            guard let n = try? Syscall.read(fd, into: &chunk), n > 0 else { return }  // closed or reset
            buffer += chunk[..<n]
        }
    }

    private func respond(_ fd: Int32, _ response: HTTPResponse, method: String) {
        state.withLock { $0.counters.responses[response.status.code, default: 0] += 1 }
        switch response.body {
        case .bytes(let body):
            // The whole answer within the request timeout, however slowly the client reads.
            let bytes = Self.head(response, bodyLength: body.count) + (method == "HEAD" ? [] : body)
            try? Syscall.send(fd, bytes, by: Syscall.monotonicSeconds() + configuration.requestTimeout)
        case .stream(let write):
            guard (try? Syscall.send(fd, Self.head(response, bodyLength: nil))) != nil, method != "HEAD" else { return }
            write(SocketWriter(fd: fd))
        }
    }

    /// The status line and header fields; `bodyLength` nil means the body ends at close.
    static func head(_ response: HTTPResponse, bodyLength: Int?) -> [UInt8] {
        var text = "HTTP/1.1 \(response.status.code) \(response.status.reason)\r\nDate: \(httpDate(time(nil)))\r\n"
        for (name, value) in response.headers { text += "\(name): \(value)\r\n" }
        if let bodyLength { text += "Content-Length: \(bodyLength)\r\n" }
        text += "Connection: close\r\n\r\n"
        return Array(text.utf8)
    }

    /// `seconds` since the epoch as an HTTP date (RFC 9110 §5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT`),
    /// which an origin server with a clock must send.
    static func httpDate(_ seconds: time_t) -> String {
        var t = seconds
        var parts = tm()
        gmtime_r(&t, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[Int(parts.tm_wday) % 7]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon) % 12]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    private struct SocketWriter: HTTPBodyWriter {
        let fd: Int32
        func write(_ bytes: [UInt8]) throws { try Syscall.send(fd, bytes) }

        /// A peek that reads end of stream, or a socket error. Bytes waiting are not a close: a
        /// client may send more after its request, and it is still there.
        var clientHasClosed: Bool {
            var byte: UInt8 = 0
            let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        }
    }

    private static func bind(_ fd: Int32, _ endpoint: HTTPConfig.Endpoint) throws(SystemCallError) {
        if endpoint.isIPv6 {
            var addr = sockaddr_in6()
            addr.sin6_family = sa_family_t(AF_INET6)
            addr.sin6_port = endpoint.port.bigEndian
            guard inet_pton(AF_INET6, endpoint.host, &addr.sin6_addr) == 1 else { throw SystemCallError(call: "inet_pton", errno: EINVAL) }
            try withUnsafePointer(to: &addr) { p throws(SystemCallError) in
                try p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa throws(SystemCallError) in
                    _ = try Syscall.call("bind") { Glibc.bind(fd, sa, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
                }
            }
        } else {
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = endpoint.port.bigEndian
            guard inet_pton(AF_INET, endpoint.host, &addr.sin_addr) == 1 else { throw SystemCallError(call: "inet_pton", errno: EINVAL) }
            try withUnsafePointer(to: &addr) { p throws(SystemCallError) in
                try p.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa throws(SystemCallError) in
                    _ = try Syscall.call("bind") { Glibc.bind(fd, sa, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
            }
        }
    }

    private static func boundPort(_ fd: Int32, ipv6: Bool) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        } == 0
        guard ok else { return 0 }
        return withUnsafePointer(to: &storage) { p in
            ipv6 ? p.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
                 : p.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }
}
