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
        /// Lines skipped because they do not decode, counted; `badLines` keeps the first few.
        public var badLineCount = 0
        /// The first `maximumBadLinesKept` bad lines, each with its file and line number.
        public var badLines: [String] = []
        public var rejected: [InputIntake.Rejection: UInt64] = [:]
        /// Retained learn commands refused, as live (they would run again at every start).
        public var retainedLearnRefused = 0
        public var published = 0
        /// Gaps between two lines longer than a day, each named by the lines around it (the
        /// first few): a line stamped before a Pi's clock was set starts the replay's clock
        /// decades early, and every listed beacon is published away at its start.
        public var longGaps: [String] = []
        /// Gaps in a recording whose nodes send heartbeats: nothing at all for longer than
        /// `DeafTime.pauseThreshold`, then retained messages again, as a recorder gets them when it connects
        /// anew: the recorder heard nothing (its broker connection lost), not every node going
        /// quiet. Replayed as live: no decision meanwhile, and no silence counted against any
        /// beacon. The first few, each as its start time and length.
        public var deafGaps: [String] = []
        public var deafGapCount = 0

        public init() {}

        /// Bad lines described at most (the rest are counted only).
        public static var maximumBadLinesKept: Int { 100 }

        mutating func skipped(_ line: String) {
            badLineCount += 1
            if badLines.count < Self.maximumBadLinesKept { badLines.append(line) }
        }
    }

    /// Reads and merges several JSONL files by `ts` (stable: ties keep file order).
    /// A line that is not UTF-8 is a bad line of its own; the rest of its file is read.
    public static func mergedInputs(paths: [String], report: inout Report) throws -> [MessageLogLine] {
        try merged(logs: paths.map { path in (name: path, bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))) },
                   report: &report)
    }

    /// Merges several JSONL logs, each named for the problems it reports (a file's path), by
    /// `ts` (stable: ties keep log order). What `aggregator replay` does with its files, for
    /// logs already in memory (an evaluation's in-process `edge-agent --dry-run` runs).
    public static func mergedInputs(logs: [(name: String, text: String)], report: inout Report) -> [MessageLogLine] {
        merged(logs: logs.map { (name: $0.name, bytes: Array($0.text.utf8)) }, report: &report)
    }

    /// A gap between two input lines longer than this is reported (`Report.longGaps`).
    static var longestGap: Double { 86_400 }

    /// Seconds after a gap in which a reconnected recorder's retained messages arrive. In a
    /// recording with heartbeats (every node sends one a second), no line at all for longer than
    /// `DeafTime.pauseThreshold`, followed within this by a retained message, is the recorder's
    /// deafness (`Report.deafGaps`), and decisions resume `DeafTime.reconnectGrace` later, as
    /// live. Without the retained message the nodes went quiet (a Wi-Fi outage, the one node
    /// rebooting), and the replay says so as the live aggregator did.
    static var reconnectWindow: Double { 2 }

    /// Lines end at LF; a CR before it (a file saved with Windows line ends) is part of the end.
    private static func merged(logs: [(name: String, bytes: [UInt8])], report: inout Report) -> [MessageLogLine] {
        var all: [(line: MessageLogLine, order: Int, log: Int, lineNo: Int)] = []
        var order = 0
        for (logIndex, (path, bytes)) in logs.enumerated() {
            var lineNo = 0
            // A byte-order mark (a file saved by a Windows editor) is not part of the first line.
            let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
            for raw in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                lineNo += 1
                let line = raw.last == UInt8(ascii: "\r") ? raw.dropLast() : raw
                guard !line.isEmpty else { continue }
                report.linesRead += 1
                guard let text = String(validating: line, as: UTF8.self) else {
                    report.skipped("\(path):\(lineNo): not UTF-8")
                    continue
                }
                do {
                    all.append((try MessageLogLine.decode(text), order, logIndex, lineNo))
                    order += 1
                } catch {
                    report.skipped("\(path):\(lineNo): \(error)")
                }
            }
        }
        all.sort { $0.line.ts != $1.line.ts ? $0.line.ts < $1.line.ts : $0.order < $1.order }
        for (a, b) in zip(all, all.dropFirst()) where b.line.ts - a.line.ts > Self.longestGap {
            if report.longGaps.count >= 10 { break }
            // Any two finite times: as a Double, a gap past Int's range is no trap.
            let gap = (b.line.ts - a.line.ts).rounded()
            report.longGaps.append("\(logs[a.log].name):\(a.lineNo) (ts \(a.line.ts)) is \(gap < 1e15 ? "\(Int(gap))" : "\(gap)") s before "
                                   + "the next line, \(logs[b.log].name):\(b.lineNo)")
        }
        return all.map(\.line)
    }

    /// Runs `core` over `inputs`, handing each output line to `emit`. Each line is taken as the
    /// live aggregator takes a message with its retain flag (`AggregatorCore.retainRule`), and
    /// the listed beacons never heard are published away when live they would be.
    public static func run<E: PresenceEstimator & Sendable>(
        core: inout AggregatorCore<E>, inputs: [MessageLogLine], report: inout Report,
        emit: (MessageLogLine) -> Void
    ) throws {
        guard let first = inputs.first else { return }
        func out(_ messages: [OutboundMessage], at t: Double) {
            for m in messages {
                emit(MessageLogLine(ts: Self.messageTime(m, fallback: t), message: m)); report.published += 1
            }
        }
        out(try core.start(now: first.ts), at: first.ts)
        // Live, once the resume window is over and the nodes have listened for the away timeout.
        let neverHeardFrom = first.ts + max(AggregatorCore<E>.resumeWindow, core.awayTimeout)
        var neverHeardPending = true
        var heartbeats = false, previous = first.ts
        for (index, line) in inputs.enumerated() {
            if heartbeats, line.ts - previous > DeafTime.pauseThreshold,
               inputs[index...].prefix(while: { $0.ts <= line.ts + Self.reconnectWindow }).contains(where: { $0.retain == true }) {
                // Ticks due in the gap are taken while deaf: no decision, and the engine counts no
                // silence from before `line.ts`.
                core.lostHearing(at: previous)
                out(try core.advance(to: line.ts), at: line.ts)
                core.regainedHearing(at: line.ts, grace: DeafTime.reconnectGrace)
                report.deafGapCount += 1
                if report.deafGaps.count < 10 {
                    // A log's times are any finite numbers: a gap past Int's range is shown as it is.
                    let gap = (line.ts - previous).rounded()
                    report.deafGaps.append("\(previous) for \(gap < 1e15 ? "\(Int(gap))" : "\(gap)") s")
                }
            }
            previous = max(previous, line.ts)
            // The suffix first: readings are nearly all the lines, and the parser splits the topic.
            if !heartbeats, line.topic.hasSuffix("/heartbeat"), case .nodeHeartbeat? = core.topics.parse(line.topic) { heartbeats = true }
            // Asked afresh at each line: the due time waits for the first node heard, and where the
            // site lists its nodes, comes sooner once the last of them is heard.
            if neverHeardPending, let heardDue = core.neverHeardDue, case let due = max(neverHeardFrom, heardDue), line.ts >= due {
                out(try core.advance(to: due), at: due)
                if let away = try core.awayForNeverHeard(now: due) {
                    out(away, at: due)
                    neverHeardPending = false
                }
            }
            switch core.retainRule(topic: line.topic, retained: line.retain, sinceStart: line.ts - first.ts) {
            case .refuseRetainedLearn:
                report.retainedLearnRefused += 1
            case .livePresence(let id):
                out(try core.otherPartitionsPresence(line.payload, id: id, now: line.ts), at: line.ts)
            case .handle:
                // A person's retained presence, read while resuming, as live (`AggregatorRuntime`).
                if line.retain == true, line.ts - first.ts <= AggregatorCore<E>.resumeWindow,
                   core.resumeRetainedPerson(topic: line.topic, payload: line.payload, now: line.ts) { continue }
                out(try core.handle(topic: line.topic, payload: line.payload, now: line.ts).messages, at: line.ts)
            }
        }
        if let last = inputs.last {
            // Let the final decisions (including going away) settle.
            let end = last.ts + core.tickInterval
            out(try core.advance(to: end), at: end)
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
