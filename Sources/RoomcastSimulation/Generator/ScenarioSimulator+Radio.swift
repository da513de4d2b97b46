import Foundation
import RoomcastAdvertising
import Shared

/// The radio between a transmitter and the nodes: walls crossed, mean signal, losses, and the
/// packets each node hears.
extension ScenarioSimulator {
    func walls(between p: Point, _ q: Point, on floor: Int, _ walls: [Int: [(Point, Point)]]) -> Int {
        Set(crossings(between: p, q, on: floor, walls).map(\.at)).count
    }

    /// The wall pieces (index on `floor`) the straight path from `p` to `q` crosses, with
    /// where (5 cm cells): two collinear pieces meeting there are one wall.
    func crossings(between p: Point, _ q: Point, on floor: Int,
                   _ walls: [Int: [(Point, Point)]]) -> [(piece: Int, at: [Int])] {
        var out: [(piece: Int, at: [Int])] = []
        for (k, (a, b)) in (walls[floor] ?? []).enumerated() where Geometry.crosses(p, q, a, b) {
            let d = (q.x - p.x) * (b.y - a.y) - (q.y - p.y) * (b.x - a.x)
            guard d != 0 else { continue }
            let u = ((a.x - p.x) * (b.y - a.y) - (a.y - p.y) * (b.x - a.x)) / d
            out.append((k, [Int(((p.x + u * (q.x - p.x)) * 20).rounded()), Int(((p.y + u * (q.y - p.y)) * 20).rounded())]))
        }
        return out
    }

    func meanRSSI(_ tx: Transmitter, at p: Point, floor: Int, node: ScenarioLayout.Node,
                  walls w: [Int: [(Point, Point)]]) -> Double {
        tx.power + loss(at: p, floor: floor, node: node, walls: w, height: tx.height)
    }

    /// Noise-free received power from a 0 dBm (at 1 m) transmitter at `p` on `floor`,
    /// `height` metres above it.
    func loss(at p: Point, floor: Int, node: ScenarioLayout.Node, walls w: [Int: [(Point, Point)]],
              height: Double = 1.0) -> Double {
        let h = settings.plan.floorHeight
        let dz = (Double(node.floor) * h + node.z) - (Double(floor) * h + height)
        let d = ((node.x - p.x) * (node.x - p.x) + (node.y - p.y) * (node.y - p.y) + dz * dz).squareRoot()
        let wallFloor = node.floor == floor ? floor : node.floor
        guard settings.radio.wallLossSpread > 0 else {
            let crossings = walls(between: p, Point(node.x, node.y), on: wallFloor, w)
            return settings.radio.meanRSSI(power: 0, distance: d, walls: crossings, floors: abs(node.floor - floor))
        }
        return settings.radio.meanRSSI(power: 0, distance: d, walls: 0, floors: abs(node.floor - floor))
            - wallLoss(between: p, Point(node.x, node.y), on: wallFloor, w)
    }

    /// The summed loss of the walls between `p` and `q` when walls differ
    /// (`RadioModel.wallLossSpread`): each wall piece takes `wallLoss` plus its own
    /// deviation, drawn once per piece from the seed; collinear pieces meeting where the
    /// path crosses count once, as the thicker.
    func wallLoss(between p: Point, _ q: Point, on floor: Int, _ walls: [Int: [(Point, Point)]]) -> Double {
        var hits: [[Int]: Double] = [:]
        for (piece, at) in crossings(between: p, q, on: floor, walls) {
            var rng = SeededRandom(seed: settings.seed, stream: "wall-\(floor)-\(piece)")
            let loss = max(0, settings.radio.wallLoss + rng.gaussian() * settings.radio.wallLossSpread)
            hits[at] = max(hits[at] ?? 0, loss)
        }
        return hits.values.reduce(0, +)
    }

    func simulatePackets(_ tx: Transmitter, nodes: [ScenarioLayout.Node], offsets: [String: Double],
                         fields: [ShadowingField], channelFields: [[ShadowingField]] = [],
                         walls: [Int: [(Point, Point)]], silences: [[(t0: Double, t1: Double)]] = []) -> [RawPacket] {
        let s = settings, radio = s.radio
        // Another day's fading and losses are another day's.
        var rng = SeededRandom(seed: s.seed, stream: "radio-\(tx.beacon.id.rawValue)" + (s.day == 0 ? "" : "-day-\(s.day)"))
        let interval = tx.beacon.interval ?? 1
        var shadow = nodes.map { _ in rng.gaussian() * radio.driftSigma }
        // Which channel each packet arrives on: a stream of its own, so scenarios without
        // channel fading keep theirs.
        let frozen = channelFields.count == nodes.count
        var channelRNG = SeededRandom(seed: s.seed, stream: "channels-\(tx.beacon.id.rawValue)")
        var event = 0
        var lastT = 0.0
        var out: [RawPacket] = []
        var t = rng.uniform(0, interval)
        var address = tx.rotation.map { _ in ScenarioSimulator.rotatedAddress(tx.advertiser, &rng) }
        var nextRotation = tx.rotation ?? .infinity
        while t < s.duration {
            if t >= nextRotation, let r = tx.rotation {
                address = ScenarioSimulator.rotatedAddress(tx.advertiser, &rng)
                nextRotation += r
            }
            let dt = t - lastT
            lastT = t
            let rho = exp(-dt / radio.driftTime)
            let innovation = (1 - rho * rho).squareRoot() * radio.driftSigma
            if let (p, floor) = tx.trajectory.position(at: t) {
                let z = Double(floor) * s.plan.floorHeight + tx.height
                for (i, node) in nodes.enumerated() {
                    shadow[i] = rho * shadow[i] + innovation * rng.gaussian()
                    var fading = rng.gaussian() * radio.fadingSigma
                    if frozen {
                        let channel = radio.channelsInTurn ? (event + i) % 3 : channelRNG.index(3)
                        fading += channelFields[i][channel].value(x: p.x, y: p.y, z: z)
                    }
                    // Drawn only when on, so scenarios without deep fades keep their streams.
                    if radio.deepFadeProbability > 0 && rng.chance(radio.deepFadeProbability) {
                        fading -= rng.exponential(mean: radio.deepFadeDepth)
                    }
                    let lost = rng.chance(radio.lossProbability)
                    // A node does not hear its own advertising, nor anything while silent
                    // (after every draw, so the other packets stay as they were).
                    guard node.name != tx.node else { continue }
                    if i < silences.count, !silences[i].isEmpty {
                        let at = WireFormat.milliseconds(s.t0 + t)
                        if silences[i].contains(where: { $0.t0 <= at && at < $0.t1 }) { continue }
                    }
                    let spot = fields[i].value(x: p.x, y: p.y, z: z)
                    let rssi = meanRSSI(tx, at: p, floor: floor, node: node, walls: walls)
                        + (offsets[node.name] ?? 0) + spot + shadow[i] + fading
                    guard !lost, rssi >= radio.sensitivity else { continue }
                    out.append(RawPacket(t: WireFormat.milliseconds(s.t0 + t), node: node.name, id: tx.beacon.id,
                                         rssi: Int(min(rssi, -20).rounded()), mac: address))
                }
            } else {
                for i in shadow.indices { shadow[i] = rho * shadow[i] + innovation * rng.gaussian() }
            }
            // BLE adds 0–10 ms of random delay to every advertising event.
            t += interval + rng.uniform(0, 0.01)
            event += 1
        }
        return out
    }

    /// The next resolvable private address of a rotating advertiser, colon-separated:
    /// prand from the link's stream, hash from the advertiser's IRK.
    static func rotatedAddress(_ advertiser: SimulatedAdvertiser, _ rng: inout SeededRandom) -> String {
        // Six draws, as many as a fully random address takes, so the radio stream after a
        // rotation does not depend on how the address is built.
        let draws = (0..<6).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        var bytes = draws
        if case let .resolvable(irk) = advertiser.address,
           let rpa = ResolvablePrivateAddress.make(irk: irk, random: UInt32(draws[0]) << 16 | UInt32(draws[1]) << 8 | UInt32(draws[2])) {
            bytes = rpa
        } else {
            bytes[0] = (bytes[0] & 0x3F) | 0x40
        }
        return bytes.map { b in
            let h = String(b, radix: 16)
            return h.count == 1 ? "0" + h : h
        }.joined(separator: ":")
    }
}
