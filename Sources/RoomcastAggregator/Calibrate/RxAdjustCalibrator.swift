import Foundation
import Shared

/// What `aggregator calibrate` works out from one node's readings of a beacon held at a
/// known distance from it: the `rx_adjust` that makes the node read what the beacon's 1 m
/// power predicts there.
///
/// Why: a site whose nodes cannot calibrate one another (two nodes, or nodes without
/// positions or beacons of their own) keeps each receiver's bias in its evidence, and a
/// node that reads 8 dB high pulls beacons into its room. One beacon at 1 m from each node
/// in turn — the ESPresense and Bermuda way, CoreLocation's "measured power" the other way
/// round — measures every receiver against the same transmitter; carried round the node,
/// the median is of many spots, not the shadowing of one. Those spots still lie within a
/// metre or two of each other and share much of their shadowing, so the suggestion is off
/// by a few dB: worth setting for a receiver of another kind, not for the few dB receivers
/// of one kind differ by (docs/results.md, "Two receivers"); the report says so.
public struct RxAdjustCalibrator: Sendable {
    /// The outcome for the beacon judged.
    public struct Suggestion: Sendable, Equatable {
        public var node: String
        public var beacon: BeaconID
        public var name: String?
        public var readings: Int
        /// Median of the node's filtered RSSI readings, and their interquartile range (dB).
        public var median: Double
        public var spread: Double
        /// What the beacon should read at `distance` (dBm), from `power`.
        public var expected: Double
        public var power: Int
        /// Whether `power` is the config's (`beacons[].power`) or what the beacon advertises.
        public var powerFromConfig: Bool
        public var distance: Double
        /// The `rx_adjust` to set (dB, to 0.5), and the one the config has now.
        public var rxAdjust: Double
        public var currentRxAdjust: Double
    }

    /// Why there is no suggestion.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case nothingHeard(node: String, beacon: BeaconID?)
        case tooFewReadings(node: String, beacon: BeaconID, readings: Int, needed: Int)
        /// Without `--beacon`, the loudest beacon must stand out; these two did not.
        case ambiguous(node: String, loudest: BeaconID, loudestMedian: Double, next: BeaconID, nextMedian: Double)

        public var description: String {
            switch self {
            case let .nothingHeard(node, nil):
                return "\(node) reported no beacon: is its edge-agent running and publishing to this broker?"
            case let .nothingHeard(node, beacon?):
                return "\(node) did not report \(beacon): is the beacon on, and held by that node?"
            case let .tooFewReadings(node, beacon, readings, needed):
                return "\(node) reported \(beacon) only \(readings) times (\(needed) needed): listen longer (--seconds)"
            case let .ambiguous(node, loudest, a, next, b):
                return "\(node) hears \(loudest) (median \(Self.dB(a))) and \(next) (median \(Self.dB(b))) "
                    + "alike: name the one held by it with --beacon"
            }
        }

        static func dB(_ v: Double) -> String { String(format: "%.1f dBm", v) }
    }

    public let node: String
    /// The beacon held by the node; nil takes the loudest, if it stands out.
    public let beacon: BeaconID?
    public let distance: Double
    public let pathLossExponent: Double
    public let site: SiteModel
    /// Readings needed for a suggestion.
    public var minimumReadings = 10
    /// Without `--beacon`, how much louder (dB, medians) the loudest beacon must be than the next.
    public static let standOut = 6.0
    /// Readings kept per beacon and beacons followed: a flood cannot grow memory without bound.
    static let maxReadingsPerBeacon = 20_000
    static let maxBeacons = 1_000

    private var readings: [BeaconID: [Double]] = [:]
    private var advertisedPower: [BeaconID: Int] = [:]
    /// Readings ignored because the limits above were reached.
    public private(set) var dropped = 0

    public init(node: String, beacon: BeaconID?, distance: Double = 1, pathLossExponent: Double = 2, site: SiteModel) {
        self.node = node
        self.beacon = beacon
        self.distance = distance
        self.pathLossExponent = pathLossExponent
        self.site = site
    }

    /// Counts `reading` when it is the node's (and the beacon's, when one is named).
    public mutating func add(_ reading: BeaconReading) {
        guard reading.node == node, beacon == nil || reading.id == beacon, reading.rssiFiltered.isFinite else { return }
        if readings[reading.id] == nil && readings.count >= Self.maxBeacons { dropped += 1; return }
        guard readings[reading.id, default: []].count < Self.maxReadingsPerBeacon else { dropped += 1; return }
        readings[reading.id, default: []].append(reading.rssiFiltered)
        advertisedPower[reading.id] = reading.power
    }

    /// Readings so far of `id` (of every beacon when nil).
    public func count(of id: BeaconID? = nil) -> Int {
        id.map { readings[$0]?.count ?? 0 } ?? readings.values.reduce(0) { $0 + $1.count }
    }

    public func suggestion() -> Result<Suggestion, Problem> {
        let chosen: BeaconID
        if let beacon {
            chosen = beacon
        } else {
            // The beacon held at the node is the one it hears loudest; the loudest of a few
            // readings says little, so only beacons with enough readings compete.
            let ranked = readings.filter { $0.value.count >= minimumReadings }
                .map { (id: $0.key, median: Self.quantile($0.value, 0.5)) }
                .sorted { $0.median != $1.median ? $0.median > $1.median : $0.id < $1.id }
            guard let first = ranked.first else {
                guard let (id, values) = readings.max(by: { $0.value.count < $1.value.count }) else {
                    return .failure(.nothingHeard(node: node, beacon: nil))
                }
                return .failure(.tooFewReadings(node: node, beacon: id, readings: values.count, needed: minimumReadings))
            }
            if ranked.count > 1, first.median - ranked[1].median < Self.standOut {
                return .failure(.ambiguous(node: node, loudest: first.id, loudestMedian: first.median,
                                           next: ranked[1].id, nextMedian: ranked[1].median))
            }
            chosen = first.id
        }
        guard let values = readings[chosen], !values.isEmpty else { return .failure(.nothingHeard(node: node, beacon: chosen)) }
        guard values.count >= minimumReadings else {
            return .failure(.tooFewReadings(node: node, beacon: chosen, readings: values.count, needed: minimumReadings))
        }
        let known = site.beacons.first { $0.id == chosen }
        let power = known?.power ?? advertisedPower[chosen] ?? -59
        let expected = Double(power) - 10 * pathLossExponent * log10(distance)
        let median = Self.quantile(values, 0.5)
        return .success(Suggestion(
            node: node, beacon: chosen, name: known?.name, readings: values.count, median: median,
            spread: Self.quantile(values, 0.75) - Self.quantile(values, 0.25), expected: expected, power: power,
            powerFromConfig: known?.power != nil, distance: distance,
            rxAdjust: ((expected - median) * 2).rounded() / 2,
            currentRxAdjust: site.nodes.first { $0.name == node }?.rxAdjust ?? 0))
    }

    /// The `q` quantile of `values` (linear between order statistics); `values` not empty.
    static func quantile(_ values: [Double], _ q: Double) -> Double {
        let sorted = values.sorted()
        let position = q * Double(sorted.count - 1)
        let low = Int(position.rounded(.down)), high = Int(position.rounded(.up))
        return sorted[low] + (sorted[high] - sorted[low]) * (position - Double(low))
    }
}

extension RxAdjustCalibrator.Suggestion {
    /// What `aggregator calibrate` prints: the measurement, and the config line to set.
    public var report: String {
        let who = name.map { "\(beacon) (\($0))" } ?? beacon.rawValue
        let powerSource = powerFromConfig ? "its configured power" : "the power it advertises"
        let metres = String(format: "%g m", distance)
        let deviation = median - expected
        let reads = abs(deviation) < 0.25 ? "reads it as expected"
            : String(format: "reads %.1f dB %@", abs(deviation), deviation > 0 ? "high" : "low")
        var lines = [
            String(format: "%@ heard %@ %d times: median %.1f dBm, the middle half within %.1f dB.",
                   node, who, readings, median, spread),
            String(format: "At %@ it should read %.1f dBm (%d dBm at 1 m, %@): %@ %@.",
                   metres, expected, power, powerSource, node, reads),
        ]
        if spread > 6 {
            lines.append("The readings spread widely: keep the beacon at 1 m, in the open, and run it again.")
        }
        lines.append("Worth setting for a receiver of another kind (an external antenna, another adapter). "
            + "Between receivers of one kind the spots round a node differ by a few dB too, and teaching "
            + "the rooms (aggregator learn) gains more.")
        lines += [
            "",
            "Set in the aggregator's config (now \(String(format: "%g", currentRxAdjust))):",
            "nodes:",
            "  - name: \(node)",
            "    rx_adjust: \(String(format: "%g", rxAdjust))",
        ]
        return lines.joined(separator: "\n")
    }
}
