import Foundation
import Shared

/// One beacon's position as a particle filter over the site's cells, with each
/// link's slow shadowing tracked per particle (a scalar Kalman filter per link and
/// particle: Rao–Blackwellised).
///
/// Why: shadowing (someone standing in the way, a door) lasts seconds and hits one
/// link; a move changes every link at once and in the pattern the geometry predicts.
/// The room-level filter counts each second's likelihood as independent, so a slow
/// excursion on one link looks like a move. Here each particle explains the
/// readings either by where it is or by its links' shadowing, and the AR(1) prior
/// on shadowing (`shadow_sigma`, `shadow_time`) sets how much of an excursion one
/// link can take on: a coherent change across links moves the particles, one link
/// drifting mostly moves its shadow. Slow movers are followed as the particles
/// drift, with no motion detector to miss them.
///
/// Deterministic: the generator is seeded from the beacon id.
struct ParticleRoomFilter {
    /// Links tracked per beacon (the strongest fresh nodes).
    static let links = 8

    private var cells: [Int32] = []
    /// Per particle and link slot (`particle * links + slot`), dB.
    private var shadow: [Float] = []
    private var weights: [Double] = []
    /// Per particle: the beacon's power offset from its advertised 1 m power (dB), and
    /// its variance (the same for every particle: it depends only on what was seen).
    private var power: [Float] = []
    private var powerVariance = 0.0
    /// Per particle: walking (true) or still; each mode persists (a jump-Markov
    /// motion model), so a beacon that sits still is tracked by still particles.
    private var walking: [Bool] = []
    private var linkNode = [Int](repeating: -1, count: links)
    private var linkVariance = [Double](repeating: 0, count: links)
    private var rng: SeededRandom
    private(set) var initialized = false

    init(seedFrom id: BeaconID) {
        rng = SeededRandom(seed: 0x726f_6f6d_6361_7374, stream: id.description)
    }

    /// Forgets everything (the beacon went away, or its evidence restarted).
    mutating func reset() {
        initialized = false
        for k in 0..<Self.links { linkNode[k] = -1 }
    }

    /// One step: predict over `dt` seconds, then weigh by the fresh links
    /// (`nodes[i]` heard at `measurements[i]` = RSSI minus learned offset minus the
    /// beacon's 1 m power, via geometry column `columns[i]`). Writes the log posterior
    /// of every room into `logPosterior` and returns the mean position.
    mutating func step(geometry g: SiteGeometry, nodes: [Int], columns: [Int], measurements: [Double],
                       rooms: [Int], dt: Double, settings: FusionSettings, scratch: inout Scratch,
                       logPosterior: inout [Double]) -> (x: Double, y: Double, z: Double) {
        let count = max(settings.particleCount, 8)
        if !initialized || cells.count != count {
            start(count: count, geometry: g, rooms: rooms, settings: settings)
        } else {
            predict(dt: dt, geometry: g, rooms: rooms, settings: settings)
        }
        assignLinks(nodes: nodes, columns: columns, measurements: measurements, settings: settings, scratch: &scratch)
        weigh(geometry: g, settings: settings, scratch: &scratch)

        // Room posterior and mean position.
        for r in logPosterior.indices { logPosterior[r] = 0 }
        var sx = 0.0, sy = 0.0, sz = 0.0
        for p in 0..<count {
            let c = Int(cells[p]), w = weights[p]
            let room = g.cellRoom[c]
            if room < logPosterior.count { logPosterior[room] += w }
            sx += w * g.cellX[c]; sy += w * g.cellY[c]; sz += w * g.cellZ[c]
        }
        let floorProbability = 0.5 / Double(count)
        for r in logPosterior.indices { logPosterior[r] = log(max(logPosterior[r], floorProbability)) }
        resampleIfDegenerate(count: count, scratch: &scratch)
        return (sx, sy, sz)
    }

    private mutating func start(count: Int, geometry g: SiteGeometry, rooms: [Int], settings: FusionSettings) {
        cells = [Int32](repeating: 0, count: count)
        shadow = [Float](repeating: 0, count: count * Self.links)
        weights = [Double](repeating: 1 / Double(count), count: count)
        power = [Float](repeating: 0, count: count)
        walking = [Bool](repeating: false, count: count)
        for p in 0..<count { walking[p] = rng.chance(settings.walkingShare) }
        powerVariance = settings.powerSigma * settings.powerSigma
        for p in 0..<count { cells[p] = Int32(randomCell(g, rooms: rooms)) }
        for k in 0..<Self.links {
            linkNode[k] = -1
            linkVariance[k] = settings.shadowSigma * settings.shadowSigma
        }
        initialized = true
    }

    private mutating func randomCell(_ g: SiteGeometry, rooms: [Int]) -> Int {
        var total = 0
        for r in rooms { total += g.roomEnd[r] - g.roomStart[r] }
        guard total > 0 else { return rng.index(g.cellCount) }
        var k = rng.index(total)
        for r in rooms {
            let n = g.roomEnd[r] - g.roomStart[r]
            if k < n { return g.roomStart[r] + k }
            k -= n
        }
        return g.roomStart[rooms[0]]
    }

    /// Motion (a still/walking mixture of random walks within the cells, and rare
    /// jumps anywhere near) and shadowing decay towards zero.
    private mutating func predict(dt: Double, geometry g: SiteGeometry, rooms: [Int], settings: FusionSettings) {
        guard dt > 0 else { return }
        let a = exp(-dt / settings.shadowTime)
        let s2 = settings.shadowSigma * settings.shadowSigma
        for k in 0..<Self.links { linkVariance[k] = a * a * linkVariance[k] + s2 * (1 - a * a) }
        let af = Float(a)
        for i in shadow.indices { shadow[i] *= af }
        let power2 = settings.powerSigma * settings.powerSigma
        powerVariance = min(power2, powerVariance + settings.powerDrift * settings.powerDrift * dt)
        let jump = 1 - exp(-settings.particleJumpRate * dt)
        let root = dt.squareRoot()
        let go = 1 - exp(-dt / settings.stillTime), stop = 1 - exp(-dt / settings.walkTime)
        for p in 0..<cells.count {
            if rng.chance(jump) {
                cells[p] = Int32(randomCell(g, rooms: rooms))
                for k in 0..<Self.links { shadow[p * Self.links + k] = 0 }
                continue
            }
            if walking[p] {
                if rng.chance(stop) { walking[p] = false }
            } else if rng.chance(go) {
                walking[p] = true
            }
            let speed = walking[p] ? settings.walkingStep : settings.stillStep
            let c = Int(cells[p])
            // Both coordinates from one Box–Muller draw.
            let radius = speed * root * (-2 * log(max(rng.uniform(), 1e-300))).squareRoot()
            let angle = 2 * Double.pi * rng.uniform()
            let x = g.cellX[c] + radius * cos(angle)
            let y = g.cellY[c] + radius * sin(angle)
            let next = g.cell(atX: x, y: y, floorOf: c)
            if next >= 0 { cells[p] = Int32(next) }
        }
    }

    /// Maps the fresh nodes (strongest first, at most `links`) onto link slots; a
    /// node new to a slot starts with no shadowing.
    private mutating func assignLinks(nodes: [Int], columns: [Int], measurements: [Double], settings: FusionSettings,
                                      scratch: inout Scratch) {
        scratch.order.removeAll(keepingCapacity: true)
        scratch.order.append(contentsOf: measurements.indices)
        scratch.order.sort { measurements[$0] > measurements[$1] || (measurements[$0] == measurements[$1] && $0 < $1) }
        if scratch.order.count > Self.links { scratch.order.removeLast(scratch.order.count - Self.links) }
        scratch.usedSlots.removeAll(keepingCapacity: true)
        scratch.usedColumns.removeAll(keepingCapacity: true)
        scratch.usedMeasurements.removeAll(keepingCapacity: true)
        var taken: UInt16 = 0   // bit k: slot k used this step
        scratch.pending.removeAll(keepingCapacity: true)
        for i in scratch.order {
            if let k = linkNode.firstIndex(of: nodes[i]) {
                taken |= 1 << k
                scratch.usedSlots.append(k); scratch.usedColumns.append(columns[i]); scratch.usedMeasurements.append(measurements[i])
            } else {
                scratch.pending.append(i)
            }
        }
        for i in scratch.pending {
            guard let k = (0..<Self.links).first(where: { taken & (1 << $0) == 0 }) else { break }
            taken |= 1 << k
            linkNode[k] = nodes[i]
            linkVariance[k] = settings.shadowSigma * settings.shadowSigma
            for p in 0..<cells.count { shadow[p * Self.links + k] = 0 }
            scratch.usedSlots.append(k); scratch.usedColumns.append(columns[i]); scratch.usedMeasurements.append(measurements[i])
        }
    }

    /// Weighs each particle by its links' innovations (the beacon's power offset
    /// profiled out under its prior) and updates its shadows.
    private mutating func weigh(geometry g: SiteGeometry, settings: FusionSettings, scratch: inout Scratch) {
        let m2 = settings.measurementSigma * settings.measurementSigma
        let prior = 1 / powerVariance
        let links = scratch.usedSlots.count
        guard links > 0 else { return }
        var peak = -Double.infinity
        let cellCount = g.cellCount
        if scratch.logLikelihood.count < cells.count {
            scratch.logLikelihood = [Double](repeating: 0, count: cells.count)
        }
        // Per link (same for every particle): its weight and Kalman gain.
        var weight = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0), gain = weight, residual = weight
        withUnsafeMutableBytes(of: &weight) { wb in
        withUnsafeMutableBytes(of: &gain) { gb in
        withUnsafeMutableBytes(of: &residual) { rb in
            let w = wb.bindMemory(to: Double.self), kg = gb.bindMemory(to: Double.self)
            let r = rb.bindMemory(to: Double.self)
            for j in 0..<links {
                let v = linkVariance[scratch.usedSlots[j]]
                w[j] = 1 / (v + m2)
                kg[j] = v / (v + m2)
            }
            for p in 0..<cells.count {
                let c = Int(cells[p])
                let row = p * Self.links
                let b0 = Double(power[p])
                var sw = prior, swr = prior * b0, swrr = prior * b0 * b0
                for j in 0..<links {
                    let at = scratch.usedColumns[j] * cellCount + c
                    let x = scratch.usedMeasurements[j] - Double(g.pathLoss[at]) - Double(shadow[row + scratch.usedSlots[j]])
                    r[j] = x
                    sw += w[j]; swr += w[j] * x; swrr += w[j] * x * x
                }
                let offset = swr / sw
                let ll = -0.5 * (swrr - swr * offset)
                scratch.logLikelihood[p] = ll
                peak = max(peak, ll)
                for j in 0..<links {
                    shadow[row + scratch.usedSlots[j]] += Float(kg[j] * (r[j] - offset))
                }
                power[p] = Float(offset)
            }
        }}}
        var information = prior
        for j in 0..<links {
            let k = scratch.usedSlots[j]
            information += 1 / (linkVariance[k] + m2)
            linkVariance[k] *= m2 / (linkVariance[k] + m2)
        }
        powerVariance = 1 / information
        var total = 0.0
        for p in 0..<cells.count {
            weights[p] *= exp(scratch.logLikelihood[p] - peak)
            total += weights[p]
        }
        if total > 0 && total.isFinite {
            for p in 0..<cells.count { weights[p] /= total }
        } else {
            for p in 0..<cells.count { weights[p] = 1 / Double(cells.count) }
        }
    }

    /// Systematic resampling once the effective sample size falls below half.
    private mutating func resampleIfDegenerate(count: Int, scratch: inout Scratch) {
        var sum2 = 0.0
        for w in weights { sum2 += w * w }
        guard sum2 > 0, 1 / sum2 < Double(count) / 2 else { return }
        scratch.resampleCells.removeAll(keepingCapacity: true)
        scratch.resampleShadow.removeAll(keepingCapacity: true)
        scratch.resamplePower.removeAll(keepingCapacity: true)
        scratch.resampleWalking.removeAll(keepingCapacity: true)
        let step = 1 / Double(count)
        var u = rng.uniform() * step
        var cumulative = weights[0]
        var i = 0
        for _ in 0..<count {
            while u > cumulative && i < count - 1 { i += 1; cumulative += weights[i] }
            scratch.resampleCells.append(cells[i])
            scratch.resamplePower.append(power[i])
            scratch.resampleWalking.append(walking[i])
            scratch.resampleShadow.append(contentsOf: shadow[(i * Self.links)..<((i + 1) * Self.links)])
            u += step
        }
        swap(&cells, &scratch.resampleCells)
        swap(&shadow, &scratch.resampleShadow)
        swap(&power, &scratch.resamplePower)
        swap(&walking, &scratch.resampleWalking)
        for p in 0..<count { weights[p] = step }
    }

    /// Working space for one step, shared by every beacon's filter (the engine owns
    /// one), so a filter stores only its particles.
    struct Scratch {
        var usedSlots: [Int] = []
        var usedColumns: [Int] = []
        var usedMeasurements: [Double] = []
        var order: [Int] = []
        var pending: [Int] = []
        var logLikelihood: [Double] = []
        var resampleCells: [Int32] = []
        var resampleShadow: [Float] = []
        var resamplePower: [Float] = []
        var resampleWalking: [Bool] = []
    }
}
