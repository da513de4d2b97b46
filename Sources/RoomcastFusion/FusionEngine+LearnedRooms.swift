import Foundation
import Shared

/// The rooms taught with `aggregator learn`, indexed by engine room and node.
struct TaughtRooms: Sendable {
    /// The `RoomTraining.revision` and node count this index was built from.
    var revision = -1
    var nodeCount = -1
    /// Per taught room: its engine index and, per node, the level learned there (nil: that
    /// node never heard the beacon in this room).
    var rooms: [(room: Int, levels: [Level?])] = []
    /// Per node, the mean `halfLogPrecision` of the rooms taught where it heard the beacon (0: none).
    var typicalHalfLogPrecision: [Double] = []

    struct Level: Sendable {
        var mean: Double
        /// Inverse of the spread squared, the learned spread widened by `FusionModel.learnedSpreadFloor`.
        var precision: Double
        /// Half its log: the density's normalisation, taken once here rather than per evaluation.
        var halfLogPrecision: Double
        /// Share of the room's labelled seconds the node heard the beacon in.
        var heard: Double
    }
}

extension FusionEngine {
    /// The room node `n` stands in; nil for one in no room.
    func roomName(ofNode n: Int) -> String? {
        roomNames.indices.contains(nodes[n].room) ? roomNames[nodes[n].room] : nil
    }

    /// Whether `level` was taught with node `n` in another room of the site than it stands in now
    /// (or it stands in none now): it hears the taught room otherwise from where it is. A room the
    /// site no longer has is one renamed, not left.
    func moved(_ level: LearnedRooms.NodeLevel, node n: Int) -> Bool {
        guard let was = level.room, roomIndex[was] != nil else { return false }
        return was != roomName(ofNode: n)
    }

    /// How many of the site's rooms were taught.
    var learnedRoomCount: Int { training.learned.rooms.filter { roomIndex[$0.name] != nil }.count }

    private mutating func indexTaughtRooms() {
        guard taught.revision != training.revision || taught.nodeCount != nodes.count else { return }
        var index = TaughtRooms()
        index.revision = training.revision
        index.nodeCount = nodes.count
        let floor = model.learnedSpreadFloor
        for room in training.learned.rooms {
            guard let r = roomIndex[room.name], room.seconds > 0 else { continue }
            var levels = [TaughtRooms.Level?](repeating: nil, count: nodes.count)
            for level in room.nodes {
                guard let n = nodeIndex[level.node], !moved(level, node: n) else { continue }
                let precision = 1 / (level.spread * level.spread + floor * floor)
                levels[n] = .init(mean: level.mean, precision: precision, halfLogPrecision: 0.5 * log(precision),
                                  heard: min(1, level.seconds / room.seconds))
            }
            index.rooms.append((r, levels))
        }
        index.typicalHalfLogPrecision = (0..<nodes.count).map { n in
            let logs = index.rooms.compactMap { $0.levels[n]?.halfLogPrecision }
            return logs.isEmpty ? 0 : logs.reduce(0, +) / Double(logs.count)
        }
        taught = index
    }

    /// Fills `scratchLL` with how well what the nodes hear now matches what they heard in each
    /// taught room; false when no room of this site was taught.
    ///
    /// In a taught room, each node heard the beacon at a level (mean ± spread, less the
    /// beacon's power) and for a share of the time. Now the beacon may be another of the same
    /// kind, or held differently: one offset common to every node is allowed for (fitted, with
    /// a prior of `learned_level_spread`), and the pattern across the nodes is what counts. A
    /// node that hears the beacon now but never did in that room, or that always did and is
    /// silent now, counts against the room.
    mutating func learnedLikelihood(base: Int, power: Double) -> Bool {
        indexTaughtRooms()
        guard !taught.rooms.isEmpty else { return false }
        let roomCount = roomNames.count
        if scratchLL.count != roomCount { scratchLL = [Double](repeating: 0, count: roomCount) }
        for r in 0..<roomCount { scratchLL[r] = .nan }
        // Which nodes are fresh, looked up per node below (once, not per taught room and node).
        if scratchFresh.count < nodes.count { scratchFresh = [Bool](repeating: false, count: nodes.count) }
        for n in scratchNodes { scratchFresh[n] = true }
        defer { for n in scratchNodes { scratchFresh[n] = false } }
        let levelPrecision = 1 / (model.learnedLevelSpread * model.learnedLevelSpread)
        let nu = model.learnedDegreesOfFreedom, tail = 0.5 * (nu + 1)
        let rare = log(model.learnedRarely)
        for (r, levels) in taught.rooms {
            // Fit the common offset: the precision-weighted mean residual, shrunk towards 0.
            var sw = levelPrecision, swe = 0.0
            var ll = 0.0
            for n in scratchNodes {
                guard n < levels.count, let level = levels[n] else { ll += rare; continue }
                let e = slots[base + n].fast - power - level.mean
                sw += level.precision
                swe += level.precision * e
                ll += log(max(level.heard, model.learnedRarely))
            }
            let offset = swe / sw
            ll -= 0.5 * levelPrecision * offset * offset
            for n in scratchNodes {
                guard n < levels.count, let level = levels[n] else { continue }
                let e = slots[base + n].fast - power - level.mean - offset
                // Student's t: a spot of the room the label did not cover is in the tails, and
                // costs the room the log of its distance, not its square. With its own
                // normalisation: a room taught with a broad spread explains any level a little,
                // and must pay for that breadth, or it wins every beacon at a spot the label did
                // not cover from the sharply taught room it is in.
                ll -= tail * log(1 + level.precision * e * e / nu) - level.halfLogPrecision
            }
            // Nodes that heard it in this room and are online, but are silent now.
            for n in 0..<min(levels.count, nodes.count) where nodes[n].online {
                guard let level = levels[n], !scratchFresh[n] else { continue }
                ll += log(max(1 - level.heard, model.learnedRarely))
            }
            scratchLL[r] = ll
        }
        // A room that was not taught scores as a taught room does when the beacon is in it: each
        // node's residual one spread, and the offset one prior spread. So an untaught
        // room loses only to a taught room that matches better than a typical match, and wins
        // over one that matches worse: the beacon is somewhere the user has not taught.
        // Its spread at each node is the taught rooms' typical one there.
        var typical = -0.5 - tail * log(1 + 1 / nu) * Double(scratchNodes.count)
        for n in scratchNodes where n < taught.typicalHalfLogPrecision.count { typical += taught.typicalHalfLogPrecision[n] }
        for r in 0..<roomCount where scratchLL[r].isNaN { scratchLL[r] = typical }
        return true
    }
}
