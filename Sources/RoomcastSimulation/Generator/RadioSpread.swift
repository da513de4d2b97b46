import Foundation
import RoomcastAdvertising
import Shared

/// How much one link's 1-s mean RSSI varies within 6 s, for a tag that has stopped and
/// for one that moves slowly: the statistic `scripts/analyse-shadowing.py` reports for
/// the Kolakowski calibration robot, measured on the simulator's own radio.
///
/// Why: the single-reading spread of whole scenarios cannot be compared with the
/// recordings (their tag always moves, through its shadowing; simulated people mostly
/// stand), so it could not say which preset is realistic. A robot touring a simulated
/// home at the recorded robot's pace, packet rate and stops can.
public struct RadioSpread: Sendable, Equatable {
    /// Medians over every 6-s window and node (dB), and how many windows of each kind.
    public var stopped: Double
    public var moving: Double
    public var stoppedWindows: Int
    public var movingWindows: Int
    /// Packet to packet (dB): the standard deviation of the difference between a node's
    /// consecutive packets (at most 0.5 s apart), and how often the two are equal, while the
    /// tag stands (under 2 cm travelled from a second before to a second after) and while
    /// it moves (over 20 cm). Fading that stays while nothing moves (multipath, different
    /// on each advertising channel) shows here and not in the 1-s means.
    public var stoppedStep = Double.nan
    public var movingStep = Double.nan
    public var stoppedRepeats = Double.nan
    public var movingRepeats = Double.nan

    public init(stopped: Double, moving: Double, stoppedWindows: Int, movingWindows: Int,
                stoppedStep: Double = .nan, movingStep: Double = .nan,
                stoppedRepeats: Double = .nan, movingRepeats: Double = .nan) {
        self.stopped = stopped
        self.moving = moving
        self.stoppedWindows = stoppedWindows
        self.movingWindows = movingWindows
        self.stoppedStep = stoppedStep
        self.movingStep = movingStep
        self.stoppedRepeats = stoppedRepeats
        self.movingRepeats = movingRepeats
    }

    /// The Kolakowski calibration robot (`python3 scripts/analyse-shadowing.py
    /// ../shared/data/rssi calib`): 1.3 dB stopped over 11 windows, 2.4 dB moving over 221;
    /// it moved about 1 m per 6 s (median of its moving windows) and each anchor received
    /// about 6 packets a second. Packet to packet (`python3 scripts/analyse-fading.py
    /// ../shared/data/rssi calib`): 8.52 dB standing (7,005 pairs, 9.2 % equal), 8.97 dB
    /// moving (38,643 pairs, 5.5 % equal).
    public static let recording = RadioSpread(stopped: 1.3, moving: 2.4, stoppedWindows: 11, movingWindows: 221,
                                              stoppedStep: 8.52, movingStep: 8.97,
                                              stoppedRepeats: 0.092, movingRepeats: 0.055)
    public static let recordingSpeed = 1.0 / 6
    public static let recordingPacketRate = 6.0
}

extension ScenarioSimulator {
    /// Tours a robot over the ground floor of `settings.plan` in the world of these
    /// settings (the same nodes, offsets and shadowing fields as `run()`), straight legs
    /// at `speed` m/s between random points with a `stop`-second pause at each,
    /// advertising often enough that each node receives about `packetRate` packets a
    /// second; then classifies 6-s windows as the script does (under 0.1 m travelled:
    /// stopped; over 0.3 m: moving) and returns the median spread of each kind.
    public func radioSpread(speed: Double = RadioSpread.recordingSpeed, stop: Double = 20,
                            packetRate: Double = RadioSpread.recordingPacketRate) -> RadioSpread {
        let s = settings
        let world = makeWorld()
        var rng = SeededRandom(seed: s.seed, stream: "radio-spread-robot")
        let rooms = s.plan.rooms.filter { $0.floor == 0 }
        guard !rooms.isEmpty, speed > 0, packetRate > 0 else {
            return RadioSpread(stopped: .nan, moving: .nan, stoppedWindows: 0, movingWindows: 0)
        }
        var legs: [Trajectory.Leg] = []
        var t = 0.0
        var pos = Trajectory.randomPoint(in: rooms[rng.index(rooms.count)], rng: &rng)
        while t < s.duration {
            legs.append(.init(t0: t, t1: t + stop, from: pos, to: pos, floor: 0, present: true))
            t += stop
            let next = Trajectory.randomPoint(in: rooms[rng.index(rooms.count)], rng: &rng)
            let seconds = max(pos.distance(to: next) / speed, 1)
            legs.append(.init(t0: t, t1: t + seconds, from: pos, to: next, floor: 0, present: true))
            t += seconds
            pos = next
        }
        let trajectory = Trajectory(legs: legs)
        let interval = (1 - s.radio.lossProbability) / packetRate
        let (uuid, _) = Self.randomUUID(randomBytes(16, stream: "radio-spread-uuid"))
        let id = BeaconID.iBeacon(uuid: uuid, major: 1, minor: 1)
        let beacon = ScenarioBeacon(id: id, name: "robot", kind: "ibeacon", measuredPower: -59, interval: interval, mobile: true)
        let robot = Transmitter(beacon: beacon, trajectory: trajectory, power: -59, tracked: false, rotation: nil,
                                advertiser: SimulatedAdvertiser(id: id, address: .fixed(staticAddress(for: id), random: true),
                                                                eventType: 0x03, data: []))
        let packets = simulatePackets(robot, nodes: world.nodes, offsets: world.offsets, fields: world.fields,
                                      channelFields: world.channelFields, walls: world.walls)

        // Per node, its packets' (time from start, rssi), in time order.
        var byNode: [String: [(t: Double, rssi: Double)]] = [:]
        for p in packets { byNode[p.node, default: []].append((p.t - s.t0, Double(p.rssi))) }
        var stopped: [Double] = [], moving: [Double] = []
        var stoppedWindows = 0, movingWindows = 0
        var start = 0.0
        while start + 6 <= s.duration {
            let travelled = Self.pathLength(trajectory, from: start, to: start + 6)
            let still = travelled < 0.1
            if still || travelled > 0.3 {
                if still { stoppedWindows += 1 } else { movingWindows += 1 }
                for (_, list) in byNode {
                    guard let spread = Self.spreadOfSecondMeans(list, from: start) else { continue }
                    if still { stopped.append(spread) } else { moving.append(spread) }
                }
            }
            start += 6
        }
        // Packet to packet.
        var steps: (stopped: [Double], moving: [Double]) = ([], [])
        for (_, list) in byNode.sorted(by: { $0.key < $1.key }) {
            for k in list.indices.dropFirst() where list[k].t - list[k - 1].t <= 0.5 {
                let travelled = Self.pathLength(trajectory, from: max(0, list[k - 1].t - 1), to: min(s.duration, list[k].t + 1))
                let step = list[k].rssi - list[k - 1].rssi
                if travelled < 0.02 { steps.stopped.append(step) } else if travelled > 0.2 { steps.moving.append(step) }
            }
        }
        func sd(_ v: [Double]) -> Double {
            guard v.count > 1 else { return .nan }
            let m = v.reduce(0, +) / Double(v.count)
            return (v.map { ($0 - m) * ($0 - m) }.reduce(0, +) / Double(v.count)).squareRoot()
        }
        func repeats(_ v: [Double]) -> Double { v.isEmpty ? .nan : Double(v.filter { $0 == 0 }.count) / Double(v.count) }
        return RadioSpread(stopped: Self.median(stopped), moving: Self.median(moving),
                           stoppedWindows: stoppedWindows, movingWindows: movingWindows,
                           stoppedStep: sd(steps.stopped), movingStep: sd(steps.moving),
                           stoppedRepeats: repeats(steps.stopped), movingRepeats: repeats(steps.moving))
    }

    /// Distance travelled between `t0` and `t1`, sampled every 0.1 s.
    static func pathLength(_ trajectory: Trajectory, from t0: Double, to t1: Double) -> Double {
        var length = 0.0
        var last = trajectory.position(at: t0)?.point
        var t = t0 + 0.1
        while t <= t1 + 1e-9 {
            let p = trajectory.position(at: t)?.point
            if let a = last, let b = p { length += a.distance(to: b) }
            last = p
            t += 0.1
        }
        return length
    }

    /// The population standard deviation of the 1-s means (seconds with at least two
    /// packets) in the 6 s from `start`, when at least five seconds have one; else nil.
    static func spreadOfSecondMeans(_ list: [(t: Double, rssi: Double)], from start: Double) -> Double? {
        var lo = 0, hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if list[mid].t < start { lo = mid + 1 } else { hi = mid }
        }
        var means: [Double] = []
        var i = lo
        for second in 0..<6 {
            let end = start + Double(second + 1)
            var sum = 0.0, count = 0
            while i < list.count && list[i].t < end {
                sum += list[i].rssi
                count += 1
                i += 1
            }
            if count >= 2 { means.append(sum / Double(count)) }
        }
        guard means.count >= 5 else { return nil }
        let mean = means.reduce(0, +) / Double(means.count)
        return (means.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(means.count)).squareRoot()
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
}
