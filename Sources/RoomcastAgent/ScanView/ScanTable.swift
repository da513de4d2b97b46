import Foundation
import RoomcastCLI
import Shared

/// The ranging table of `edge-agent scan`: the beacons in view, nearest first,
/// rendered as text (refreshed in place on a terminal) or as JSONL.
public struct ScanTable: Sendable {
    public struct Row: Sendable, Equatable {
        public var label: String
        public var kind: String
        public var rssi: Int
        public var filtered: Double
        public var distance: Double
        public var proximity: Proximity
        public var lastSeen: Double

        public init(label: String, kind: String, rssi: Int, filtered: Double, distance: Double, proximity: Proximity, lastSeen: Double) {
            self.label = label
            self.kind = kind
            self.rssi = rssi
            self.filtered = filtered
            self.distance = distance
            self.proximity = proximity
            self.lastSeen = lastSeen
        }
    }

    private var rows: [String: Row] = [:]

    public init() {}

    /// Updates the row of one reading.
    public mutating func update(_ r: BeaconReading) {
        rows[r.id.rawValue] = Row(label: r.name ?? r.id.rawValue, kind: r.kind.rawValue, rssi: r.rssi, filtered: r.rssiFiltered,
                                  distance: r.distance, proximity: r.proximity, lastSeen: r.ts)
    }

    /// Sets the row of one beacon (the agent builds the table from its beacon table).
    mutating func set(_ id: BeaconID, _ row: Row) {
        rows[id.rawValue] = row
    }

    /// Drops beacons not seen for `forgetAfter` seconds.
    public mutating func expire(now: Double, forgetAfter: Double) {
        rows = rows.filter { now - $0.value.lastSeen < forgetAfter }
    }

    /// Rows nearest first, those in view before those gone quiet (`unknown`, kept at their last
    /// distance until forgotten: a tag carried out of range is no nearest beacon), then by label,
    /// so the order is stable.
    public var sorted: [Row] {
        rows.values.sorted { a, b in
            let (aQuiet, bQuiet) = (a.proximity == .unknown, b.proximity == .unknown)
            if aQuiet != bQuiet { return bQuiet }
            return a.distance != b.distance ? a.distance < b.distance : a.label < b.label
        }
    }

    /// The table as text at `now`, at most `width` columns wide (the label column gives way, down
    /// to 12 characters: 67 columns in all).
    public func render(now: Double, width: Int = 80) -> String {
        let labelWidth = max(12, min(60, width - 55))
        var out = pad("BEACON", labelWidth) + " " + pad("KIND", 13) + pad("RSSI", 6, right: true) + pad("FILT", 8, right: true)
            + pad("DIST", 8, right: true) + "  " + pad("PROXIMITY", 10) + pad("SEEN", 7, right: true) + "\n"
        for r in sorted {
            let age = max(0, now - r.lastSeen)
            out += pad(Self.abbreviate(r.label, to: labelWidth), labelWidth) + " " + pad(r.kind, 13)
                + pad("\(r.rssi)", 6, right: true) + pad(String(format: "%.1f", r.filtered), 8, right: true)
                + pad(String(format: "%.2fm", r.distance), 8, right: true) + "  " + pad(r.proximity.rawValue, 10)
                + pad(String(format: "%.0fs", age), 7, right: true) + "\n"
        }
        if rows.isEmpty { out += "(no beacons in view)\n" }
        return out
    }

    /// Shortens a long id in the middle, keeping its end (major-minor, instance) readable; in
    /// terminal columns, so a name in wide characters fits as one in Latin letters does.
    static func abbreviate(_ label: String, to width: Int) -> String {
        guard TerminalWidth.of(label) > width, width > 3 else { return label }
        let tail = (width - 1) / 2
        let head = TerminalWidth.prefix(label, fitting: width - 1 - tail)
        return head + "…" + TerminalWidth.suffix(label, fitting: width - 1 - TerminalWidth.of(head))
    }

    private func pad(_ s: String, _ n: Int, right: Bool = false) -> String {
        let w = TerminalWidth.of(s)
        guard w < n else { return s }
        let fill = String(repeating: " ", count: n - w)
        return right ? fill + s : s + fill
    }
}
