import Foundation

/// Receiver offsets learned from the spots where tracked beacons held still, for the
/// nodes no node beacon calibrates (`NodeCalibration` serves those).
///
/// Why: a receiver's bias judged against one position fix hides mostly in the position
/// (the fix moves away from a node that reads low, and its residual there shrinks), so
/// nudging offsets one confident fix at a time learned little, and what it learned
/// drifted (until stop 17: after 30 minutes further from the truth than no learning).
/// A beacon that held still is a transmitter at one spot: every node that heard it
/// measures `rssi = T + R − loss(spot, node) + e`, like a node's beacon but at an unknown
/// spot. Taken together, spots outnumber the unknowns: each spot's cell is the best fit
/// given the offsets; the offsets, and each spot's power, are the least-squares fit given
/// the cells; alternating the two converges where one fix at a time stalls. The spot's
/// slow shadowing is in every one of its links, so each spot counts once however long
/// the beacon lay there.
///
/// Pure and deterministic: spots are kept in the order their spells closed, open spells
/// in beacon order.
struct SpotCalibration {
    /// One still spell: each node's evidence summed over the seconds it counted, by
    /// engine node index.
    struct Spot {
        var sums: [Double] = []
        var seconds: [Double] = []
        /// Seconds the spell lasted.
        var total = 0.0
        /// The beacon's 1 m power as the engine knew it.
        var power = -59.0

        /// Nodes heard for at least half the spell, with their mean RSSI.
        func links() -> [(node: Int, mean: Double)] {
            var out: [(node: Int, mean: Double)] = []
            for n in sums.indices where seconds[n] > 0 && seconds[n] >= 0.5 * total { out.append((n, sums[n] / seconds[n])) }
            return out
        }
    }

    /// Spots solved over at most (closed and open together): bounds the cost of a solve
    /// on large sites. The oldest closed spot is dropped first.
    static let capacity = 256
    /// Links a spot needs: two fix its cell and power, the third says something about
    /// the receivers.
    static let minimumLinks = 3
    /// Alternations of placing the spots and fitting the offsets per solve; each solve
    /// starts from the last one's offsets, so they add up over time.
    static let rounds = 6
    /// A spell is checked for having moved (`spellMean`) once it has lasted this long
    /// (seconds): before, its means rest on a reading or two.
    static let settleSeconds = 5.0

    /// A spell counts once it has lasted this long (seconds).
    let minimumSeconds: Double
    private var spells: [Spot?] = []
    private(set) var spots: [Spot] = []
    private var oldest = 0

    init(minimumSeconds: Double) {
        self.minimumSeconds = minimumSeconds
    }

    /// Spots closed so far (at most `capacity`).
    var count: Int { spots.count }

    /// Adds `seconds` of what node `node` hears of beacon `beacon` (`rssi`: its evidence
    /// with `rx_adjust`, without any learned offset) to the beacon's current spell.
    mutating func accumulate(beacon: Int, node: Int, rssi: Double, seconds: Double, power: Double) {
        guard rssi.isFinite, seconds > 0, beacon >= 0, node >= 0 else { return }
        if beacon >= spells.count { spells += [Spot?](repeating: nil, count: beacon + 1 - spells.count) }
        if spells[beacon] == nil { spells[beacon] = Spot() }
        // Mutated in place: the spell's arrays stay uniquely referenced.
        if node >= spells[beacon]!.sums.count {
            let grow = node + 1 - spells[beacon]!.sums.count
            spells[beacon]!.sums += repeatElement(0, count: grow)
            spells[beacon]!.seconds += repeatElement(0, count: grow)
        }
        spells[beacon]!.sums[node] += seconds * rssi
        spells[beacon]!.seconds[node] += seconds
        spells[beacon]!.power = power
    }

    /// How long beacon `beacon`'s current spell has lasted (0 when none).
    func spellSeconds(beacon: Int) -> Double {
        beacon >= 0 && beacon < spells.count ? spells[beacon]?.total ?? 0 : 0
    }

    /// Node `node`'s mean in beacon `beacon`'s current spell, nil when it has none.
    func spellMean(beacon: Int, node: Int) -> Double? {
        guard beacon >= 0, beacon < spells.count, let spell = spells[beacon], node >= 0, node < spell.sums.count,
              spell.seconds[node] > 0 else { return nil }
        return spell.sums[node] / spell.seconds[node]
    }

    /// `seconds` more of beacon `beacon`'s spell have been accumulated.
    mutating func advance(beacon: Int, seconds: Double) {
        guard beacon >= 0, beacon < spells.count, spells[beacon] != nil else { return }
        spells[beacon]!.total += seconds
    }

    /// Ends beacon `beacon`'s spell (it moved, left, or its evidence lost its geometry);
    /// a spell long and wide enough becomes a spot.
    mutating func close(beacon: Int) {
        guard beacon >= 0, beacon < spells.count, let spot = spells[beacon] else { return }
        spells[beacon] = nil
        guard counts(spot) else { return }
        if spots.count < Self.capacity {
            spots.append(spot)
        } else {
            spots[oldest] = spot
            oldest = (oldest + 1) % Self.capacity
        }
    }

    private func counts(_ spot: Spot) -> Bool {
        spot.total >= minimumSeconds && spot.links().count >= Self.minimumLinks
    }

    /// The spots a solve uses: the closed ones, then spells still going on that count
    /// already, up to `capacity`.
    func usable() -> [Spot] {
        var all = spots
        for case let spell? in spells where all.count < Self.capacity && counts(spell) { all.append(spell) }
        return all
    }

    /// Each receiver's offset (dB it reads above the model) by engine node index; nil where
    /// fewer than `minimumSpots` spots could be placed with it.
    ///
    /// - Parameters:
    ///   - start: the offsets to start from (the last solution).
    ///   - fixed: offsets known otherwise (from the nodes' own beacons), kept as they are.
    ///   - priorSigma: the spread of receiver offsets before anything is learned (dB); it
    ///     also settles an offset common to every node, which no spot can tell from power.
    ///   - priorMean: where that prior is centred, per node (0 unless resumed from an
    ///     earlier run).
    ///   - place: the model of a spot's links at the cell that fits it best, given
    ///     measurements `rssi − offset − power` per node: each node's expected `rssi −
    ///     power` there and its weight (1/σ²); nil when the spot cannot be placed.
    func solve(nodeCount: Int, start: [Double], fixed: [Double?], priorSigma: Double, priorMean: [Double] = [],
               minimumSpots: Int = 3,
               place: (_ nodes: [Int], _ measurements: [Double]) -> [(expected: Double, weight: Double)]?) -> [Double?] {
        let spots = usable().map { (power: $0.power, links: $0.links().filter { $0.node < nodeCount }) }
        var offset = (0..<nodeCount).map { n in fixed[n] ?? (n < start.count ? start[n] : 0) }
        let prior = 1 / (priorSigma * priorSigma)
        struct Term { var spot: Int, node: Int, y: Double, w: Double }
        var terms: [Term] = []
        var placed = [Int](repeating: 0, count: nodeCount)
        var power = [Double](repeating: 0, count: spots.count)
        var sum = [Double](repeating: 0, count: max(spots.count, nodeCount))
        var weight = sum
        for round in 0..<Self.rounds {
            // Place every spot given the offsets.
            terms.removeAll(keepingCapacity: true)
            for (i, spot) in spots.enumerated() {
                let nodes = spot.links.map(\.node)
                let m = spot.links.map { $0.mean - offset[$0.node] - spot.power }
                guard let model = place(nodes, m), model.count == nodes.count else { continue }
                for (k, link) in spot.links.enumerated() where model[k].weight > 0 {
                    terms.append(Term(spot: i, node: link.node, y: link.mean - model[k].expected, w: model[k].weight))
                }
            }
            if round == 0 { for t in terms { placed[t.node] += 1 } }
            // The offsets and spot powers given the cells: alternating least squares.
            for _ in 0..<30 {
                for i in spots.indices { sum[i] = 0; weight[i] = 0 }
                for t in terms {
                    sum[t.spot] += t.w * (t.y - offset[t.node])
                    weight[t.spot] += t.w
                }
                for i in spots.indices where weight[i] > 0 { power[i] = sum[i] / weight[i] }
                for n in 0..<nodeCount { sum[n] = prior * (n < priorMean.count ? priorMean[n] : 0); weight[n] = prior }
                for t in terms {
                    sum[t.node] += t.w * (t.y - power[t.spot])
                    weight[t.node] += t.w
                }
                var moved = 0.0
                for n in 0..<nodeCount where fixed[n] == nil {
                    let next = sum[n] / weight[n]
                    moved = max(moved, abs(next - offset[n]))
                    offset[n] = next
                }
                if moved < 0.01 { break }
            }
        }
        return (0..<nodeCount).map { fixed[$0] == nil && placed[$0] >= minimumSpots ? offset[$0] : nil }
    }
}
