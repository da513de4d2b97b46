import Foundation
import Shared

/// How a still beacon's links vary over minutes: for each link (one spot and one node that
/// hears it at `floor` dBm or louder on average), the semivariance of the link's 1-s mean RSSI at
/// a lag of L seconds, ½·mean((m(t + L) − m(t))²), the median over links, for each of `lags`.
///
/// Why: a still beacon's room evidence follows whatever its links do over tens of seconds. Flat
/// in L, each second's level is new noise about the spot's own level, and a spot's evidence
/// settles; rising with L, a shadowing drifts with time and carries the evidence with it. The
/// simulator's drift (`RadioModel.driftSigma`, `driftTime`) is the rising part; the Kolakowski
/// robot's stops (6 s at most) cannot tell it, the Daniş office's still spots (10–30 min each)
/// can. `roomcast-bench radio` prints both.
public struct StillLinkDrift: Sendable, Equatable {
    public static let lags = [1, 4, 16, 64, 256]
    /// Median over links, dB², one per lag of `lags`.
    public var semivariance: [Double]
    public var links: Int

    public init(semivariance: [Double], links: Int) {
        self.semivariance = semivariance
        self.links = links
    }

    /// How much more the levels differ 256 s apart than 4 s apart, dB²: what drifts.
    public var drift: Double { semivariance[4] - semivariance[1] }

    /// The statistic over `packets`, a still beacon's: each node's packets form one link per
    /// stretch without a silence of `gap` seconds or more (a spot, in a recording of spots).
    public static func measure(_ packets: [RawPacket], gap: Double = 60, floor: Double = -90) -> StillLinkDrift {
        var byNode: [String: [RawPacket]] = [:]
        for p in packets { byNode[p.node, default: []].append(p) }
        var perLag = Array(repeating: [Double](), count: lags.count)
        var links = 0
        for (_, list) in byNode.sorted(by: { $0.key < $1.key }) {
            var start = 0
            for k in list.indices where k == list.count - 1 || list[k + 1].t - list[k].t >= gap {
                let stretch = list[start...k]
                start = k + 1
                guard let first = stretch.first else { continue }
                // Whole seconds from the stretch's first packet: sum and count per second.
                var sums: [Int: (Double, Int)] = [:]
                for p in stretch {
                    let second = Int((p.t - first.t).rounded(.down))
                    let (sum, n) = sums[second] ?? (0, 0)
                    sums[second] = (sum + Double(p.rssi), n + 1)
                }
                guard sums.count >= 300 else { continue }
                let means = sums.mapValues { $0.0 / Double($0.1) }
                guard means.values.reduce(0, +) / Double(means.count) >= floor else { continue }
                links += 1
                for (i, lag) in lags.enumerated() {
                    var total = 0.0, n = 0
                    for (second, m) in means {
                        guard let later = means[second + lag] else { continue }
                        total += (later - m) * (later - m)
                        n += 1
                    }
                    if n >= 50 { perLag[i].append(total / Double(n) / 2) }
                }
            }
        }
        return StillLinkDrift(semivariance: perLag.map { ScenarioSimulator.median($0) }, links: links)
    }
}

extension ScenarioSimulator {
    /// A still beacon at `spots` random points of the ground floor of `settings.plan`, `seconds`
    /// at each, advertising every `interval` s, in the world of these settings (its nodes,
    /// offsets, shadowing and drift), measured as `StillLinkDrift.measure` measures a recording.
    public func stillLinkDrift(spots: Int = 30, seconds: Double = 600, interval: Double = 0.5) -> StillLinkDrift {
        var s = settings
        s.duration = seconds
        let simulator = ScenarioSimulator(settings: s)
        let world = simulator.makeWorld()
        var rng = SeededRandom(seed: s.seed, stream: "still-link-drift")
        let rooms = s.plan.rooms.filter { $0.floor == 0 }
        guard !rooms.isEmpty, spots > 0, seconds > 0 else { return StillLinkDrift(semivariance: [], links: 0) }
        let (uuid, _) = Self.randomUUID(simulator.randomBytes(16, stream: "still-link-drift-uuid"))
        var packets: [RawPacket] = []
        for spot in 0..<spots {
            let point = Trajectory.randomPoint(in: rooms[rng.index(rooms.count)], rng: &rng)
            let id = BeaconID.iBeacon(uuid: uuid, major: 1, minor: UInt16(spot))
            let beacon = ScenarioBeacon(id: id, name: nil, kind: "ibeacon", measuredPower: -59, interval: interval, mobile: false)
            let still = Transmitter(beacon: beacon, trajectory: .fixed(at: point, floor: 0, duration: seconds), power: -59,
                                    tracked: false, rotation: nil,
                                    advertiser: SimulatedAdvertiser(id: id, address: .fixed(simulator.staticAddress(for: id), random: true),
                                                                    eventType: 0x03, data: []),
                                    height: 1.85)
            // Spots one after another, as the recording's: a silence between them splits the links.
            let offset = Double(spot) * (seconds + 120)
            packets += simulator.simulatePackets(still, nodes: world.nodes, offsets: world.offsets, fields: world.fields,
                                       channelFields: world.channelFields, walls: world.walls)
                .map { var p = $0; p.t += offset; return p }
        }
        return StillLinkDrift.measure(packets)
    }
}
