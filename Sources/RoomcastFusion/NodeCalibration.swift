import Foundation

/// Receiver offsets learned from the nodes' own beacons (`nodes[].beacon`, the agent's
/// `advertise:`).
///
/// Why: learning a receiver's bias from tracked beacons means judging it against a
/// position that was itself estimated from that receiver and the others, in a spot
/// whose slow shadowing is unknown; the error mostly hides in the position. A node's
/// beacon sits at a *known* position, so every link between two nodes measures
/// `rssi = T_tx + R_rx − loss(tx, rx) + e`: the transmitter's power `T` (what it
/// really sends at 1 m), the receiver's offset `R`, the modelled path loss, and that
/// link's shadowing `e`. With a few nodes hearing each other there are many more links
/// than unknowns, and least squares separates the receivers' offsets from the
/// transmitters' powers. A Gaussian prior on `R` (receivers are typically a few dB off)
/// settles what the links cannot tell apart, such as an offset common to every node.
///
/// Pure and deterministic: links are kept in the order first heard.
struct NodeCalibration {
    /// The running mean RSSI of one transmitter → receiver link.
    struct Link {
        var tx: Int
        var rx: Int
        var mean = 0.0
        var count = 0
    }

    /// The readings a link's mean remembers at most: a node that is moved or re-housed
    /// is re-learned within about that many readings.
    static let memory = 600

    private(set) var links: [Link] = []
    private var index: [Int: Int] = [:]
    /// Each link's mean once it has `denseMinimum` readings, NaN before, at
    /// `tx * stride + rx`: the fingerprints read it for every evaluation.
    private var dense: [Double] = []
    private var stride = 0
    private var loudest: [Double] = []
    static let denseMinimum = 5

    var isEmpty: Bool { links.isEmpty }

    /// Takes one reading of `tx`'s beacon by node `rx` (engine node indices).
    mutating func observe(tx: Int, rx: Int, rssi: Double) {
        guard tx != rx, rssi.isFinite else { return }
        let key = tx << 20 | rx
        let i: Int
        if let known = index[key] {
            i = known
        } else {
            i = links.count
            index[key] = i
            links.append(Link(tx: tx, rx: rx))
        }
        links[i].count += 1
        links[i].mean += (rssi - links[i].mean) / Double(min(links[i].count, Self.memory))
        if max(tx, rx) >= stride { grow(to: max(max(tx, rx) + 1, 2 * stride, 8)) }
        if links[i].count >= Self.denseMinimum {
            dense[tx * stride + rx] = links[i].mean
            var top = -Double.infinity
            for t in 0..<stride where !dense[t * stride + rx].isNaN { top = max(top, dense[t * stride + rx]) }
            loudest[rx] = top
        }
    }

    private mutating func grow(to size: Int) {
        var table = [Double](repeating: .nan, count: size * size)
        for link in links where link.count >= Self.denseMinimum { table[link.tx * size + link.rx] = link.mean }
        dense = table
        stride = size
        loudest += [Double](repeating: -.infinity, count: size - loudest.count)
    }

    /// The strongest link mean into `rx` (the loudest other node it hears); -inf before any.
    func loudestHeard(by rx: Int) -> Double { rx < loudest.count ? loudest[rx] : -.infinity }

    /// The mean RSSI of `tx`'s beacon at `rx` once it has a few readings; nil before.
    func mean(tx: Int, rx: Int) -> Double? {
        guard tx < stride, rx < stride else { return nil }
        let m = dense[tx * stride + rx]
        return m.isNaN ? nil : m
    }

    /// Each receiver's offset (dB it reads above the model), by engine node index; nil
    /// where the links say nothing: fewer than two usable links into the node, a link
    /// being usable when it has `minReadings` readings, a model, and a transmitter that
    /// at least one other receiver hears too (otherwise its power absorbs the link).
    ///
    /// - Parameters:
    ///   - model: the modelled loss (dB, positive) and its uncertainty for a link, nil
    ///     when either node has no position.
    ///   - priorSigma: the spread of receiver offsets before any link is heard (dB).
    func solve(nodeCount: Int, minReadings: Int = 5, priorSigma: Double,
               model: (_ tx: Int, _ rx: Int) -> (loss: Double, sigma: Double)?) -> [Double?] {
        struct Usable { var tx: Int, rx: Int, y: Double, w: Double }
        var usable: [Usable] = []
        var receivers = [Int](repeating: 0, count: nodeCount)
        for link in links where link.count >= minReadings && link.tx < nodeCount && link.rx < nodeCount {
            guard let m = model(link.tx, link.rx), m.sigma > 0 else { continue }
            usable.append(Usable(tx: link.tx, rx: link.rx, y: link.mean + m.loss, w: 1 / (m.sigma * m.sigma)))
            receivers[link.tx] += 1
        }
        usable.removeAll { receivers[$0.tx] < 2 }
        guard !usable.isEmpty else { return [Double?](repeating: nil, count: nodeCount) }

        // Alternating least squares: each transmitter's power given the offsets, each
        // offset given the powers (with the prior). Converges in a few dozen rounds.
        let prior = 1 / (priorSigma * priorSigma)
        var power = [Double](repeating: 0, count: nodeCount)
        var offset = [Double](repeating: 0, count: nodeCount)
        var sum = [Double](repeating: 0, count: nodeCount), weight = sum
        for _ in 0..<50 {
            for i in 0..<nodeCount { sum[i] = 0; weight[i] = 0 }
            for u in usable {
                sum[u.tx] += u.w * (u.y - offset[u.rx])
                weight[u.tx] += u.w
            }
            for i in 0..<nodeCount where weight[i] > 0 { power[i] = sum[i] / weight[i] }
            for i in 0..<nodeCount { sum[i] = 0; weight[i] = prior }
            var moved = 0.0
            for u in usable {
                sum[u.rx] += u.w * (u.y - power[u.tx])
                weight[u.rx] += u.w
            }
            for i in 0..<nodeCount {
                let next = sum[i] / weight[i]
                moved = max(moved, abs(next - offset[i]))
                offset[i] = next
            }
            if moved < 0.01 { break }
        }
        var links = [Int](repeating: 0, count: nodeCount)
        for u in usable { links[u.rx] += 1 }
        return (0..<nodeCount).map { links[$0] >= 2 ? offset[$0] : nil }
    }
}
