import Foundation
import Shared

/// Generates a scenario from `SimulationSettings`: places nodes, moves people and
/// tags, and draws every packet through the `RadioModel`. Seeded and deterministic:
/// the same settings always give the same output.
public struct ScenarioSimulator: Sendable {
    public var settings: SimulationSettings

    public init(settings: SimulationSettings) { self.settings = settings }

    /// One simulated transmitter.
    struct Transmitter {
        var beacon: ScenarioBeacon
        var trajectory: Trajectory
        /// True 1 m power, dBm.
        var power: Double
        var tracked: Bool
        /// Rotating advertiser addresses (phones), nil = fixed.
        var rotation: Double?
    }

    public func run() -> GeneratedScenario {
        let s = settings
        var rng = SeededRandom(seed: s.seed)
        let nodes = placeNodes(&rng)
        let layout = ScenarioLayout(rooms: s.plan.rooms, nodes: nodes, t0: s.t0, duration: s.duration)
        var offsets: [String: Double] = [:]
        for n in nodes { offsets[n.name] = (rng.gaussian() * s.radio.receiverOffsetSigma * 10).rounded() / 10 }
        let transmitters = makeTransmitters(&rng)
        let walls = s.plan.walls()

        var packets: [RawPacket] = []
        for tx in transmitters {
            packets += simulatePackets(tx, nodes: nodes, offsets: offsets, walls: walls)
        }
        packets.sort { a, b in
            a.t != b.t ? a.t < b.t : (a.node != b.node ? a.node < b.node : a.id < b.id)
        }
        let tracked = transmitters.filter(\.tracked)
        var truth: [TruthSpan] = []
        var bound = DecisionTimeline()
        for tx in tracked {
            truth += truthSpans(tx, layout: layout)
            for k in stride(from: 1.0, through: s.duration, by: 1.0) {
                bound.record(tx.beacon.id, room: strongestRoom(tx, at: k, nodes: nodes, walls: walls), at: s.t0 + k)
            }
        }
        let scenario = Scenario(name: "\(s.plan.name)-\(s.seed)", layout: layout,
                                beacons: tracked.map(\.beacon), truth: truth, packets: packets)
        return GeneratedScenario(scenario: scenario, bound: bound, receiverOffsets: offsets)
    }

    // MARK: - Set-up

    /// One node per room (two in open spaces), off-centre, at 0.8–2.2 m.
    func placeNodes(_ rng: inout SeededRandom) -> [ScenarioLayout.Node] {
        var nodes: [ScenarioLayout.Node] = []
        for room in settings.plan.rooms {
            let count = settings.plan.doubleNodes.contains(room.name) ? 2 : 1
            let centre = Geometry.centre(room.outline)
            for i in 0..<count {
                // Keep the node out of the middle third: real receivers sit on shelves,
                // sockets and walls, often near the neighbour's wall.
                var p = Trajectory.randomPoint(in: room, rng: &rng, margin: 0.2)
                for _ in 0..<20 {
                    let o = room.outline
                    let w = (o.map(\.x).max()! - o.map(\.x).min()!) / 6, h = (o.map(\.y).max()! - o.map(\.y).min()!) / 6
                    if abs(p.x - centre.x) > w || abs(p.y - centre.y) > h { break }
                    p = Trajectory.randomPoint(in: room, rng: &rng, margin: 0.2)
                }
                let name = count == 1 ? "\(room.name)-pi" : "\(room.name)-pi\(i + 1)"
                nodes.append(ScenarioLayout.Node(name: name, room: room.name, floor: room.floor,
                                                 x: (p.x * 100).rounded() / 100, y: (p.y * 100).rounded() / 100,
                                                 z: (rng.uniform(0.8, 2.2) * 10).rounded() / 10))
            }
        }
        return nodes
    }

    func makeTransmitters(_ rng: inout SeededRandom) -> [Transmitter] {
        let s = settings
        var uuidBytes = (0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        uuidBytes[6] = (uuidBytes[6] & 0x0F) | 0x40
        uuidBytes[8] = (uuidBytes[8] & 0x3F) | 0x80
        let uuid = UUID(uuidString: BeaconID.uuidString(uuidBytes)) ?? UUID()
        var out: [Transmitter] = []
        for i in 0..<s.people {
            var trng = SeededRandom(seed: s.seed, stream: "person-\(i)")
            let path = Trajectory.walker(plan: s.plan, duration: s.duration, rng: &trng, meanStay: s.meanStay,
                                         leaveProbability: s.leaveProbability)
            let advertised = -59 - trng.index(5)
            let beacon = ScenarioBeacon(
                id: .iBeacon(uuid: uuid, major: UInt16(100 + i), minor: UInt16(truncatingIfNeeded: trng.next())),
                name: "person-\(i)", kind: "ibeacon", measuredPower: advertised,
                interval: i % 3 == 2 ? 1.0 : 0.2, mobile: true)
            out.append(Transmitter(beacon: beacon, trajectory: path,
                                   power: Double(advertised) + trng.gaussian() * s.radio.powerSpread,
                                   tracked: true, rotation: nil))
            if i < s.phones, let id = BeaconID.irk("phone-\(i)") {
                // A phone in the same pocket: no advertised power, a weaker antenna, rotating address.
                let phone = ScenarioBeacon(id: id, name: "phone-\(i)", kind: "device", measuredPower: nil,
                                           interval: 0.5, mobile: true)
                out.append(Transmitter(beacon: phone, trajectory: path, power: -64 + trng.gaussian() * 3,
                                       tracked: true, rotation: s.addressRotation))
            }
        }
        for i in 0..<s.staticTags {
            var trng = SeededRandom(seed: s.seed, stream: "tag-\(i)")
            let room = s.plan.rooms[trng.index(s.plan.rooms.count)]
            let p = Trajectory.randomPoint(in: room, rng: &trng)
            let advertised = -60 - trng.index(6)
            let id: BeaconID = i % 2 == 0
                ? .iBeacon(uuid: uuid, major: UInt16(200 + i), minor: UInt16(truncatingIfNeeded: trng.next()))
                : .eddystone(namespace: (0..<10).map { _ in UInt8(truncatingIfNeeded: trng.next()) },
                             instance: (0..<6).map { _ in UInt8(truncatingIfNeeded: trng.next()) })
            let beacon = ScenarioBeacon(id: id, name: "tag-\(i)", kind: i % 2 == 0 ? "ibeacon" : "eddystone",
                                        measuredPower: advertised, interval: i % 2 == 0 ? 1.0 : 2.0, mobile: false)
            out.append(Transmitter(beacon: beacon, trajectory: .fixed(at: p, floor: room.floor, duration: s.duration),
                                   power: Double(advertised) + trng.gaussian() * s.radio.powerSpread,
                                   tracked: true, rotation: nil))
        }
        for i in 0..<s.strangers {
            var trng = SeededRandom(seed: s.seed, stream: "stranger-\(i)")
            let room = s.plan.rooms[trng.index(s.plan.rooms.count)]
            // Neighbours' devices: just outside the outline, heard through a wall.
            var p = Trajectory.randomPoint(in: room, rng: &trng)
            p.x += trng.chance(0.5) ? 6 : -6
            let mac = (0..<6).map { _ in UInt8(truncatingIfNeeded: trng.next()) }
            let beacon = ScenarioBeacon(id: .mac(mac), name: nil, kind: "device", measuredPower: nil,
                                        interval: trng.uniform(0.1, 2), mobile: false)
            out.append(Transmitter(beacon: beacon, trajectory: .fixed(at: p, floor: room.floor, duration: s.duration),
                                   power: -60 + trng.gaussian() * 4, tracked: false, rotation: nil))
        }
        return out
    }

    // MARK: - Radio

    func walls(between p: Point, _ q: Point, on floor: Int, _ walls: [Int: [(Point, Point)]]) -> Int {
        var hits = Set<[Int]>()
        for (a, b) in walls[floor] ?? [] where Geometry.crosses(p, q, a, b) {
            // Where the path crosses; two collinear wall pieces meeting here count once.
            let d = (q.x - p.x) * (b.y - a.y) - (q.y - p.y) * (b.x - a.x)
            guard d != 0 else { continue }
            let u = ((a.x - p.x) * (b.y - a.y) - (a.y - p.y) * (b.x - a.x)) / d
            hits.insert([Int(((p.x + u * (q.x - p.x)) * 20).rounded()), Int(((p.y + u * (q.y - p.y)) * 20).rounded())])
        }
        return hits.count
    }

    func meanRSSI(_ tx: Transmitter, at p: Point, floor: Int, node: ScenarioLayout.Node,
                  walls w: [Int: [(Point, Point)]]) -> Double {
        let h = settings.plan.floorHeight
        let dz = (Double(node.floor) * h + node.z) - (Double(floor) * h + 1.0)
        let d = ((node.x - p.x) * (node.x - p.x) + (node.y - p.y) * (node.y - p.y) + dz * dz).squareRoot()
        let q = Point(node.x, node.y)
        let crossings = walls(between: p, q, on: node.floor == floor ? floor : node.floor, w)
        return settings.radio.meanRSSI(power: tx.power, distance: d, walls: crossings,
                                       floors: abs(node.floor - floor))
    }

    func simulatePackets(_ tx: Transmitter, nodes: [ScenarioLayout.Node], offsets: [String: Double],
                         walls: [Int: [(Point, Point)]]) -> [RawPacket] {
        let s = settings, radio = s.radio
        var rng = SeededRandom(seed: s.seed, stream: "radio-\(tx.beacon.id.rawValue)")
        let interval = tx.beacon.interval ?? 1
        var shadow = nodes.map { _ in rng.gaussian() * radio.shadowingSigma }
        var lastT = 0.0
        var out: [RawPacket] = []
        var t = rng.uniform(0, interval)
        var address = tx.rotation.map { _ in ScenarioSimulator.randomAddress(&rng) }
        var nextRotation = tx.rotation ?? .infinity
        while t < s.duration {
            if t >= nextRotation, let r = tx.rotation {
                address = ScenarioSimulator.randomAddress(&rng)
                nextRotation += r
            }
            let dt = t - lastT
            lastT = t
            let rho = exp(-dt / radio.shadowingTime)
            let innovation = (1 - rho * rho).squareRoot() * radio.shadowingSigma
            if let (p, floor) = tx.trajectory.position(at: t) {
                for (i, node) in nodes.enumerated() {
                    shadow[i] = rho * shadow[i] + innovation * rng.gaussian()
                    let fading = rng.gaussian() * radio.fadingSigma
                    let lost = rng.chance(radio.lossProbability)
                    let rssi = meanRSSI(tx, at: p, floor: floor, node: node, walls: walls)
                        + (offsets[node.name] ?? 0) + shadow[i] + fading
                    guard !lost, rssi >= radio.sensitivity else { continue }
                    out.append(RawPacket(t: WireFormat.milliseconds(s.t0 + t), node: node.name, id: tx.beacon.id,
                                         rssi: Int(min(rssi, -20).rounded()), mac: address))
                }
            } else {
                for i in shadow.indices { shadow[i] = rho * shadow[i] + innovation * rng.gaussian() }
            }
            // BLE adds 0–10 ms of random delay to every advertising event.
            t += interval + rng.uniform(0, 0.01)
        }
        return out
    }

    /// A random resolvable private address (top bits 01), colon-separated.
    static func randomAddress(_ rng: inout SeededRandom) -> String {
        var bytes = (0..<6).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        bytes[0] = (bytes[0] & 0x3F) | 0x40
        return bytes.map { b in
            let h = String(b, radix: 16)
            return h.count == 1 ? "0" + h : h
        }.joined(separator: ":")
    }

    // MARK: - Truth and bound

    func truthSpans(_ tx: Transmitter, layout: ScenarioLayout) -> [TruthSpan] {
        let s = settings
        var spans: [TruthSpan] = []
        var current: String?? = .none
        var since = 0.0
        var t = 0.0
        let step = 0.1
        while t < s.duration {
            var room: String?
            if let (p, floor) = tx.trajectory.position(at: t) {
                // On a wall line (between rooms) keep the previous room.
                room = layout.room(at: p, floor: floor)?.name ?? (current ?? nil)
            }
            if current == nil || current! != room {
                if let c = current, t > since {
                    spans.append(TruthSpan(id: tx.beacon.id, t0: s.t0 + since, t1: s.t0 + t, room: c))
                }
                current = .some(room)
                since = t
            }
            t = ((t + step) * 10).rounded() / 10
        }
        if let c = current {
            spans.append(TruthSpan(id: tx.beacon.id, t0: s.t0 + since, t1: s.t0 + s.duration, room: c))
        }
        return spans
    }

    func strongestRoom(_ tx: Transmitter, at t: Double, nodes: [ScenarioLayout.Node],
                       walls: [Int: [(Point, Point)]]) -> String? {
        guard let (p, floor) = tx.trajectory.position(at: t) else { return nil }
        var best: (rssi: Double, room: String?)?
        for node in nodes {
            let r = meanRSSI(tx, at: p, floor: floor, node: node, walls: walls)
            if best == nil || r > best!.rssi { best = (r, node.room) }
        }
        return best?.room
    }
}
