import Foundation
import Shared
import Synchronization
import RoomcastCLI

/// `edge-agent scan`: a sink that shows readings instead of publishing them —
/// the ranging table refreshed in place, or JSONL with `--json`.
public final class ScanView: AgentSink {
    private let json: Bool
    private let topics: Topics
    private let lastFrame = Mutex<String>("")

    /// `topics`: the agent's, which tell its readings from its other messages.
    public init(json: Bool, topics: Topics = Topics()) {
        self.json = json
        self.topics = topics
    }

    /// With `--json`, each reading as a line; telemetry, status and events are no readings
    /// (whatever the node or the topic prefix is called).
    public func send(_ messages: [OutboundMessage], at ts: Double) {
        guard json else { return }
        var out = ""
        for m in messages {
            guard case .nodeBeacon = topics.parse(m.topic) else { continue }
            out += String(decoding: m.payload, as: UTF8.self) + "\n"
        }
        if !out.isEmpty { StandardStream.output.write(out) }
    }

    /// Redraws the table (not in JSON mode); called once a second.
    public func render(_ table: ScanTable, now: Double) {
        guard !json else { return }
        let frame = table.render(now: now, width: TerminalScreen.columns())
        let changed = lastFrame.withLock { last in
            defer { last = frame }
            return last != frame
        }
        if changed { StandardStream.output.write((TerminalScreen.clear + frame)) }
    }

    public var dropped: UInt64 { 0 }
    public var reconnects: UInt64 { 0 }
    public func shutdown(final: OutboundMessage?, at ts: Double) async {}
}
