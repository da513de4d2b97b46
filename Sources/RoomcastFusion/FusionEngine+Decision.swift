import Foundation
import Shared

extension FusionEngine {
    public mutating func tick(now: Double) -> [PresenceDecision] {
        guard now.isFinite, sweepForced || now - lastSweep >= model.evaluationInterval else { return [] }
        sweepForced = false
        lastSweep = now
        if settings.learnCalibration && !calibration.isEmpty && now >= nextCalibration {
            nextCalibration = now + model.calibrationInterval
            solveCalibration()
        }
        var changed: [PresenceDecision] = []
        for b in 0..<beacons.count where beacons[b].active {
            if evaluate(b, now: now) {
                changed.append(makeDecision(b, at: now))
                if beacons[b].room >= 0 { settle(b) }
            } else if settings.forgetAfter > 0 && (!beacons[b].decided || beacons[b].room < 0)
                        && now - beacons[b].lastSeen > settings.forgetAfter {
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

    /// Diagnostics (the bench's decision trace): the probability that beacon `id` is moving.
    public func movingProbability(for id: BeaconID) -> Double? {
        beaconIndex[id].map { beacons[$0].filter.movingProbability }
    }

    /// Beacons currently tracked (heard and not yet forgotten).
    public var trackedBeacons: Int { beaconIndex.count }

    /// Whether `id` is tracked (heard and not yet forgotten), placed or not yet.
    public func isTracking(_ id: BeaconID) -> Bool { beaconIndex[id] != nil }

    /// Freshness window of one node's evidence for beacon `s`.
    func freshWindow(_ s: BeaconState, _ slot: EvidenceSlot, awayAfter: Double) -> Double {
        min(awayAfter, max(model.freshness, model.freshnessIntervals * max(cadence(s), slot.gap)))
    }

    func awayAfter(_ s: BeaconState) -> Double {
        max(settings.awayTimeout, model.awayIntervals * cadence(s))
    }

    /// A silence this long, in a room beacons leave from (`RoomDepartures`), is leaving.
    func leavingAfter(_ s: BeaconState) -> Double {
        max(model.freshness, model.awayIntervals * cadence(s))
    }

    /// The time between two pieces of news of `s` when all is well: its advertising interval,
    /// or how often its readings arrive when that is longer (a tag sending bursts every 10 s).
    /// Every window a silence is judged by is a few of these.
    func cadence(_ s: BeaconState) -> Double {
        max(s.interval, s.newsGap)
    }

    /// Re-evaluates beacon `b` at `now`; true when its room (or away) changed.
    mutating func evaluate(_ b: Int, now: Double) -> Bool {
        var s = beacons[b]
        defer { beacons[b] = s }
        let dt = s.lastEvaluation.isFinite ? max(0, now - s.lastEvaluation) : 0
        s.lastEvaluation = now
        let roomCount = roomNames.count
        s.filter.grow(to: roomCount)

        // Fresh evidence from online nodes.
        scratchNodes.removeAll(keepingCapacity: true)
        scratchStale.removeAll(keepingCapacity: true)
        let away = awayAfter(s)
        var lastOnline = -Double.infinity
        let base = b * nodeStride
        // The latest sighting by a node now offline: when it is newer than anything the online
        // nodes say, the beacon's evidence is missing, not its presence.
        var lastOffline = -Double.infinity
        for n in 0..<nodes.count {
            let slot = slots[base + n]
            guard slot.count > 0 else { continue }
            guard nodes[n].online else {
                lastOffline = max(lastOffline, slot.ts)
                // An offline node is missing, not silent: what it heard when it went down is
                // the best guess of what it would hear, for as long as it is down.
                if nodes[n].offlineSince - slot.ts <= freshWindow(s, slot, awayAfter: away) { scratchStale.append(n) }
                continue
            }
            // A node that came back counts silence only from its return, if it was hearing
            // the beacon when it went down: one that had not heard it for long says nothing
            // by coming back (a flaky node reconnecting every minute would keep it home).
            lastOnline = max(lastOnline, slot.ts)
            if nodes[n].offlineSince - slot.ts <= freshWindow(s, slot, awayAfter: away) {
                lastOnline = max(lastOnline, nodes[n].onlineSince)
            }
            if now - slot.ts <= freshWindow(s, slot, awayAfter: away) {
                scratchNodes.append(n)
            } else if now - slot.ts <= away {
                scratchStale.append(n)
            }
        }

        if scratchNodes.isEmpty {
            if s.decided && s.room < 0 { return false }
            // Resumed, not heard since: its nodes are missing until one of them is back (its
            // status) or heard (a heartbeat, a reading of anything), its silence counted from then.
            // A node not heard for `forget_after_s` since is taken as gone (taken away, or renamed
            // on a site that names rooms after their nodes), and the beacon's silence as a silence.
            for n in heldAcrossRestart.isEmpty ? [] : heldAcrossRestart[s.id] ?? [] {
                if !nodes[n].online {
                    lastOffline = max(lastOffline, s.resumedAt)
                } else if nodes[n].onlineSince >= s.resumedAt {
                    lastOnline = max(lastOnline, nodes[n].onlineSince)
                } else if nodes[n].heardSince == .infinity {
                    if settings.forgetAfter <= 0 || now - s.resumedAt < settings.forgetAfter { lastOffline = max(lastOffline, s.resumedAt) }
                } else if nodes[n].heardSince >= s.resumedAt {
                    lastOnline = max(lastOnline, nodes[n].heardSince)
                }
            }
            // The nodes that heard it last are offline (a Wi-Fi outage takes them all at once):
            // they are missing, not silent.
            let missing = lastOffline > lastOnline || !(lastOnline.isFinite || s.resumedAt.isFinite)
            // Silence within the away timeout holds the room; beyond it the beacon is away. A
            // decision resumed after a restart, not heard since, counts its silence from the
            // resume: the aggregator was away, not (as far as anyone knows) the beacon.
            // Likewise after the aggregator itself was deaf (`hearingRestored`).
            var silentSince = missing ? lastOffline : lastOnline.isFinite ? lastOnline : s.resumedAt
            silentSince = max(silentSince, hearingSince)
            let silence = now - silentSince
            // A beacon that sleeps when still (`beacons[].sleeps_when_still`: a tag that
            // advertises only while moved), fallen silent holding still, is resting where it
            // lies until it is heard again, never leaving: carried out, it falls silent moving.
            if !missing && s.decided && s.room >= 0 && s.restsWhenSilent {
                guard silence > away, s.reason != "resting" else { return false }
                s.reason = "resting"
                return true
            }
            // Let go early only once this process knows its cadence: a beacon resumed and not heard
            // since, or heard once so far, has none yet, and "a few cadences" of a tag heard every
            // 10 s (its packets 0.1 s apart, in bursts) are not 4 s.
            // Nor while its nodes are missing: their silence is no sign of leaving.
            guard silence > away || (!missing && s.room >= 0 && s.countedUntil.isFinite && s.newsGap > 0 && silence > leavingAfter(s)
                                     && departures.favoursLeaving(s.room))
            else { return false }
            if missing {
                // No evidence is not away: past the away timeout, it holds its room, marked as
                // such, until a node hears it again or the nodes that are up have not heard it
                // for the away timeout since they came back. Before then its silence is any
                // beacon's, and a node's Wi-Fi gone for a few seconds changes nothing Home
                // Assistant shows.
                // A beacon resting (above) rests on: it had no evidence to lose.
                guard s.decided, s.reason != "nodes_offline", s.reason != "resting" else { return false }
                s.reason = "nodes_offline"
                s.confidence = 0
                s.rising = -1
                return true
            }
            guard s.decided else {
                // Never placed, and silent: not away, as it was never anywhere. Its initial
                // wait starts again at its next reading, so an id heard once now and once
                // later is no beacon in a room either.
                s.firstSeen = .infinity
                s.firstHeard = .infinity
                return false
            }
            if s.decided && s.room >= 0 {
                departures.left(s.room)
                s.leftRoom = s.room
                s.leftSilentSince = silentSince
            }
            s.room = -1
            s.since = now
            s.reason = "timeout"
            s.rising = -1
            s.confidence = 0
            s.runnerUp = -1
            s.margin = 0
            s.node = -1
            s.distance = nil
            s.position = nil
            // Where it comes back is anyone's guess: nor does what an offline node heard before
            // it left still say anything.
            s.filter.reset(roomCount: roomCount)
            s.filter.roomLogPosterior(into: &s.logPosterior)
            for n in 0..<nodes.count where !nodes[n].online { slots[base + n] = EvidenceSlot() }
            return true
        }

        var newest = -Double.infinity
        for n in scratchNodes { newest = max(newest, slots[base + n].ts) }
        noteReturn(&s, newest: newest, away: away)
        // Heard again after holding its room without evidence, or resting: say so, whatever is
        // decided next.
        let heldWithoutEvidence = s.decided && s.room >= 0 && (s.reason == "nodes_offline" || s.reason == "resting")
        if heldWithoutEvidence { s.reason = "returned" }

        let usedGeometry = step(&s, b: b, base: base, dt: dt, newest: newest)
        guard roomCount > 0 else { return false }
        var best = 0
        for r in 1..<roomCount where s.logPosterior[r] > s.logPosterior[best] { best = r }

        var changed = false
        // A first room rests on what the nodes have reported so far: give each a chance.
        if !s.decided && now - s.firstSeen < settings.initialWait { return false }
        // A beacon the site does not list must also have been heard over `initial_wait`: one
        // advertisement of a random id (a flood of them) is no beacon in a room.
        if !s.decided && !s.listed && !(s.lastSeen - s.firstHeard >= settings.initialWait) { return false }
        // Only nodes in no room heard it: nothing to place it by.
        guard scratchNodes.contains(where: { nodes[$0].room >= 0 }) || usedGeometry || (s.decided && s.room >= 0) else { return false }
        trackRising(&s, now: now)
        if !s.decided || s.room < 0 {
            s.reason = s.decided ? "returned" : "initial"
            s.room = best
            s.since = now
            s.decided = true
            s.rising = -1
            changed = true
        } else if best != s.room && exp(s.logPosterior[best]) - exp(s.logPosterior[s.room]) > model.switchCost {
            // The likeliest room is shown: the filter's rates are the hysteresis.
            s.reason = usedGeometry ? "moved_geometry" : "moved_nearest"
            s.switchLedSince = s.rising == best ? s.risingSince : now
            s.room = best
            s.since = now
            s.rising = -1
            changed = true
        }
        if heldWithoutEvidence { changed = true }
        explain(&s, base: base)
        return changed
    }

    /// Heard again after a silence longer than `leavingAfter`: a return to the room it was
    /// shown in, and when it had been let go already, within the away timeout of the silence's
    /// start, not a departure after all (`RoomDepartures`).
    private mutating func noteReturn(_ s: inout BeaconState, newest: Double, away: Double) {
        if s.decided && s.room < 0 {
            guard s.leftRoom >= 0 else { return }
            if newest - s.leftSilentSince <= away { departures.returned(s.leftRoom, undoingDeparture: true) }
            s.leftRoom = -1
        } else if s.decided && s.room >= 0 && s.restsWhenSilent {
            // A rest says nothing of where people leave from: counted neither way.
            return
        } else if s.decided && s.room >= 0 && s.countedUntil.isFinite && s.countedUntil >= hearingSince
                    && newest - s.countedUntil > leavingAfter(s) {
            // (A gap that spans the aggregator's own deafness is no silence of the beacon's.)
            departures.returned(s.room, undoingDeparture: false)
        }
    }

    /// Keeps note of the room gaining on the one shown: the switch's latency is measured from
    /// when the room it switched to began to gain.
    private func trackRising(_ s: inout BeaconState, now: Double) {
        guard s.decided, s.room >= 0 else { return }
        var challenger = -1
        for r in s.logPosterior.indices where r != s.room {
            if challenger < 0 || s.logPosterior[r] > s.logPosterior[challenger] { challenger = r }
        }
        guard challenger >= 0 else { return }
        let p = exp(s.logPosterior[challenger])
        if p >= 0.1 {
            if s.rising != challenger { s.rising = challenger; s.risingSince = now }
        } else if p < 0.05 {
            s.rising = -1
        }
    }

    /// The explanation of beacon `s`'s decision: confidence, runner-up, the node it is by.
    private func explain(_ s: inout BeaconState, base: Int) {
        var runner = -1
        for r in s.logPosterior.indices where r != s.room {
            if runner < 0 || s.logPosterior[r] > s.logPosterior[runner] { runner = r }
        }
        s.confidence = exp(s.logPosterior[s.room])
        s.runnerUp = runner
        s.margin = runner >= 0 ? s.confidence - exp(s.logPosterior[runner]) : s.confidence
        var strongest = -1, strongestInRoom = -1
        for n in scratchNodes {
            let v = slots[base + n].fast - nodes[n].learnedOffset
            if strongest < 0 || v > slots[base + strongest].fast - nodes[strongest].learnedOffset { strongest = n }
            if nodes[n].room == s.room,
               strongestInRoom < 0 || v > slots[base + strongestInRoom].fast - nodes[strongestInRoom].learnedOffset {
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
    }

    /// Sets the offsets of the nodes that hear other nodes' beacons from those links
    /// (`NodeCalibration`).
    private mutating func solveCalibration() {
        guard let g = geometry else { return }
        let offsets = calibration.solve(nodeCount: nodes.count, priorSigma: model.receiverOffsetSigma) { tx, rx in
            guard tx < g.columnOfNode.count, rx < g.columnOfNode.count else { return nil }
            let a = g.columnOfNode[tx], b = g.columnOfNode[rx]
            guard a >= 0, b >= 0 else { return nil }
            let link = g.link(from: a, to: b)
            return (link.loss, link.sigma)
        }
        let bound = model.maxLearnedOffset
        for (n, offset) in offsets.enumerated() {
            guard let offset else { continue }
            nodes[n].learnedOffset = min(bound, max(-bound, offset))
            nodes[n].offsetOrigin = .links
        }
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
                                         rssi: Self.round(slot.fast - nodes[n].learnedOffset, 1),
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


