import Foundation
import Shared

/// The live "who is in which room" view of `aggregator watch`, built from the
/// retained presence topics any dashboard can read.
public struct PresenceBoard: Sendable {
    private var decisions: [BeaconID: PresenceDecision] = [:]
    private var rooms: [String: RoomOccupancy] = [:]
    /// At most this many beacons, and as many rooms (the aggregator's own `fusion.max_beacons`):
    /// the topics are open to any client the broker lets write them.
    public let limit: Int
    /// Beacons and rooms heard past the limit, and not shown.
    private(set) var leftOut = 0

    public init(limit: Int) { self.limit = limit }

    /// Takes one message from `<prefix>/presence/+` or `<prefix>/rooms/+`; ignores anything else.
    public mutating func take(topic: String, payload: [UInt8], topics: Topics) {
        switch topics.parse(topic) {
        case .presence(let id):
            if payload.isEmpty { decisions.removeValue(forKey: id); return }
            guard decisions[id] != nil || decisions.count < limit else { leftOut += 1; return }
            if let d = try? WireFormat.decode(PresenceDecision.self, from: payload) { decisions[id] = d }
        case .room(let name):
            if payload.isEmpty { rooms.removeValue(forKey: name); return }
            guard rooms[name] != nil || rooms.count < limit else { leftOut += 1; return }
            if let o = try? WireFormat.decode(RoomOccupancy.self, from: payload) { rooms[name] = o }
        default:
            break
        }
    }

    /// Rooms (sorted by floor, then name) with who is in each, then who is away.
    public func render(now: Double) -> String {
        var byRoom: [String: [PresenceDecision]] = [:]
        var away: [PresenceDecision] = []
        for d in decisions.values {
            if let r = d.room { byRoom[r, default: []].append(d) } else { away.append(d) }
        }
        var floorOf: [String: Int] = [:]
        for (name, o) in rooms { floorOf[name] = o.floor ?? 0 }
        for (name, ds) in byRoom where floorOf[name] == nil { floorOf[name] = ds.first?.floor ?? 0 }
        let names = floorOf.keys.sorted { (floorOf[$0]!, $0) < (floorOf[$1]!, $1) }
        var out = "ROOM              FLOOR  WHO\n"
        for name in names {
            let who = (byRoom[name] ?? []).sorted { label($0) < label($1) }
                .map { "\(label($0)) (\(Self.percent($0.confidence))%, \(Self.age(now - $0.since)))" }
            out += pad(ControlCharacters.replaced(in: name), 18) + pad("\(floorOf[name] ?? 0)", 7) + (who.isEmpty ? "-" : who.joined(separator: ", ")) + "\n"
        }
        let gone = away.map(label).sorted()
        out += "\nAWAY: " + (gone.isEmpty ? "-" : gone.joined(separator: ", ")) + "\n"
        if leftOut > 0 { out += "\n\(leftOut) messages of beacons or rooms past the first \(limit) of each were not shown\n" }
        return out
    }

    /// Names come from any retained payload on the broker: no control character reaches the terminal.
    private func label(_ d: PresenceDecision) -> String { ControlCharacters.replaced(in: d.name ?? d.id.rawValue) }

    private func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count) }

    // Both clamp before converting to Int: the numbers come from any retained payload on the
    // broker, and one beyond Int would trap the conversion and end `aggregator watch`.

    /// A confidence as a whole percentage (0–100).
    static func percent(_ confidence: Double) -> Int {
        Int((min(1, max(0, confidence)) * 100).rounded())
    }

    static func age(_ seconds: Double) -> String {
        let s = Int(min(max(0, seconds), 1e15))
        return s < 60 ? "\(s)s" : s < 3600 ? "\(s / 60)m" : "\(s / 3600)h"
    }
}
