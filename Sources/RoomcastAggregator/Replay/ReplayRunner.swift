import Foundation
import RoomcastFusion
import Shared

/// `aggregator replay`: merges JSONL message logs (what `edge-agent --dry-run`
/// writes) by time and runs the aggregator core on a virtual clock, returning
/// every message it would publish with its virtual time. Deterministic.
public enum ReplayRunner {
    /// Problems met while reading the inputs (bad lines are skipped, not fatal).
    public struct Report: Sendable, Equatable {
        public var linesRead = 0
        public var badLines: [String] = []
        public var rejected: [InputIntake.Rejection: UInt64] = [:]
        public var published = 0

        public init() {}
    }

    /// Reads and merges several JSONL files by `ts` (stable: ties keep file order).
    public static func mergedInputs(paths: [String], report: inout Report) throws -> [MessageLogLine] {
        try mergedInputs(logs: paths.map { path in (name: path, text: try String(contentsOfFile: path, encoding: .utf8)) },
                         report: &report)
    }

    /// Merges several JSONL logs, each named for the problems it reports (a file's path), by
    /// `ts` (stable: ties keep log order). What `aggregator replay` does with its files, for
    /// logs already in memory (an evaluation's in-process `edge-agent --dry-run` runs).
    public static func mergedInputs(logs: [(name: String, text: String)], report: inout Report) -> [MessageLogLine] {
        var all: [(MessageLogLine, Int)] = []
        var order = 0
        for (path, text) in logs {
            var lineNo = 0
            for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
                lineNo += 1
                report.linesRead += 1
                do {
                    all.append((try MessageLogLine.decode(String(line)), order))
                    order += 1
                } catch {
                    if report.badLines.count < 100 { report.badLines.append("\(path):\(lineNo): \(error)") }
                }
            }
        }
        all.sort { $0.0.ts != $1.0.ts ? $0.0.ts < $1.0.ts : $0.1 < $1.1 }
        return all.map(\.0)
    }

    /// Runs `core` over `inputs`, handing each output line to `emit`.
    public static func run<E: PresenceEstimator & Sendable>(
        core: inout AggregatorCore<E>, inputs: [MessageLogLine], report: inout Report,
        emit: (MessageLogLine) -> Void
    ) throws {
        guard let first = inputs.first else { return }
        for m in try core.start(now: first.ts) {
            emit(MessageLogLine(ts: first.ts, message: m)); report.published += 1
        }
        for line in inputs {
            let (messages, _) = try core.handle(topic: line.topic, payload: line.payload, now: line.ts)
            for m in messages {
                emit(MessageLogLine(ts: Self.messageTime(m, fallback: line.ts), message: m)); report.published += 1
            }
        }
        if let last = inputs.last {
            // Let the final decisions (including going away) settle.
            let end = last.ts + core.tickInterval
            for m in try core.advance(to: end) {
                emit(MessageLogLine(ts: Self.messageTime(m, fallback: end), message: m)); report.published += 1
            }
        }
        report.rejected = core.intake.rejected
    }

    /// The decision time carried by a presence/room/event payload, so ticks
    /// that fell due before an input keep their own virtual time.
    static func messageTime(_ m: OutboundMessage, fallback: Double) -> Double {
        struct TS: Decodable { let ts: Double? }
        guard m.payload.first == UInt8(ascii: "{"),
              let ts = try? JSONDecoder().decode(TS.self, from: Data(m.payload)).ts else { return fallback }
        return ts
    }
}
