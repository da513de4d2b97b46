import Foundation
import Shared

/// Writes a generated scenario somewhere: `DirectoryScenarioWriter` (the whole directory),
/// `BTSnoopScenarioWriter` (per-node captures), `ScenarioConfigWriter` (site.yaml, agent.yaml).
public protocol ScenarioWriter {
    func write(_ generated: GeneratedScenario) throws
}

/// Writes layout.json, beacons.json, truth.jsonl, raw.jsonl (or raw.jsonl.gz), bound.jsonl
/// and, when nodes went silent, outages.jsonl into a directory, byte-for-byte
/// reproducibly; by default also
/// nodes/<node>.btsnoop and site.yaml / agent.yaml.
public struct DirectoryScenarioWriter: ScenarioWriter {
    public var directory: URL
    public var gzip: Bool
    /// Also write `nodes/<node>.btsnoop` (`BTSnoopScenarioWriter`).
    public var btsnoop: Bool
    /// Also write `site.yaml` and `agent.yaml` (`ScenarioConfigWriter`).
    public var configs: Bool

    public init(directory: URL, gzip: Bool = false, btsnoop: Bool = true, configs: Bool = true) {
        self.directory = directory
        self.gzip = gzip
        self.btsnoop = btsnoop
        self.configs = configs
    }

    public func write(_ generated: GeneratedScenario) throws {
        let s = generated.scenario
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        try encoder.encode(s.layout).write(to: directory.appendingPathComponent("layout.json"))
        try encoder.encode(s.beacons).write(to: directory.appendingPathComponent("beacons.json"))

        try Data(DirectoryScenarioWriter.truthLines(s.truth).utf8)
            .write(to: directory.appendingPathComponent("truth.jsonl"))
        let raw = Data(DirectoryScenarioWriter.rawLines(s.packets).utf8)
        let rawPlain = directory.appendingPathComponent("raw.jsonl")
        let rawGz = directory.appendingPathComponent("raw.jsonl.gz")
        if gzip {
            try Gzip.compress(raw).write(to: rawGz)
            try? FileManager.default.removeItem(at: rawPlain)
        } else {
            try raw.write(to: rawPlain)
            try? FileManager.default.removeItem(at: rawGz)
        }
        try Data(DirectoryScenarioWriter.boundLines(generated.bound).utf8)
            .write(to: directory.appendingPathComponent("bound.jsonl"))
        // Only scenarios with silent nodes have the file, so every other one stays as it was.
        let outages = directory.appendingPathComponent("outages.jsonl")
        if generated.outages.isEmpty {
            try? FileManager.default.removeItem(at: outages)
        } else {
            try Data(DirectoryScenarioWriter.outageLines(generated.outages).utf8).write(to: outages)
        }
        // A scenario written here before leaves nothing of its own: its nodes' captures (of other
        // nodes, or of a run with other seeds) would be replayed against this truth.
        let fm = FileManager.default
        let nodes = directory.appendingPathComponent("nodes")
        for name in (try? fm.contentsOfDirectory(atPath: nodes.path)) ?? [] where name.hasSuffix(".btsnoop") {
            try fm.removeItem(at: nodes.appendingPathComponent(name))
        }
        if btsnoop { try BTSnoopScenarioWriter(directory: directory).write(generated) }
        if configs {
            try ScenarioConfigWriter(directory: directory).write(generated)
        } else {
            for name in ["site.yaml", "agent.yaml"] { try? fm.removeItem(at: directory.appendingPathComponent(name)) }
        }
    }

    static func json(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            default:
                if c.value < 0x20 { out += String(format: "\\u%04x", c.value) } else { out.unicodeScalars.append(c) }
            }
        }
        return out + "\""
    }

    static func time(_ t: Double) -> String { String(format: "%.3f", t) }

    static func truthLines(_ truth: [TruthSpan]) -> String {
        truth.map { span in
            "{\"id\": \(json(span.id.rawValue)), \"t0\": \(time(span.t0)), \"t1\": \(time(span.t1)), \"room\": "
                + (span.room.map(json) ?? "null") + "}\n"
        }.joined()
    }

    static func rawLines(_ packets: [RawPacket]) -> String {
        var out = ""
        out.reserveCapacity(packets.count * 110)
        for p in packets {
            out += "{\"t\": \(time(p.t)), \"node\": \(json(p.node)), \"id\": \(json(p.id.rawValue)), \"rssi\": \(p.rssi)"
            if let mac = p.mac { out += ", \"mac\": \(json(mac))" }
            out += "}\n"
        }
        return out
    }

    static func outageLines(_ outages: [NodeOutage]) -> String {
        outages.map { "{\"node\": \(json($0.node)), \"t0\": \(time($0.t0)), \"t1\": \(time($0.t1))}\n" }.joined()
    }

    static func boundLines(_ bound: DecisionTimeline) -> String {
        bound.changes.keys.sorted().flatMap { id in
            bound.changes[id]!.map { c in
                "{\"id\": \(json(id.rawValue)), \"t\": \(time(c.t)), \"room\": " + (c.room.map(json) ?? "null") + "}\n"
            }
        }.joined()
    }
}

extension DecisionTimeline {
    /// Reads a `bound.jsonl` written by `DirectoryScenarioWriter`; nil when the file is absent.
    public static func load(boundIn directory: URL) throws -> DecisionTimeline? {
        let url = directory.appendingPathComponent("bound.jsonl")
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        struct Line: Decodable {
            var id: BeaconID
            var t: Double
            var room: String?
        }
        var timeline = DecisionTimeline()
        for line in try Scenario.decodeLines(Data(contentsOf: url), "bound.jsonl") as [Line] {
            timeline.record(line.id, room: line.room, at: line.t)
        }
        return timeline
    }
}
