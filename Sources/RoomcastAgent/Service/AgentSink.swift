import Foundation
import RoomcastMQTT
import Shared
import Synchronization
import RoomcastLogging

/// Where the agent's messages go: a broker, or stdout for `--dry-run`.
public protocol AgentSink: Sendable {
    /// Sends now or drops (and counts) — a sink never queues readings for
    /// later, so stale values are never published as if fresh.
    func send(_ messages: [OutboundMessage], at ts: Double)
    /// Messages dropped because the broker was unreachable.
    var dropped: UInt64 { get }
    var reconnects: UInt64 { get }
    /// Publishes the broker refused, per topic family (empty when it refused none or cannot say).
    var refused: [String: Int] { get }
    /// Flushes and closes, publishing `final` (e.g. the offline status) first.
    func shutdown(final: OutboundMessage?, at ts: Double) async
}

/// `--dry-run`: every message as one JSONL line `{"payload","retain","topic","ts"}` on stdout,
/// or handed to a closure in 64 KB chunks (an in-process replay gets the bytes the binary prints).
public final class DryRunSink: AgentSink {
    private let buffer = Mutex<[UInt8]>([])
    private let write: @Sendable (Data) -> Void

    /// Standard output (`StandardStream`: a reader gone ends the process as a SIGPIPE would).
    public init() {
        self.write = { StandardStream.output.write(Array($0)) }
    }

    public init(handle: FileHandle) {
        self.write = { handle.write($0) }
    }

    public init(write: @escaping @Sendable (Data) -> Void) {
        self.write = write
    }

    public func send(_ messages: [OutboundMessage], at ts: Double) {
        guard !messages.isEmpty else { return }
        let full: [UInt8]? = buffer.withLock { buf in
            for m in messages {
                MessageLogLine(ts: ts, message: m).encode(into: &buf, payloadIsEncodedJSON: m.payloadIsEncodedJSON)
                buf.append(0x0A)
            }
            guard buf.count >= 64 * 1024 else { return nil }
            defer { buf.removeAll(keepingCapacity: true) }
            return buf
        }
        if let full { write(Data(full)) }
    }

    public var dropped: UInt64 { 0 }
    public var reconnects: UInt64 { 0 }
    public var refused: [String: Int] { [:] }

    public func shutdown(final: OutboundMessage?, at ts: Double) async {
        if let final { send([final], at: ts) }
        let rest = buffer.withLock { buf in defer { buf.removeAll() }; return buf }
        if !rest.isEmpty { write(Data(rest)) }
    }
}

/// Publishes through an `MQTTClient`; drops (and counts) while disconnected, except events.
///
/// An event (a region entered or left, `OutboundMessage.heldThroughOutage`) says once that
/// something happened, and nothing says it again: one refused while the broker is away is held,
/// up to `maximumHeldEvents`, and sent before anything else once the client is connected again,
/// with its own time. Readings are not held, not even one raised to QoS 1 by `DeliveryCheck`
/// (stale, they would pass for fresh, and crowd the events out), and retained state goes out
/// again on reconnect.
public final class MQTTSink: AgentSink {
    public let client: MQTTClient
    private let droppedCount = Atomic<UInt64>(0)
    private let heldEvents = Mutex<[OutboundMessage]>([])
    private let logger: Logger

    /// Events held at most through an outage; beyond it the oldest are dropped (and counted).
    public static var maximumHeldEvents: Int { 256 }

    public init(client: MQTTClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    public func send(_ messages: [OutboundMessage], at ts: Double) {
        let held: [OutboundMessage] = client.isConnected ? heldEvents.withLock { h in defer { h.removeAll() }; return h } : []
        for m in held + messages {
            do {
                try client.publish(MQTTMessage(topic: m.topic, payload: m.payload, qos: m.qos == 0 ? .atMostOnce : .atLeastOnce,
                                               retain: m.retain))
            } catch {
                guard m.heldThroughOutage else {
                    droppedCount.add(1, ordering: .relaxed)
                    continue
                }
                let overflow = heldEvents.withLock { h in
                    h.append(m)
                    let over = max(0, h.count - Self.maximumHeldEvents)
                    h.removeFirst(over)
                    return over
                }
                if overflow > 0 { droppedCount.add(UInt64(overflow), ordering: .relaxed) }
            }
        }
    }

    /// Events waiting for the broker.
    public var heldEventCount: Int { heldEvents.withLock { $0.count } }

    public var dropped: UInt64 { droppedCount.load(ordering: .relaxed) }
    public var reconnects: UInt64 { UInt64(max(0, client.reconnects)) }
    public var refused: [String: Int] { client.publishRefusals.byFamily }

    public func shutdown(final: OutboundMessage?, at ts: Double) async {
        let last = final.map { MQTTMessage(topic: $0.topic, payload: $0.payload, qos: .atLeastOnce, retain: $0.retain) }
        await client.shutdown(publishing: last, timeout: .seconds(3))
    }
}

extension AgentSink {
    /// Sinks without a broker refuse nothing.
    public var refused: [String: Int] { [:] }
}
