import Dispatch
import Synchronization

/// Fans events out to the clients of a Server-Sent Events endpoint. Each client's connection
/// thread waits for its own queue; a client that falls behind loses its oldest events (counted)
/// rather than growing memory, and at most `maxClients` are served at once.
public final class EventStream: Sendable {
    private struct Client {
        var queue: [ServerSentEvent] = []
        let wake = DispatchSemaphore(value: 0)
    }
    private struct State {
        var clients: [UInt64: Client] = [:]
        var nextID: UInt64 = 0
        var finished = false
        var dropped: UInt64 = 0
        var served: UInt64 = 0
    }
    private let state = Mutex(State())
    public let maxClients: Int
    public let maxQueued: Int
    /// Event names whose newest event replaces one still queued for a client: each is the whole
    /// state, and a slow client gets the current one, not a backlog of the states before it.
    public let replacing: Set<String>
    /// Seconds between keep-alive comments: they keep proxies from closing an idle stream.
    public let keepAlive: Double
    /// Seconds between looks for a client that closed its side while nothing was sent: its slot is
    /// free again within this, so a page that reconnects is not refused by its own old stream.
    static let hangUpCheckInterval = 0.5

    public init(maxClients: Int = 8, maxQueued: Int = 16, keepAlive: Double = 15, replacing: Set<String> = []) {
        self.maxClients = maxClients
        self.maxQueued = maxQueued
        self.replacing = replacing
        self.keepAlive = keepAlive
    }

    public var clientCount: Int { state.withLock { $0.clients.count } }
    /// Events a slow client lost.
    public var dropped: UInt64 { state.withLock { $0.dropped } }
    /// Streams opened since start.
    public var served: UInt64 { state.withLock { $0.served } }

    /// Queues `event` for every client.
    public func publish(_ event: ServerSentEvent) {
        state.withLock { s in
            for id in s.clients.keys {
                s.dropped += UInt64(Self.enqueue(event, into: &s.clients[id]!.queue, maxQueued: maxQueued, replacing: replacing))
                s.clients[id]!.wake.signal()
            }
        }
    }

    /// Queues `event` for one client: in place of a queued event of its name when the name is
    /// one of `replacing`, else at the end, the oldest going when more than `maxQueued` wait.
    /// Returns the events lost (a replaced one is not lost: the newer says all it said).
    static func enqueue(_ event: ServerSentEvent, into queue: inout [ServerSentEvent], maxQueued: Int,
                        replacing: Set<String>) -> Int {
        if let name = event.name, replacing.contains(name) { queue.removeAll { $0.name == name } }
        queue.append(event)
        guard queue.count > maxQueued else { return 0 }
        queue.removeFirst()
        return 1
    }

    /// Ends every stream (shutdown); later requests get 503.
    public func finish() {
        state.withLock { s in
            s.finished = true
            for c in s.clients.values { c.wake.signal() }
        }
    }

    /// The response for one client: `initial()` is sent first (the state as it is now), then
    /// every published event until the client or the stream goes away.
    public func response(initial: @escaping @Sendable () -> [ServerSentEvent]) -> HTTPResponse {
        guard state.withLock({ !$0.finished && $0.clients.count < maxClients }) else {
            return .text("too many event streams\n", status: .serviceUnavailable, headers: [("Retry-After", "5")])
        }
        let headers = [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"),
                       ("X-Accel-Buffering", "no")]
        return HTTPResponse(status: .ok, headers: headers, body: .stream { [self] writer in run(writer, initial: initial) })
    }

    private func run(_ writer: HTTPBodyWriter, initial: @Sendable () -> [ServerSentEvent]) {
        // Registered before `initial()` is read, so nothing published in between is missed.
        let registered = state.withLock { s -> (UInt64, DispatchSemaphore)? in
            guard !s.finished, s.clients.count < maxClients else { return nil }
            s.nextID += 1
            s.served += 1
            let client = Client()
            s.clients[s.nextID] = client
            return (s.nextID, client.wake)
        }
        guard let (id, wake) = registered else { return }
        defer { _ = state.withLock { $0.clients.removeValue(forKey: id) } }
        do {
            // Reconnect after 2 s when the connection drops (aggregator restart).
            try writer.write(Array("retry: 2000\n\n".utf8))
            for event in initial() { try writer.write(event.encoded) }
            while true {
                guard let woke = waitForEvents(wake, writer) else { return }
                let (events, finished) = state.withLock { s -> ([ServerSentEvent], Bool) in
                    let q = s.clients[id]?.queue ?? []
                    s.clients[id]?.queue = []
                    return (q, s.finished)
                }
                for event in events { try writer.write(event.encoded) }
                if finished { return }
                if !woke { try writer.write(Array(": keep-alive\n\n".utf8)) }
            }
        } catch {
            return  // the client went away
        }
    }

    /// Waits for `wake` up to `keepAlive`: true when woken, false at the keep-alive, nil when the
    /// client closed meanwhile.
    private func waitForEvents(_ wake: DispatchSemaphore, _ writer: HTTPBodyWriter) -> Bool? {
        let keepAliveAt = DispatchTime.now() + keepAlive
        while true {
            let sliceEnd = min(keepAliveAt, .now() + Self.hangUpCheckInterval)
            if wake.wait(timeout: sliceEnd) == .success { return true }
            if writer.clientHasClosed { return nil }
            if sliceEnd >= keepAliveAt { return false }
        }
    }
}
