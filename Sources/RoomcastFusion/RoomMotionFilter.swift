import Foundation

/// The decision model of one beacon: a forward filter over (room, moving or still).
///
/// A beacon is in one room and either holds still or moves. Still, it almost never changes
/// room; moving, it changes room every few seconds. It starts moving about once every
/// `FusionModel.stillTime` seconds and stops after about `moveTime`. Each second the filter predicts
/// with those rates, then weighs every state by how well it explains what the nodes hear:
/// the room likelihood (from whichever knowledge the site has — node membership, positions,
/// learned rooms, the nodes' own beacons) and the motion likelihood (whether the links'
/// levels are changing, which a still beacon's do not).
///
/// What other systems add as separate rules falls out of this. Hysteresis: a still beacon
/// changes room only when the evidence against its room, summed since it stopped, outweighs
/// the prior odds of a move. Quick switches: a beacon seen moving changes room at the moving
/// rate. A move the motion test missed: sustained evidence for another room is explained
/// best by "it moved", so the moving states take over without any extra test.
struct RoomMotionFilter: Sendable {
    /// Log probability of (room r, still) at `2r` and (room r, moving) at `2r + 1`.
    private(set) var logJoint: [Double]

    init(roomCount: Int) {
        logJoint = []
        reset(roomCount: roomCount)
    }

    var roomCount: Int { logJoint.count / 2 }

    /// Forgets everything: every room equally likely, moving as likely as still.
    mutating func reset(roomCount: Int) {
        let count = max(roomCount, 1)
        logJoint = [Double](repeating: -log(Double(2 * count)), count: 2 * count)
    }

    /// Rooms registered after the filter started begin nearly impossible.
    mutating func grow(to roomCount: Int) {
        guard roomCount > self.roomCount else { return }
        logJoint.append(contentsOf: repeatElement(log(1e-4), count: 2 * (roomCount - self.roomCount)))
        normalise()
    }

    /// Leans the filter to `room` (a resumed decision), still.
    mutating func lean(to room: Int, probability: Double) {
        guard room >= 0, room < roomCount, roomCount > 1 else { return }
        let rest = log((1 - probability) / Double(2 * roomCount - 1))
        for i in logJoint.indices { logJoint[i] = i == 2 * room ? log(probability) : rest }
    }

    /// Prediction over `dt` seconds: motion starts and stops, rooms change at the motion's rate.
    mutating func predict(dt: Double, model: FusionModel) {
        guard dt > 0 else { return }
        let rooms = roomCount
        let startMoving = 1 - exp(-dt / model.stillTime)
        let stopMoving = 1 - exp(-dt / model.moveTime)
        // First the motion step, in place (probabilities, not logs), and each motion's mass.
        var stillMass = 0.0, movingMass = 0.0
        for r in 0..<rooms {
            let ps = exp(logJoint[2 * r]), pm = exp(logJoint[2 * r + 1])
            let still = ps * (1 - startMoving) + pm * stopMoving
            let moving = pm * (1 - stopMoving) + ps * startMoving
            logJoint[2 * r] = still
            logJoint[2 * r + 1] = moving
            stillMass += still
            movingMass += moving
        }
        // Then a room change: the share that leaves spreads evenly over the other rooms.
        let stayStill = exp(-dt * model.stillChangeRate), stayMoving = exp(-dt * model.movingChangeRate)
        let others = Double(max(rooms - 1, 1))
        for r in 0..<rooms {
            let still = logJoint[2 * r], moving = logJoint[2 * r + 1]
            let s = rooms > 1 ? stayStill * still + (1 - stayStill) * (stillMass - still) / others : still
            let m = rooms > 1 ? stayMoving * moving + (1 - stayMoving) * (movingMass - moving) / others : moving
            logJoint[2 * r] = log(max(s, 1e-300))
            logJoint[2 * r + 1] = log(max(m, 1e-300))
        }
        normalise()
    }

    /// Update with one observation: `roomLogLikelihood[r]` for every room (already weighted
    /// for the seconds it covers), and the log-likelihood of the links' changes under
    /// moving against still.
    mutating func update(roomLogLikelihood: [Double], movingLogLikelihoodRatio: Double) {
        for r in 0..<min(roomCount, roomLogLikelihood.count) {
            let ll = roomLogLikelihood[r].isFinite ? roomLogLikelihood[r] : -700
            logJoint[2 * r] += ll
            logJoint[2 * r + 1] += ll + movingLogLikelihoodRatio
        }
        normalise()
    }

    /// The probability of each room, motion summed out, as logs.
    func roomLogPosterior(into result: inout [Double]) {
        let rooms = roomCount
        if result.count != rooms { result = [Double](repeating: 0, count: rooms) }
        for r in 0..<rooms {
            let a = logJoint[2 * r], b = logJoint[2 * r + 1]
            let peak = max(a, b)
            result[r] = peak + log(exp(a - peak) + exp(b - peak))
        }
    }

    /// The probability that the beacon is moving.
    var movingProbability: Double {
        var p = 0.0
        for r in 0..<roomCount { p += exp(logJoint[2 * r + 1]) }
        return p
    }

    private mutating func normalise() {
        var peak = -Double.infinity
        for v in logJoint { peak = max(peak, v) }
        guard peak.isFinite else { reset(roomCount: roomCount); return }
        var sum = 0.0
        for v in logJoint { sum += exp(v - peak) }
        let shift = peak + log(sum)
        for i in logJoint.indices { logJoint[i] = max(logJoint[i] - shift, -700) }
    }
}
