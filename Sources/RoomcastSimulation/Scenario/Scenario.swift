import Foundation
import Shared

/// A replayable scenario: layout, tracked beacons, ground truth and received packets
/// (a directory with layout.json, beacons.json, truth.jsonl, raw.jsonl[.gz]).
public struct Scenario: Sendable {
    public var name: String
    public var layout: ScenarioLayout
    public var beacons: [ScenarioBeacon]
    public var truth: [TruthSpan]
    /// Sorted by time (stable for equal times).
    public var packets: [RawPacket]

    public init(name: String, layout: ScenarioLayout, beacons: [ScenarioBeacon], truth: [TruthSpan],
                packets: [RawPacket]) {
        self.name = name
        self.layout = layout
        self.beacons = beacons
        self.truth = truth
        self.packets = Scenario.sortedStable(packets)
    }

    /// Why a scenario could not be loaded, naming the file and line.
    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Loads the scenario in `directory`; raw packets come from raw.jsonl.gz or raw.jsonl.
    public static func load(from directory: URL) throws -> Scenario {
        func file(_ name: String) -> URL { directory.appendingPathComponent(name) }
        func read(_ name: String) throws -> Data {
            do { return try Data(contentsOf: file(name)) } catch {
                throw LoadError(description: "\(file(name).path): cannot read (\(error.localizedDescription))")
            }
        }
        let layout: ScenarioLayout = try decode(read("layout.json"), "layout.json")
        let problems = layout.problems()
        guard problems.isEmpty else {
            throw LoadError(description: "layout.json: " + problems.joined(separator: "; "))
        }
        let beacons: [ScenarioBeacon] = try decode(read("beacons.json"), "beacons.json")
        let truth: [TruthSpan] = try decodeLines(read("truth.jsonl"), "truth.jsonl")
        if let problem = truthProblem(truth, layout: layout) { throw LoadError(description: "truth.jsonl: " + problem) }
        let raw: Data
        let fm = FileManager.default
        if fm.fileExists(atPath: file("raw.jsonl.gz").path) {
            raw = try Gzip.decompress(file: file("raw.jsonl.gz"))
        } else if fm.fileExists(atPath: file("raw.jsonl").path) {
            raw = try read("raw.jsonl")
        } else {
            throw LoadError(description: "\(directory.path): no raw.jsonl.gz or raw.jsonl")
        }
        let packets: [RawPacket] = try decodeLines(raw, "raw.jsonl")
        return Scenario(name: directory.lastPathComponent, layout: layout, beacons: beacons,
                        truth: truth, packets: packets)
    }

    /// Why `truth` cannot be scored against `layout`'s time, if it cannot: a span backwards, or
    /// outside the layout's time (a truth in milliseconds beside a layout in seconds would make
    /// scoring walk trillions of seconds).
    static func truthProblem(_ truth: [TruthSpan], layout: ScenarioLayout) -> String? {
        let end = layout.t0 + layout.duration
        for (k, span) in truth.enumerated() {
            func what() -> String { "span \(k + 1) (\(span.id), \(span.t0) … \(span.t1))" }
            guard span.t0.isFinite, span.t1.isFinite, span.t0 <= span.t1 else { return "\(what()) must run forwards" }
            guard span.t0 >= layout.t0 - 1, span.t1 <= end + 1 else {
                return "\(what()) lies outside the layout's time, \(layout.t0) … \(end) (seconds, like layout.json's t0 and duration)"
            }
        }
        return nil
    }

    /// The beacon entry for `id`, if tracked.
    public func beacon(_ id: BeaconID) -> ScenarioBeacon? {
        beacons.first { $0.id == id }
    }

    static func decode<T: Decodable>(_ data: Data, _ what: String) throws -> T {
        do { return try JSONDecoder().decode(T.self, from: data) } catch let e as DecodingError {
            throw LoadError(description: "\(what): \(WireFormatError.describe(e))")
        }
    }

    static func decodeLines<T: Decodable>(_ data: Data, _ what: String) throws -> [T] {
        let decoder = JSONDecoder()
        var out: [T] = []
        var lineNumber = 0
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) { continue }
            do { out.append(try decoder.decode(T.self, from: Data(line))) } catch let e as DecodingError {
                throw LoadError(description: "\(what):\(lineNumber): \(WireFormatError.describe(e))")
            }
        }
        return out
    }

    static func sortedStable(_ packets: [RawPacket]) -> [RawPacket] {
        if zip(packets, packets.dropFirst()).allSatisfy({ $0.t <= $1.t }) { return packets }
        return packets.enumerated().sorted { a, b in
            a.element.t != b.element.t ? a.element.t < b.element.t : a.offset < b.offset
        }.map(\.element)
    }
}
