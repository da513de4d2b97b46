import Foundation
import Shared

/// Writes the configs the rest of the system runs a generated scenario with:
/// `site.yaml` (the aggregator's `rooms:`, `nodes:`, `beacons:`) and `agent.yaml` (what
/// every edge agent needs to track the phones: `irks:`). Plain block YAML with every
/// string double-quoted, so names never need escaping rules beyond JSON's.
public struct ScenarioConfigWriter: ScenarioWriter {
    public var directory: URL

    public init(directory: URL) { self.directory = directory }

    public func write(_ generated: GeneratedScenario) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(Self.siteYAML(generated).utf8).write(to: directory.appendingPathComponent("site.yaml"))
        try Data(Self.agentYAML(generated).utf8).write(to: directory.appendingPathComponent("agent.yaml"))
    }

    /// `site.yaml`: rooms with their outlines, nodes with absolute positions (z = floor ×
    /// floor height + height above the floor) and `rx_adjust: 0` (calibration is the
    /// system's job, not the simulator's), tracked beacons with their 1 m power.
    public static func siteYAML(_ g: GeneratedScenario) -> String {
        siteYAML(g.scenario, floorHeight: g.floorHeight, comment: "Site of the simulated scenario \(g.scenario.name), written by roomcast-sim.")
    }

    /// The aggregator's config for any scenario (recorded sets have no site.yaml): as above;
    /// without `positions`, rooms by name and floor and nodes by room only (membership, the
    /// mode of a user who gives no coordinates); `rxAdjust` per node where given.
    public static func siteYAML(_ scenario: Scenario, floorHeight: Double = 3.0, positions: Bool = true,
                                rxAdjust: [String: Double] = [:], comment: String? = nil) -> String {
        let site = scenario.layout.siteModel(floorHeight: floorHeight)
        var out = "# \(comment ?? "Site of the scenario \(scenario.name)\(positions ? "" : ", without positions").")\n"
        out += "rooms:\n"
        for r in site.rooms {
            out += "  - name: \(quoted(r.name))\n    floor: \(r.floor)\n"
            if positions, let p = r.polygon { out += "    polygon: [\(p.map { "[\($0.map(number).joined(separator: ", "))]" }.joined(separator: ", "))]\n" }
            if positions, let plan = r.openPlan { out += "    open_plan: \(quoted(plan))\n" }
            if positions, let doorways = r.doorways, !doorways.isEmpty {
                let text = doorways.map { "[\($0.map { "[\($0.map(number).joined(separator: ", "))]" }.joined(separator: ", "))]" }
                out += "    doorways: [\(text.joined(separator: ", "))]\n"
            }
        }
        out += "nodes:\n"
        for n in site.nodes {
            out += "  - name: \(quoted(n.name))\n"
            if let room = n.room { out += "    room: \(quoted(room))\n" }
            if positions, let p = n.position { out += "    position: [\(p.map(number).joined(separator: ", "))]\n" }
            out += "    rx_adjust: \(number(rxAdjust[n.name] ?? n.rxAdjust))\n"
            if let beacon = n.beacon { out += "    beacon: \(quoted(beacon.rawValue))\n" }
        }
        out += scenario.beacons.isEmpty ? "beacons: []\n" : "beacons:\n"
        for b in scenario.beacons {
            out += "  - id: \(quoted(b.id.rawValue))\n"
            if let name = b.name { out += "    name: \(quoted(name))\n" }
            if let p = b.measuredPower { out += "    power: \(p)\n" }
        }
        return out
    }

    /// `agent.yaml`: the phones' Identity Resolving Keys (32 hex digits, most significant byte
    /// first, as `AdvertisingConfig.irks` takes them). No regions or known beacons, so every
    /// iBeacon and Eddystone-UID is tracked as well.
    public static func agentYAML(_ g: GeneratedScenario) -> String {
        var out = "# Tracking config for every node of the simulated scenario \(g.scenario.name), written by roomcast-sim.\n"
        out += "# Keys are secrets in a real home; these belong to simulated phones.\n"
        out += g.irks.isEmpty ? "irks: []\n" : "irks:\n"
        for k in g.irks {
            out += "  - name: \(quoted(k.name))\n    key: \(quoted(Hex.encode(k.key)))\n"
        }
        return out
    }

    /// A YAML double-quoted scalar (JSON string escaping is valid YAML).
    static func quoted(_ s: String) -> String { DirectoryScenarioWriter.json(s) }

    /// Whole numbers without a fraction, others with up to 3 decimals (centimetre layouts, mm z).
    static func number(_ v: Double) -> String {
        if v == v.rounded(), abs(v) < 1e15 { return String(Int(v)) }
        var s = String(format: "%.3f", v)
        while s.hasSuffix("0") { s.removeLast() }
        return s
    }
}
