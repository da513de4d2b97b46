import Foundation
import Shared

extension FusionEngine {
    public mutating func tick(now: Double) -> [PresenceDecision] {
        guard now.isFinite, sweepForced || now - lastSweep >= settings.evaluationInterval else { return [] }
        sweepForced = false
        lastSweep = now
        if !calibration.isEmpty && now >= nextCalibration {
            nextCalibration = now + settings.calibrationInterval
            solveCalibration()
        }
        if settings.learnCalibration && now >= nextSpotSolve {
            nextSpotSolve = now + settings.calibrationInterval
            solveSpots()
        }
        var changed: [PresenceDecision] = []
        for b in 0..<beacons.count where beacons[b].active {
            if evaluate(b, now: now) {
                changed.append(makeDecision(b, at: now))
                if beacons[b].room >= 0 { settle(b) }
            } else if beacons[b].decided && beacons[b].room < 0 && now - beacons[b].lastSeen > settings.forgetAfter {
                drop(b, reason: .forgotten)
                counters.forgotten &+= 1
            }
        }
        finishLabels(now: now)
        return changed
    }

    public func switchEvidenceSince(for id: BeaconID) -> Double? {
        guard let b = beaconIndex[id], beacons[b].switchLedSince.isFinite else { return nil }
        return beacons[b].switchLedSince
    }

    public func decision(for id: BeaconID) -> PresenceDecision? {
        guard let b = beaconIndex[id], beacons[b].decided else { return nil }
        return makeDecision(b, at: beacons[b].lastEvaluation)
    }

    /// Every decision in force, ordered by beacon id.
    public func allDecisions() -> [PresenceDecision] {
        beaconIndex.values.filter { beacons[$0].decided }
            .sorted { beacons[$0].id < beacons[$1].id }
            .map { makeDecision($0, at: beacons[$0].lastEvaluation) }
    }

    /// Diagnostics (the bench's decision trace): whether beacon `id` counts as moving at
    /// `now` (the motion gate is open) and for how many seconds its still record runs.
    public func motionState(for id: BeaconID, now: Double) -> (moving: Bool, stillSeconds: Double)? {
        guard let b = beaconIndex[id] else { return nil }
        return (now < beacons[b].movingUntil, beacons[b].stillSeconds)
    }

    /// Beacons currently tracked (heard and not yet forgotten).
    public var trackedBeacons: Int { beaconIndex.count }

    /// Freshness window of one node's evidence for beacon `s`.
    func freshWindow(_ s: BeaconState, _ slot: EvidenceSlot, awayAfter: Double) -> Double {
        min(awayAfter, max(settings.freshness, settings.freshnessIntervals * max(s.interval, slot.gap)))
    }

    func awayAfter(_ s: BeaconState) -> Double {
        max(settings.awayTimeout, settings.awayIntervals * s.interval)
    }

    /// Re-evaluates beacon `b` at `now`; true when its room (or away) changed.
    mutating func evaluate(_ b: Int, now: Double) -> Bool {
        var s = beacons[b]
        defer { beacons[b] = s }
        var dt = s.lastEvaluation.isFinite ? max(0, now - s.lastEvaluation) : 0
        s.lastEvaluation = now
        let restarting = s.restart
        if restarting {
            s.restart = false
            dt = 0
            for r in s.logPosterior.indices { s.logPosterior[r] = -log(Double(max(s.logPosterior.count, 1))) }
        }
        let roomCount = roomNames.count
        if s.logPosterior.count < roomCount {
            // Rooms registered after this beacon appeared start nearly impossible.
            s.logPosterior.append(contentsOf: repeatElement(log(1e-3), count: roomCount - s.logPosterior.count))
            Self.normalise(&s.logPosterior)
        }

        // Fresh evidence from online nodes.
        scratchNodes.removeAll(keepingCapacity: true)
        let away = awayAfter(s)
        var lastOnline = -Double.infinity
        let base = b * nodeStride
        // The latest sighting by a node now offline: when it is newer than anything the online
        // nodes say, the beacon's evidence is missing, not its presence.
        var lastOffline = -Double.infinity
        for n in 0..<nodes.count {
            let slot = slots[base + n]
            guard slot.count > 0 else { continue }
            guard nodes[n].online else { lastOffline = max(lastOffline, slot.ts); continue }
            // A node that came back counts silence only from its return.
            lastOnline = max(lastOnline, slot.ts, nodes[n].onlineSince)
            if now - slot.ts <= freshWindow(s, slot, awayAfter: away) { scratchNodes.append(n) }
        }

        if scratchNodes.isEmpty {
            if s.decided && s.room < 0 { return false }
            if lastOffline > lastOnline || !(lastOnline.isFinite || s.resumedAt.isFinite) {
                // No evidence is not away: the nodes that heard it last are offline (a Wi-Fi
                // outage takes them all at once), so it holds its room, marked as such, until
                // a node hears it again or the nodes that are up have not heard it for the
                // away timeout since they came back.
                guard s.decided, s.reason != "nodes_offline" else { return false }
                s.reason = "nodes_offline"
                s.confidence = 0
                s.challenger = -1
                return true
            }
            // Silence within the away timeout holds the room; beyond it the beacon is away. A
            // decision resumed after a restart, not heard since, counts its silence from the
            // resume: the aggregator was away, not (as far as anyone knows) the beacon.
            // Likewise after the aggregator itself was deaf (`hearingRestored`).
            var silentSince = lastOnline.isFinite ? lastOnline : s.resumedAt
            silentSince = max(silentSince, hearingSince)
            guard now - silentSince > away else { return false }
            let wasPresent = s.decided
            s.decided = true
            s.room = -1
            s.since = now
            s.reason = "timeout"
            s.challenger = -1
            s.confidence = 0
            s.runnerUp = -1
            s.margin = 0
            s.node = -1
            s.distance = nil
            s.position = nil
            for r in s.logPosterior.indices { s.logPosterior[r] = -log(Double(max(roomCount, 1))) }
            s.particles?.reset()
            s.swingSince = -.infinity
            spotCalibration.close(beacon: b)
            return wasPresent
        }

        // Heard again after holding its room without evidence: say so, whatever is decided next.
        let heldWithoutEvidence = s.decided && s.room >= 0 && s.reason == "nodes_offline"
        if heldWithoutEvidence { s.reason = "returned" }
        if !restarting && s.decided && s.room >= 0 && holdsAsHeard(&s, base: base, now: now) {
            if heldWithoutEvidence, s.room < s.logPosterior.count { s.confidence = exp(s.logPosterior[s.room]) }
            return heldWithoutEvidence
        }

        var usedGeometry = false
        // Whether the beacon holds still (the room-level filter's motion gate and creep test).
        var still = false
        if settings.roomFilter == .particles && particleStep(&s, b: b, base: base, dt: dt, restart: restarting) {
            usedGeometry = true
        } else {
            // The motion gate: quick while several links change at once, sticky otherwise.
            if settings.motionGate && movedOutOfHearing(s, base: base) { s.movingUntil = now + settings.motionHold }
            let moving = settings.motionGate && gateSeesMotion(&s, base: base, now: now)
            // Likelihood of each room from this evaluation's evidence.
            if scratchRoomLL.count != roomCount { scratchRoomLL = [Double](repeating: 0, count: roomCount) }
            usedGeometry = geometryLikelihood(&s, base: base)
            if !usedGeometry { nearestLikelihood(base: base, moving: moving) }
            var maxLL = -Double.infinity
            for r in 0..<roomCount { maxLL = max(maxLL, scratchRoomLL[r]) }
            guard maxLL.isFinite else { return false }  // only nodes without a room heard it

            // Room-level HMM: predict (a room change at `switch_rate`), then update.
            var rate = usedGeometry ? settings.switchRate : settings.nearestSwitchRate
            var weight = usedGeometry ? settings.evidenceWeight : settings.nearestEvidenceWeight
            if settings.motionGate {
                switch (moving, usedGeometry) {
                case (true, true): (rate, weight) = (settings.movingSwitchRate, settings.movingEvidenceWeight)
                case (false, true): (rate, weight) = (settings.stillSwitchRate, settings.stillEvidenceWeight)
                case (true, false): (rate, weight) = (settings.movingSwitchRate, settings.nearestMovingEvidenceWeight)
                case (false, false): (rate, weight) = (settings.nearestSwitchRate, settings.nearestStillEvidenceWeight)
                }
            }
            if roomCount > 1 && dt > 0 {
                let stay = exp(-rate * dt)
                let spread = (1 - stay) / Double(roomCount - 1)
                for r in 0..<roomCount {
                    let p = exp(s.logPosterior[r])
                    s.logPosterior[r] = log(stay * p + spread * (1 - p))
                }
            }
            // Evidence counts per second, not per evaluation: agents publish about once a
            // second, and ticking more often must not count the same readings again (the
            // aggregator ticks on whole seconds; other callers and tests tick faster). A
            // first evaluation, or one after a restart, counts as one second.
            let seconds = dt > 0 ? min(dt, 1) : 1
            recordTraining(b, base: base, now: now, seconds: seconds)
            for r in 0..<roomCount {
                s.logPosterior[r] += weight * seconds * (scratchRoomLL[r] - maxLL)
            }
            Self.normalise(&s.logPosterior)
            still = holdsStill(s, base: base, now: now)
            recordStillness(&s, base: base, now: now, still: still, seconds: seconds, maxLL: maxLL)
            if settings.learnCalibration { recordSpot(s, b: b, base: base, still: still && usedGeometry, seconds: seconds) }
        }

        var best = 0
        for r in 1..<max(roomCount, 1) where s.logPosterior[r] > s.logPosterior[best] { best = r }

        var changed = false
        // A first room rests on what the nodes have reported so far: give each a chance.
        if !s.decided && now - s.firstSeen < settings.initialWait { return false }
        // A beacon the site does not list must also have been heard over `initial_wait`: one
        // advertisement of a random id (a flood of them) is no beacon in a room.
        if !s.decided && !s.listed && !(s.lastSeen - s.firstHeard >= settings.initialWait) { return false }
        if !s.decided || s.room < 0 {
            s.reason = s.decided ? "returned" : "initial"
            s.room = best
            s.since = now
            s.decided = true
            s.challenger = -1
            // Arriving is moving: the first guess rests on a reading or two, so the room
            // filter keeps the quick pace for `motion_hold` before the gate may make it sticky.
            s.movingUntil = now + settings.motionHold
            changed = true
        } else if restarting && best != s.room {
            s.reason = "node_offline"
            s.room = best
            s.since = now
            s.switchLedSince = now  // decided at once on what the remaining nodes say
            s.challenger = -1
            changed = true
        } else if best != s.room {
            let lead = exp(s.logPosterior[best]) - exp(s.logPosterior[s.room])
            if lead >= (still ? max(settings.switchMargin, settings.stillSwitchMargin) : settings.switchMargin)
                && (!still || recordFavours(s, best)) {
                if s.challenger != best { s.challenger = best; s.challengerSince = now; s.challengerLead = 0 }
                // A clear lead switches at once, a marginal one only once it has lasted.
                s.challengerLead += lead * max(dt, 0.001)
                let dwell = still ? max(settings.minDwell, settings.stillMinDwell) : settings.minDwell
                // A still beacon's established record guards it against a position that
                // wavers by a wall (the record must favour the challenger, above), so the
                // position margin does not apply to it: in a 1.5 m hall, a position 0.6 m
                // out of the neighbouring room is rarely reached, and a first guess made
                // before the hall's node had reported held a tag there for good.
                let recordStands = still && settings.stillRecordAfter > 0 && s.stillSeconds >= settings.stillRecordAfter
                if now - s.challengerSince >= dwell && s.challengerLead >= settings.switchEvidence
                    && (recordStands || leftRoom(s, usedGeometry: usedGeometry)) {
                    s.room = best
                    s.since = now
                    s.reason = usedGeometry ? "moved_geometry" : "moved_nearest"
                    s.switchLedSince = s.challengerSince
                    s.challenger = -1
                    changed = true
                }
            } else {
                s.challenger = -1
            }
        } else {
            s.challenger = -1
        }

        if heldWithoutEvidence { changed = true }

        // Explanation.
        var runner = -1
        for r in 0..<roomCount where r != s.room {
            if runner < 0 || s.logPosterior[r] > s.logPosterior[runner] { runner = r }
        }
        s.confidence = exp(s.logPosterior[s.room])
        s.runnerUp = runner
        s.margin = runner >= 0 ? s.confidence - exp(s.logPosterior[runner]) : s.confidence
        var strongest = -1, strongestInRoom = -1
        for n in scratchNodes {
            let v = slots[base + n].rssi - nodes[n].learnedOffset
            if strongest < 0 || v > slots[base + strongest].rssi - nodes[strongest].learnedOffset { strongest = n }
            if nodes[n].room == s.room,
               strongestInRoom < 0 || v > slots[base + strongestInRoom].rssi - nodes[strongestInRoom].learnedOffset {
                strongestInRoom = n
            }
        }
        s.node = strongestInRoom >= 0 ? strongestInRoom : strongest
        s.distance = nil
        if s.node >= 0 {
            if let p = s.position, let g = geometry, g.columnOfNode.count > s.node, g.columnOfNode[s.node] >= 0 {
                let placed = g.placed[g.columnOfNode[s.node]]
                let dx = p.x - placed.x, dy = p.y - placed.y, dz = p.z - placed.z
                s.distance = (dx * dx + dy * dy + dz * dz).squareRoot()
            } else if slots[base + s.node].distance >= 0 {
                s.distance = slots[base + s.node].distance
            }
        }
        return changed
    }

    /// Whether beacon `s`, in a room, keeps it without an update because what is left of
    /// its evidence is no news: none of its fresh nodes has heard it for `quiet_intervals`
    /// reading intervals, or one node alone is left within `lone_node_hold` seconds of
    /// several hearing it, and it was not the loudest of them and hears the beacon no
    /// louder than that one did.
    private func holdsAsHeard(_ s: inout BeaconState, base: Int, now: Double) -> Bool {
        var newest = -Double.infinity, cadence = Double.infinity
        for n in scratchNodes {
            newest = max(newest, slots[base + n].ts)
            cadence = min(cadence, max(s.interval, slots[base + n].gap))
        }
        let (loudest, loudestLevel) = loudestFreshNode(base: base)
        if settings.quietIntervals > 0 && now - newest > settings.quietIntervals * max(cadence, 1) { return true }
        if scratchNodes.count >= 2 {
            s.lastWide = now
            s.wideLoudest = loudest
            s.wideLoudestLevel = loudestLevel
            return false
        }
        return settings.loneNodeHold > 0 && now - s.lastWide <= settings.loneNodeHold
            && loudest != s.wideLoudest && loudestLevel <= s.wideLoudestLevel
    }

    /// Whether the motion gate sees beacon `s` moving: the parting of fast from slow
    /// averages over every link but the one that parted most (a move changes several links
    /// at once, shadowing one) opens it for `motion_hold`. With two links, "every link but
    /// one" is the weaker link alone, and a walk from one node's room into the other's
    /// that moves them −6 and +10 dB never opened it (the room then followed only as the
    /// still record gave way, a minute and more later): two links that part in opposite
    /// directions — one node gains what the other loses — open it when the two partings
    /// together reach `motion_swing_threshold` × `motion_sigma` for
    /// `motion_swing_persistence`. Shadowing takes power from a link; it does not give the
    /// other one more. Two links that part the same way open it when together they part as
    /// far as one link alone must (`motion_single_threshold`), for as long: with both nodes
    /// by the wall between their rooms, a walk into one room loses both links, 14 and 8 dB,
    /// and the still record held the old room for a minute.
    private func gateSeesMotion(_ s: inout BeaconState, base: Int, now: Double) -> Bool {
        let (rest, most) = parting(base: base, sigma: settings.motionSigma) { slot, _ in slot.fast - slot.slow }
        var swinging = false
        if settings.motionSwingThreshold > 0 && scratchNodes.count == 2 {
            let a = slots[base + scratchNodes[0]], b = slots[base + scratchNodes[1]]
            let da = a.fast - a.slow, db = b.fast - b.slow
            // Opposite directions: one node gains what the other loses, which shadowing does
            // not do. The same direction: the two links together as the one-link test. On
            // noisy links, a reading or two part them as far (`motion_swing_noise`).
            let noise = settings.motionSwingNoise * (2 * min(a.variance, b.variance)).squareRoot()
            swinging = da * db < 0 ? abs(da - db) >= max(settings.motionSwingThreshold * settings.motionSigma, noise)
                : abs(da + db) >= max(settings.motionSingleThreshold * settings.motionSigma, noise)
        }
        // Noise parts the fast averages for a reading or two; a walk keeps them apart.
        if !swinging { s.swingSince = -.infinity } else if !s.swingSince.isFinite { s.swingSince = now }
        let swings = swinging && now - s.swingSince >= settings.motionSwingPersistence
        if rest >= settings.motionThreshold || most >= settings.motionSingleThreshold || swings {
            s.movingUntil = now + settings.motionHold
        }
        return now < s.movingUntil
    }

    /// Whether a still beacon has gone out of hearing of the links it held still on: the
    /// node that heard it loudest has lost it (its evidence expired) and the loudest now is
    /// one that joined the record only as that one was losing it, or never. No link parts
    /// on such a move (the old ones fall silent, the new one starts where it is), so the
    /// gate cannot see it, and without this the still beacon's record held it for a minute
    /// and more. A gap in which every node lost it is no such move: the nodes that hear it
    /// again heard it all along before.
    private func movedOutOfHearing(_ s: BeaconState, base: Int) -> Bool {
        guard lostRecordLoudest(s) else { return false }
        let loudest = loudestFreshNode(base: base).node
        guard loudest >= 0 else { return false }
        let newcomer = slots[base + loudest], lost = slots[base + s.recordLoudest]
        return newcomer.recordedAt < s.recordSince
            || newcomer.recordJoined >= lost.ts - freshWindow(s, lost, awayAfter: awayAfter(s))
    }

    /// The fresh node that hears the beacon at `base` loudest (its fast average, learned
    /// offset removed), and that level; -1 when none is fresh.
    private func loudestFreshNode(base: Int) -> (node: Int, level: Double) {
        var loudest = -1, loudestLevel = -Double.infinity
        for n in scratchNodes {
            let level = slots[base + n].fast - nodes[n].learnedOffset
            if level > loudestLevel { loudest = n; loudestLevel = level }
        }
        return (loudest, loudestLevel)
    }

    /// Whether the node that heard a still beacon loudest when its record last grew has
    /// lost it (its evidence expired).
    private func lostRecordLoudest(_ s: BeaconState) -> Bool {
        s.recordLoudest >= 0 && !scratchNodes.contains(s.recordLoudest)
    }

    /// Root-sum-square of `difference(slot) / sigma` over the fresh links of the beacon at
    /// `base`, leaving out the link that parted most (`rest`), and that link's (`most`):
    /// a move changes several links at once, shadowing one.
    private func parting(base: Int, sigma: Double, _ difference: (EvidenceSlot, Int) -> Double) -> (rest: Double, most: Double) {
        var most = 0.0, sum = 0.0
        for n in scratchNodes {
            let z = abs(difference(slots[base + n], n)) / sigma
            sum += z * z
            most = max(most, z)
        }
        return (max(0, sum - most * most).squareRoot(), most)
    }

    /// Whether the beacon holds still: the motion gate (room-level filter) saw no move for
    /// `motion_hold`, and its slow averages have not crept away from the long ones (a
    /// robot vacuum is too slow for the gate, not for this).
    private func holdsStill(_ s: BeaconState, base: Int, now: Double) -> Bool {
        // The gate runs in the room-level filter; the particle filter has motion of its own.
        guard settings.motionGate, settings.roomFilter == .hmm, now >= s.movingUntil else { return false }
        guard settings.creepThreshold > 0 else { return true }
        if settings.motionSwingThreshold > 0 && scratchNodes.count == 2 {
            // Two links creep together, as in the gate: leaving one out leaves one link, and
            // a slow walk between the two rooms' nodes, or a walk the gate missed, kept the
            // record of where it began for minutes. The same way, together they must creep
            // twice as far: a tag put in a bag loses both links.
            let a = slots[base + scratchNodes[0]], b = slots[base + scratchNodes[1]]
            let da = a.slow - a.long, db = b.slow - b.long
            let creep = da * db < 0 ? (da * da + db * db).squareRoot() : abs(da + db) / 2
            if creep >= settings.creepThreshold * settings.creepSigma { return false }
        }
        return parting(base: base, sigma: settings.creepSigma) { slot, _ in slot.slow - slot.long }.rest < settings.creepThreshold
    }

    /// Keeps the record of a still beacon's evidence (`still_record_after`): summed while it
    /// holds still, cleared when it moves.
    private mutating func recordStillness(_ s: inout BeaconState, base: Int, now: Double, still: Bool, seconds: Double, maxLL: Double) {
        guard settings.stillRecordAfter > 0 else { return }
        let roomCount = scratchRoomLL.count
        if s.stillRecord.count != roomCount { s.stillRecord = [Double](repeating: 0, count: roomCount); s.stillSeconds = 0 }
        if s.recentRecord.count != roomCount { s.recentRecord = [Double](repeating: 0, count: roomCount); s.recentSeconds = 0 }
        // A beacon whose loudest node stopped hearing it (its evidence expired) has gone
        // where that node cannot hear it, however steady the links it has now: the record
        // of the old links says nothing about the new.
        guard still && !lostRecordLoudest(s) else {
            if s.stillSeconds > 0 {
                for r in 0..<roomCount { s.stillRecord[r] = 0; s.recentRecord[r] = 0 }
                s.stillSeconds = 0
                s.recentSeconds = 0
            }
            s.recordLoudest = -1
            return
        }
        if s.recordLoudest < 0 { s.recordSince = now }
        for n in scratchNodes {
            if slots[base + n].recordedAt < s.recordSince { slots[base + n].recordJoined = now }
            slots[base + n].recordedAt = now
        }
        s.recordLoudest = loudestFreshNode(base: base).node
        let keep = exp(-seconds / settings.stillRecentTimeConstant)
        for r in 0..<roomCount {
            // A room out of reach this second counts as far behind, not infinitely.
            let evidence = seconds * max(scratchRoomLL[r] - maxLL, -Self.recordFloor)
            s.stillRecord[r] += evidence
            s.recentRecord[r] = s.recentRecord[r] * keep + evidence
        }
        s.stillSeconds += seconds
        s.recentSeconds = s.recentSeconds * keep + seconds
    }

    static let recordFloor = 20.0

    /// Whether a still beacon's record allows a switch to `challenger`: always before
    /// `still_record_after` seconds of stillness, then only when the record favours it, or
    /// its recent part clearly does (`still_recent_margin`: the whole record of an hour's
    /// stillness would outweigh anything the next hour says).
    private func recordFavours(_ s: BeaconState, _ challenger: Int) -> Bool {
        guard settings.stillRecordAfter > 0, s.stillSeconds >= settings.stillRecordAfter,
              challenger < s.stillRecord.count, s.room >= 0, s.room < s.stillRecord.count else { return true }
        if (s.stillRecord[challenger] - s.stillRecord[s.room]) / s.stillSeconds >= settings.stillRecordMargin { return true }
        return settings.stillRecentMargin > 0 && s.recentSeconds > 0
            && (s.recentRecord[challenger] - s.recentRecord[s.room]) / s.recentSeconds >= settings.stillRecentMargin
    }

    /// Fills `scratchRoomLL` from the position grid; false when geometry cannot be
    /// used for this evidence (fewer than two positioned fresh nodes).
    private mutating func geometryLikelihood(_ s: inout BeaconState, base: Int) -> Bool {
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
        let best = scratchColumns.withUnsafeBufferPointer { cols in
            scratchMeasurements.withUnsafeBufferPointer { ms in
                g.cellLikelihood(columns: cols, measurements: ms, powerSigma: settings.powerSigma, rooms: rooms)
            }
        }
        guard best >= 0 else { geometry = g; return false }
        let position = g.roomLikelihood(into: &scratchRoomLL, bestCell: best, rooms: rooms)
        s.position = position
        geometry = g
        counters.geometryEvaluations &+= 1
        return true
    }

    /// One particle-filter step for beacon `b` from its fresh positioned nodes, writing
    /// the room posterior and position; false when geometry cannot be used (fewer than
    /// two positioned fresh nodes), and the room-level filter decides instead.
    private mutating func particleStep(_ s: inout BeaconState, b: Int, base: Int, dt: Double, restart: Bool) -> Bool {
        s.position = nil
        guard let g = geometry else { return false }
        scratchColumns.removeAll(keepingCapacity: true)
        scratchMeasurements.removeAll(keepingCapacity: true)
        scratchParticleNodes.removeAll(keepingCapacity: true)
        for n in scratchNodes where n < g.columnOfNode.count && g.columnOfNode[n] >= 0 {
            scratchColumns.append(g.columnOfNode[n])
            scratchParticleNodes.append(n)
            scratchMeasurements.append(slots[base + n].fast - nodes[n].learnedOffset - s.power)
        }
        guard scratchColumns.count >= 2 else { return false }
        var anchor = 0
        for k in 1..<scratchMeasurements.count where scratchMeasurements[k] > scratchMeasurements[anchor] { anchor = k }
        let rooms = g.rooms(near: scratchColumns[anchor])
        guard !rooms.isEmpty else { return false }
        // Keep the filter's arrays uniquely referenced while it steps.
        var filter = s.particles ?? ParticleRoomFilter(seedFrom: s.id)
        s.particles = nil
        beacons[b].particles = nil
        if restart { filter.reset() }
        let position = filter.step(geometry: g, nodes: scratchParticleNodes, columns: scratchColumns,
                                   measurements: scratchMeasurements, rooms: rooms, dt: dt, settings: settings,
                                   scratch: &particleScratch, logPosterior: &s.logPosterior)
        s.particles = filter
        s.position = position
        counters.geometryEvaluations &+= 1
        return true
    }

    /// Fills `scratchRoomLL` from the strongest fresh node of each room: its steady
    /// average, or its fast one while the motion gate sees the beacon moving.
    private mutating func nearestLikelihood(base: Int, moving: Bool) {
        let roomCount = roomNames.count
        for r in 0..<roomCount { scratchRoomLL[r] = -.infinity }
        var weakest = Double.infinity
        var noise = 0.0
        for n in scratchNodes {
            let v = (moving ? slots[base + n].fast : slots[base + n].rssi) - nodes[n].learnedOffset
            noise = max(noise, slots[base + n].variance)
            weakest = min(weakest, v)
            let r = nodes[n].room
            if r >= 0 { scratchRoomLL[r] = max(scratchRoomLL[r], v) }
        }
        let floorValue = weakest - settings.unheardPenalty
        for n in 0..<nodes.count where nodes[n].room >= 0 && scratchRoomLL[nodes[n].room] == -.infinity {
            // A room whose nodes are silent (or offline) is weaker than anything heard.
            scratchRoomLL[nodes[n].room] = floorValue
        }
        // Noisy links make every dB of difference worth less.
        let temperature = max(settings.nearestTemperature, settings.nearestNoiseFactor * noise.squareRoot())
        for r in 0..<roomCount where scratchRoomLL[r].isFinite {
            scratchRoomLL[r] /= temperature
        }
        if settings.fingerprints && !calibration.isEmpty { addFingerprints(base: base, moving: moving) }
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
    private mutating func addFingerprints(base: Int, moving: Bool) {
        let roomCount = roomNames.count
        if scratchFingerprint.count != roomCount { scratchFingerprint = [Double](repeating: 0, count: roomCount) }
        for r in 0..<roomCount { scratchFingerprint[r] = -.infinity }
        let inverse = 1 / (2 * settings.fingerprintSigma * settings.fingerprintSigma)
        var total = 0.0, matched = 0.0
        // Only nodes that hear the beacon: a room whose node does not is weak already (the
        // nearest-node score), and this keeps the cost at fresh nodes squared.
        for tx in scratchNodes where nodes[tx].transmits && nodes[tx].room >= 0 {
            var sum = 0.0, sum2 = 0.0, count = 0.0
            for n in scratchNodes where n != tx {
                guard let f = calibration.mean(tx: tx, rx: n) else { continue }
                let e = (moving ? slots[base + n].fast : slots[base + n].rssi) - f
                sum += e; sum2 += e * e; count += 1
            }
            // One residual is always flat: it takes two to see a pattern.
            guard count >= 2 else { continue }
            // Spread around the beacon's own constant, per link, so that rooms matched over
            // different numbers of links compare.
            var ll = -(sum2 - sum * sum / count) * inverse / (count - 1)
            if settings.fingerprintOwnSigma > 0 {
                // The pattern leaves out the node itself, and a beacon at the far end of a
                // corridor matches it as well as one beside it. Near its node, a beacon is
                // heard by that node, above the pattern's level, louder than the node hears
                // any other node's beacon: the shortfall counts against the room.
                let loudest = calibration.loudestHeard(by: tx)
                if loudest.isFinite {
                    let own = (moving ? slots[base + tx].fast : slots[base + tx].rssi) - sum / count
                    let short = max(0, loudest - own)
                    ll -= short * short / (2 * settings.fingerprintOwnSigma * settings.fingerprintOwnSigma)
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

    /// Sets the offsets of the nodes that hear other nodes' beacons from those links
    /// (`NodeCalibration`); the others keep learning from tracked beacons.
    private mutating func solveCalibration() {
        guard let g = geometry else { return }
        let offsets = calibration.solve(nodeCount: nodes.count, priorSigma: settings.receiverOffsetSigma) { tx, rx in
            guard tx < g.columnOfNode.count, rx < g.columnOfNode.count else { return nil }
            let a = g.columnOfNode[tx], b = g.columnOfNode[rx]
            guard a >= 0, b >= 0 else { return nil }
            let link = g.link(from: a, to: b)
            return (link.loss, link.sigma)
        }
        let bound = settings.maxLearnedOffset
        for (n, offset) in offsets.enumerated() {
            guard let offset else { continue }
            nodes[n].learnedOffset = min(bound, max(-bound, offset))
            nodes[n].calibratedByLinks = true
        }
    }

    /// Adds this evaluation's evidence to beacon `b`'s still spell (`SpotCalibration`), or
    /// ends the spell when it does not hold still.
    private mutating func recordSpot(_ s: BeaconState, b: Int, base: Int, still: Bool, seconds: Double) {
        guard still, let g = geometry else { spotCalibration.close(beacon: b); return }
        // The motion gate misses a short walk inside a room, and a spell that spans two
        // places describes neither: the spell ends when its links' slow averages part from
        // the spell's own means as far as the creep test allows them to part from their
        // long averages.
        if settings.creepThreshold > 0 && spotCalibration.spellSeconds(beacon: b) >= SpotCalibration.settleSeconds {
            let (rest, _) = parting(base: base, sigma: settings.creepSigma) { slot, n in
                spotCalibration.spellMean(beacon: b, node: n).map { slot.slow - $0 } ?? 0
            }
            if rest >= settings.creepThreshold { spotCalibration.close(beacon: b) }
        }
        for n in scratchNodes where n < g.columnOfNode.count && g.columnOfNode[n] >= 0 {
            spotCalibration.accumulate(beacon: b, node: n, rssi: slots[base + n].rssi, seconds: seconds, power: s.power)
        }
        spotCalibration.advance(beacon: b, seconds: seconds)
    }

    /// Solves the offsets of the nodes no node beacon calibrates from the spots where
    /// tracked beacons held still (`SpotCalibration`).
    private mutating func solveSpots() {
        guard var g = geometry, !spotCalibration.usable().isEmpty else { return }
        // Leave the stored geometry uniquely referenced while its scratch is written.
        geometry = nil
        defer { geometry = g }
        let powerSigma = settings.powerSigma
        let offsets = spotCalibration.solve(
            nodeCount: nodes.count, start: nodes.map(\.learnedOffset),
            fixed: nodes.map { $0.calibratedByLinks ? $0.learnedOffset : nil },
            priorSigma: settings.receiverOffsetSigma, priorMean: nodes.map(\.resumedOffset)
        ) { spotNodes, measurements in
            let columns = spotNodes.map { $0 < g.columnOfNode.count ? g.columnOfNode[$0] : -1 }
            guard columns.count >= 2, !columns.contains(-1) else { return nil }
            var anchor = 0
            for k in 1..<measurements.count where measurements[k] > measurements[anchor] { anchor = k }
            let rooms = g.rooms(near: columns[anchor])
            let best = columns.withUnsafeBufferPointer { cols in
                measurements.withUnsafeBufferPointer {
                    g.cellLikelihood(columns: cols, measurements: $0, powerSigma: powerSigma, rooms: rooms)
                }
            }
            guard best >= 0 else { return nil }
            return columns.map { (g.expected(column: $0, cell: best), g.linkWeight(column: $0, cell: best)) }
        }
        let bound = settings.maxLearnedOffset
        for n in nodes.indices {
            guard let offset = offsets[n] else { continue }
            nodes[n].learnedOffset = min(bound, max(-bound, offset))
            nodes[n].learnedSamples += 1
        }
    }

    /// Whether the estimated position is at least `position_margin` out of the current
    /// room (always true without geometry or margin): a beacon standing by a wall whose
    /// evidence wavers is not moved until its position estimate has really left.
    private func leftRoom(_ s: BeaconState, usedGeometry: Bool) -> Bool {
        guard usedGeometry, settings.positionMargin > 0, let p = s.position, let g = geometry else { return true }
        return g.distance(fromX: p.x, y: p.y, z: p.z, toRoom: s.room) >= settings.positionMargin
    }

    static func normalise(_ logs: inout [Double]) {
        var peak = -Double.infinity
        for v in logs { peak = max(peak, v) }
        guard peak.isFinite else {
            for i in logs.indices { logs[i] = -log(Double(max(logs.count, 1))) }
            return
        }
        var sum = 0.0
        for v in logs { sum += exp(v - peak) }
        let shift = peak + log(sum)
        for i in logs.indices { logs[i] = max(logs[i] - shift, -700) }
    }

    func makeDecision(_ b: Int, at now: Double) -> PresenceDecision {
        let s = beacons[b]
        let present = s.room >= 0
        var evidence: [NodeEvidence] = []
        let away = awayAfter(s)
        let base = b * nodeStride
        for n in 0..<nodes.count where nodes[n].online {
            let slot = slots[base + n]
            guard slot.count > 0, now - slot.ts <= freshWindow(s, slot, awayAfter: away) else { continue }
            let room = nodes[n].room >= 0 ? roomNames[nodes[n].room] : nil
            evidence.append(NodeEvidence(node: nodes[n].name, room: room,
                                         rssi: Self.round(slot.rssi - nodes[n].learnedOffset, 1),
                                         distance: slot.distance >= 0 ? Self.round(slot.distance, 2) : nil,
                                         ts: slot.ts))
        }
        evidence.sort { $0.rssi != $1.rssi ? $0.rssi > $1.rssi : $0.node < $1.node }
        var d = PresenceDecision(
            id: s.id, name: s.name,
            room: present ? roomNames[s.room] : nil,
            floor: present ? roomFloors[s.room] : nil,
            distance: present ? s.distance.map { Self.round($0, 2) } : nil,
            confidence: Self.round(present ? s.confidence : 0, 3),
            node: present && s.node >= 0 ? nodes[s.node].name : nil,
            since: s.since,
            lastSeen: s.lastSeen.isFinite ? s.lastSeen : nil,
            evidence: evidence, ts: now)
        d.reason = s.reason
        if present {
            d.runnerUp = s.runnerUp >= 0 ? roomNames[s.runnerUp] : nil
            d.margin = Self.round(s.margin, 3)
            d.position = s.position.map { [Self.round($0.x, 2), Self.round($0.y, 2), Self.round($0.z, 2)] }
        }
        return d
    }

    static func round(_ v: Double, _ digits: Int) -> Double {
        let scale = digits == 1 ? 10.0 : digits == 2 ? 100.0 : 1000.0
        return (v * scale).rounded() / scale
    }
}


