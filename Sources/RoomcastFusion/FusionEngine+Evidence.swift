import Foundation
import Shared

/// The evidence of one evaluation: how likely each room is, given what the fresh nodes hear,
/// from each kind of knowledge the site has, and how likely it is that the beacon moves.
extension FusionEngine {
    /// One step of beacon `s`'s room-and-motion filter: predict over `dt`, then, when a fresh
    /// node has a reading the filter has not counted (`newest`, the newest fresh reading's
    /// time), update with this evaluation's evidence. True when the room likelihood came from
    /// positions.
    mutating func step(_ s: inout BeaconState, b: Int, base: Int, dt: Double, newest: Double) -> Bool {
        let roomCount = roomNames.count
        s.filter.predict(dt: dt, model: model)
        var usedGeometry = false
        // Evidence that only ages is no news: counting it again each second would make an old
        // reading at a far node, left over as the beacon leaves, as good as a stream of them.
        if newest > s.countedUntil {
            // A spot is what was watched: across a span with no evidence longer than evidence
            // stays fresh (the beacon unheard, or the aggregator deaf and reading a backlog)
            // nothing said whether it moved, so what follows is a spot of its own.
            let watched = max(model.freshness, model.freshnessIntervals * cadence(s))
            let sinceNews = newest - s.countedUntil
            if sinceNews > watched { s.filter.forgetSpot() }
            // How often news comes: gaps within the away timeout, none that spans the
            // aggregator's own deafness, nor a rest (a silence is not the beacon's pace).
            if sinceNews > 0, sinceNews <= settings.awayTimeout, s.countedUntil >= hearingSince, !s.restsWhenSilent {
                s.newsGap = s.newsGap == 0 ? sinceNews : s.newsGap + 0.2 * (sinceNews - s.newsGap)
            }
            // Evidence counts per second, not per evaluation: agents publish about once a
            // second, and ticking more often must not count the same readings again. A first
            // evaluation counts as one second.
            let seconds = dt > 0 ? min(dt, 1) : 1
            // The time this news speaks for, as a label records it: back to the news before
            // it (a tag heard every 2 s is heard all along), or, after a silence longer than
            // evidence stays fresh, one second, as a first evaluation.
            let covered = sinceNews <= watched ? sinceNews : seconds
            s.countedUntil = max(s.countedUntil, newest)
            if scratchRoomLL.count != roomCount { scratchRoomLL = [Double](repeating: 0, count: roomCount) }
            usedGeometry = geometryLikelihood(&s, base: base)
            var weight: Double
            if usedGeometry {
                weight = model.geometryWeight
            } else {
                membershipLikelihood(base: base, now: s.lastEvaluation, staleSpan: awayAfter(s))
                weight = model.membershipWeight
            }
            weight *= levelCertainty(base: base)
            let taught = settings.learnedRooms && learnedLikelihood(base: base, power: s.power)
            relativeToBest(&scratchRoomLL, scale: taught ? weight * (1 - model.learnedShare) : weight)
            if taught {
                relativeToBest(&scratchLL, scale: weight * model.learnedShare)
                for r in 0..<roomCount { scratchRoomLL[r] += scratchLL[r] }
            }
            if scratchRoomLL.contains(where: \.isFinite) {
                // Every kind of room evidence is counted as the spot's (RoomMotionFilter.update):
                // a still beacon's levels share their spot's shadowing every second it stays,
                // whichever knowledge of the site reads them.
                let motion = seconds * motionEvidence(base: base)
                s.filter.update(roomLogLikelihood: scratchRoomLL, seconds: seconds,
                                movingLogLikelihoodRatio: motion, model: model)
            }
            s.stillAtNews = s.filter.stillProbability
            recordTraining(b, base: base, now: s.lastEvaluation, span: covered)
        }
        s.filter.roomLogPosterior(into: &s.logPosterior)
        return usedGeometry
    }

    /// What one second of this beacon's levels is worth beside one of the levels the weights
    /// were chosen on (`FusionModel.levelVariance`): the nodes' filters report how sure they are
    /// of each level, and a beacon heard less often is known less well. At most 1: a second
    /// never counts for more, however often the beacon advertises, because seconds share their
    /// shadowing. Readings that do not say count in full. The fresh nodes' mean precision, so
    /// the surest links set it: one far node that has heard the beacon rarely must not silence
    /// the rest.
    func levelCertainty(base: Int) -> Double {
        var precision = 0.0, count = 0.0
        for n in scratchNodes where slots[base + n].variance > 0 {
            precision += 1 / slots[base + n].variance
            count += 1
        }
        guard count > 0 else { return 1 }
        return min(1, model.levelVariance * precision / count)
    }

    /// Rescales log-likelihoods to `scale` × (each − the best), floored at `evidence_floor`.
    private func relativeToBest(_ ll: inout [Double], scale: Double) {
        var peak = -Double.infinity
        for v in ll { peak = max(peak, v) }
        guard peak.isFinite else {
            for r in ll.indices { ll[r] = 0 }
            return
        }
        for r in ll.indices { ll[r] = scale * max(ll[r] - peak, -model.evidenceFloor) }
    }

    /// Log-likelihood ratio, moving against still, of how far the fast average of each of the
    /// loudest fresh links has parted from its slow one. A still beacon's links part by noise
    /// only; a moving beacon's by metres of path. Far links part by noise whatever the beacon
    /// does, so only the loudest count.
    mutating func motionEvidence(base: Int) -> Double {
        let still = model.stillSpread, moving = model.movingSpread
        let k = 0.5 * (1 / (still * still) - 1 / (moving * moving))
        let offset = log(still / moving)
        scratchLevels.removeAll(keepingCapacity: true)
        for n in scratchNodes where slots[base + n].count > 3 { scratchLevels.append(slots[base + n].fast) }
        guard !scratchLevels.isEmpty else { return 0 }
        scratchLevels.sort(by: >)
        let cut = scratchLevels[min(model.motionLinks, scratchLevels.count) - 1]
        var llr = 0.0, counted = 0
        for n in scratchNodes {
            let slot = slots[base + n]
            guard slot.count > 3, slot.fast >= cut, counted < model.motionLinks else { continue }
            let d = min(abs(slot.fast - slot.slow), model.motionCap)
            llr += offset + d * d * k
            counted += 1
        }
        return model.motionWeight * llr
    }

    /// Room likelihood from node membership alone: the beacon is nearest one of the nodes,
    /// the louder a node the likelier, and a room is as likely as its nodes together.
    mutating func membershipLikelihood(base: Int, now lastEvaluationTime: Double, staleSpan: Double) {
        let roomCount = roomNames.count
        let temperature = model.membershipTemperature
        for r in 0..<roomCount { scratchRoomLL[r] = -.infinity }
        var weakest = Double.infinity
        for n in scratchNodes {
            let v = slots[base + n].fast - nodes[n].learnedOffset
            weakest = min(weakest, v)
            let r = nodes[n].room
            guard r >= 0 else { continue }
            addToRoom(r, v / temperature)
        }
        // A node that heard the beacon within the away timeout but has nothing fresh is missing,
        // not silent: someone stands in its way, or its packets are late. Its last level is the
        // best guess of what it would hear, less sure the longer it is silent: it slides to the
        // level of a room nobody hears over the away timeout. It brings no news, so it never
        // starts an update on its own.
        let unheard = weakest - model.unheardPenalty
        for n in scratchStale {
            let r = nodes[n].room
            guard r >= 0 else { continue }
            let last = slots[base + n].fast - nodes[n].learnedOffset
            let silent = nodes[n].online ? min(1, max(0, (lastEvaluationTime - slots[base + n].ts) / staleSpan)) : 0
            addToRoom(r, (last - silent * max(0, last - unheard)) / temperature)
        }
        // A room whose nodes are silent (or offline) is weaker than anything heard, and so is a
        // room with no node at all: no node hears a beacon there either. Taught, it can win.
        let floorValue = unheard / temperature
        for r in 0..<roomCount where scratchRoomLL[r] == -.infinity { scratchRoomLL[r] = floorValue }
        if settings.fingerprints && !calibration.isEmpty { addFingerprints(base: base) }
    }

    /// Adds one node's term to room `r`'s membership likelihood: log(exp(room) + exp(x)).
    private mutating func addToRoom(_ r: Int, _ x: Double) {
        let a = scratchRoomLL[r]
        scratchRoomLL[r] = a == -.infinity ? x : max(a, x) + log(1 + exp(-abs(a - x)))
    }

    /// Fills `scratchRoomLL` from the position grid; false when geometry cannot be
    /// used for this evidence (fewer than two positioned fresh nodes).
    mutating func geometryLikelihood(_ s: inout BeaconState, base: Int) -> Bool {
        s.position = nil
        guard var g = geometry else { return false }
        scratchColumns.removeAll(keepingCapacity: true)
        scratchMeasurements.removeAll(keepingCapacity: true)
        for n in scratchNodes where n < g.columnOfNode.count && g.columnOfNode[n] >= 0 {
            scratchColumns.append(g.columnOfNode[n])
            // The fast average: the fit over several nodes already averages noise out,
            // and geometry is what makes moves quick.
            scratchMeasurements.append(slots[base + n].fast - nodes[n].learnedOffset - s.power)
        }
        guard scratchColumns.count >= 2 else { return false }
        // Leave the stored geometry uniquely referenced while its scratch is written.
        geometry = nil
        // Only rooms within reach of the strongest node are worth a likelihood.
        var anchor = 0
        for k in 1..<scratchMeasurements.count where scratchMeasurements[k] > scratchMeasurements[anchor] { anchor = k }
        let rooms = g.rooms(near: scratchColumns[anchor])
        collectUnheard(g, rooms: rooms, base: base, power: s.power, now: s.lastEvaluation, away: awayAfter(s))
        let best = scratchColumns.withUnsafeBufferPointer { cols in
            scratchMeasurements.withUnsafeBufferPointer { ms in
                scratchUnheardColumns.withUnsafeBufferPointer { silent in
                    scratchUnheardFloors.withUnsafeBufferPointer { floors in
                        g.cellLikelihood(columns: cols, measurements: ms, unheard: silent, floors: floors,
                                         powerSigma: model.powerSigma, rooms: rooms)
                    }
                }
            }
        }
        guard best >= 0 else { geometry = g; return false }
        let position = g.roomLikelihood(into: &scratchRoomLL, bestCell: best, rooms: rooms)
        s.position = position
        geometry = g
        counters.geometryEvaluations &+= 1
        return true
    }


    /// The positioned nodes in `rooms` that hear nothing of the beacon, with the level
    /// (relative to its 1 m power, as the measurements) below which each stops hearing:
    /// online for longer than evidence stays fresh, with nothing of it within the away
    /// timeout, and hearing other beacons. Nodes that heard it lately are missing, not silent
    /// (`scratchStale`), and a node that hears nothing at all is deaf: neither says anything.
    private mutating func collectUnheard(_ g: SiteGeometry, rooms: [Int], base: Int, power: Double, now: Double,
                                         away: Double) {
        scratchUnheardColumns.removeAll(keepingCapacity: true)
        scratchUnheardFloors.removeAll(keepingCapacity: true)
        for n in 0..<min(nodes.count, g.columnOfNode.count) where g.columnOfNode[n] >= 0 {
            let node = nodes[n], slot = slots[base + n]
            guard slot.count == 0 || now - slot.ts > away,
                  node.online, node.room >= 0, rooms.contains(node.room),
                  !node.hearingFloor.isNaN,
                  now - node.onlineSince > model.freshness,
                  now - node.lastHeard <= model.freshness else { continue }
            scratchUnheardColumns.append(g.columnOfNode[n])
            scratchUnheardFloors.append(node.hearingFloor - node.learnedOffset - power)
        }
    }

    /// Fingerprints (sites without positions whose nodes transmit; `fingerprints`): adds to
    /// each room how well the beacon's pattern across the nodes matches the pattern of that
    /// room's node's own beacon, as the other nodes hear it.
    ///
    /// Why: a beacon near node A is heard by the other nodes about as A's own beacon is,
    /// up to one constant (its power and distance), so the residuals `reading − link mean`
    /// are flat across receivers. Each receiver's own bias is in both terms and cancels:
    /// this is the calibration a site without positions cannot otherwise have, and it
    /// uses every node's view of the beacon, not only the strongest.
    mutating func addFingerprints(base: Int) {
        let roomCount = roomNames.count
        if scratchFingerprint.count != roomCount { scratchFingerprint = [Double](repeating: 0, count: roomCount) }
        for r in 0..<roomCount { scratchFingerprint[r] = -.infinity }
        let inverse = 1 / (2 * model.fingerprintSigma * model.fingerprintSigma)
        var total = 0.0, matched = 0.0
        // Only nodes that hear the beacon: a room whose node does not is weak already (the
        // nearest-node score), and this keeps the cost at fresh nodes squared.
        for tx in scratchNodes where nodes[tx].transmits && nodes[tx].room >= 0 {
            var sum = 0.0, sum2 = 0.0, count = 0.0
            for n in scratchNodes where n != tx {
                guard let f = calibration.mean(tx: tx, rx: n) else { continue }
                let e = slots[base + n].fast - f
                sum += e; sum2 += e * e; count += 1
            }
            // One residual is always flat: it takes two to see a pattern.
            guard count >= 2 else { continue }
            // Spread around the beacon's own constant, per link, so that rooms matched over
            // different numbers of links compare.
            var ll = -(sum2 - sum * sum / count) * inverse / (count - 1)
            if model.fingerprintOwnSigma > 0 {
                // The pattern leaves out the node itself, and a beacon at the far end of a
                // corridor matches it as well as one beside it. Near its node, a beacon is
                // heard by that node, above the pattern's level, louder than the node hears
                // any other node's beacon: the shortfall counts against the room.
                let loudest = calibration.loudestHeard(by: tx)
                if loudest.isFinite {
                    let own = slots[base + tx].fast - sum / count
                    let short = max(0, loudest - own)
                    ll -= short * short / (2 * model.fingerprintOwnSigma * model.fingerprintOwnSigma)
                }
            }
            let r = nodes[tx].room
            scratchFingerprint[r] = max(scratchFingerprint[r], ll)
            total += ll; matched += 1
        }
        guard matched > 0 else { return }
        // A room without a fingerprint (its node does not transmit) is neither helped nor
        // penalised: it gets the average match.
        let neutral = total / matched
        for r in 0..<roomCount where scratchRoomLL[r].isFinite {
            scratchRoomLL[r] += scratchFingerprint[r].isFinite ? scratchFingerprint[r] : neutral
        }
    }
}
