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
    /// The spot the beacon holds still at, per room: the mean room evidence per second since
    /// it came to rest there, and how many seconds that mean covers (each weighed by the chance
    /// the beacon has held still since, and by the share of the room's still probability that
    /// was there then rather than arriving since by a room change).
    private var spotMean: [Double]
    private var spotSeconds: [Double]
    /// The last seconds' mean evidence per room, and how many seconds it covers, each weighed
    /// by the chance the beacon has held still since: where a beacon that stops now came to
    /// rest, which the probability stopping in a room brings to that room's spot.
    private var recentMean: [Double]
    private var recentSeconds = 0.0

    init(roomCount: Int) {
        logJoint = []
        spotMean = []
        spotSeconds = []
        recentMean = []
        reset(roomCount: roomCount)
    }

    var roomCount: Int { logJoint.count / 2 }

    /// Forgets everything: every room equally likely, moving as likely as still.
    mutating func reset(roomCount: Int) {
        let count = max(roomCount, 1)
        logJoint = [Double](repeating: -log(Double(2 * count)), count: 2 * count)
        spotMean = [Double](repeating: 0, count: count)
        spotSeconds = [Double](repeating: 0, count: count)
        recentMean = [Double](repeating: 0, count: count)
        recentSeconds = 0
    }

    /// Rooms registered after the filter started begin nearly impossible.
    mutating func grow(to roomCount: Int) {
        guard roomCount > self.roomCount else { return }
        spotMean.append(contentsOf: repeatElement(0, count: roomCount - self.roomCount))
        spotSeconds.append(contentsOf: repeatElement(0, count: roomCount - self.roomCount))
        recentMean.append(contentsOf: repeatElement(0, count: roomCount - self.roomCount))
        logJoint.append(contentsOf: repeatElement(log(1e-4), count: 2 * (roomCount - self.roomCount)))
        normalise()
    }

    /// Leans the filter to `room` (a resumed decision), still.
    mutating func lean(to room: Int, probability: Double) {
        guard room >= 0, room < roomCount, roomCount > 1 else { return }
        let rest = log((1 - probability) / Double(2 * roomCount - 1))
        for i in logJoint.indices { logJoint[i] = i == 2 * room ? log(probability) : rest }
        for r in spotMean.indices { spotMean[r] = 0; spotSeconds[r] = 0; recentMean[r] = 0 }
        recentSeconds = 0
    }

    /// Prediction over `dt` seconds: motion starts and stops, rooms change at the motion's rate.
    ///
    /// A room's still probability keeps its spot, and what stops there brings the last
    /// seconds: they were spent coming to rest at this spot, so they are its first seconds,
    /// outweighed as its mean settles rather than counted one by one as the walk's. What comes
    /// by a room change while still is at a spot of its own that no second has spoken for yet,
    /// so the room's spot seconds shrink by its share and it pays its spot's evidence from
    /// now on. Credited with the room's spot mean's every rise instead, the probability a
    /// still beacon's rooms trade each second (`stillChangeRate`) would gather over minutes in
    /// a room the spot rules out and take the beacon on a passing run of noise.
    mutating func predict(dt: Double, model: FusionModel) {
        guard dt > 0 else { return }
        let rooms = roomCount
        let startMoving = 1 - exp(-dt / model.stillTime)
        let stopMoving = 1 - exp(-dt / model.moveTime)
        // First the motion step, in place (probabilities, not logs), and each motion's mass.
        var stillMass = 0.0, movingMass = 0.0
        for r in 0..<rooms {
            let ps = exp(logJoint[2 * r]), pm = exp(logJoint[2 * r + 1])
            let held = ps * (1 - startMoving), stopped = pm * stopMoving
            let still = held + stopped
            let heldSeconds = held * spotSeconds[r], stoppedSeconds = stopped * recentSeconds
            if heldSeconds + stoppedSeconds > 0 {
                spotMean[r] = (heldSeconds * spotMean[r] + stoppedSeconds * recentMean[r]) / (heldSeconds + stoppedSeconds)
            }
            spotSeconds[r] = still > 0 ? (heldSeconds + stoppedSeconds) / still : 0
            let moving = pm * (1 - stopMoving) + ps * startMoving
            logJoint[2 * r] = still
            logJoint[2 * r + 1] = moving
            stillMass += still
            movingMass += moving
        }
        // Then a room change: the share that leaves spreads evenly over the other rooms.
        let stayStill = exp(-dt * model.stillChangeRate), stayMoving = exp(-dt * model.movingChangeRate)
        let others = Double(max(rooms - 1, 1))
        let stays = rooms > 1 ? stayStill : 1
        for r in 0..<rooms {
            let still = logJoint[2 * r], moving = logJoint[2 * r + 1]
            let s = rooms > 1 ? stayStill * still + (1 - stayStill) * (stillMass - still) / others : still
            let m = rooms > 1 ? stayMoving * moving + (1 - stayMoving) * (movingMass - moving) / others : moving
            spotSeconds[r] = s > 0 ? spotSeconds[r] * stays * still / s : 0
            logJoint[2 * r] = log(max(s, 1e-300))
            logJoint[2 * r + 1] = log(max(m, 1e-300))
        }
        normalise()
    }

    /// Update with `seconds` of evidence: the room log-likelihood per second for every room,
    /// and the log-likelihood of the links' changes under moving against still.
    ///
    /// A moving beacon is somewhere new each second, so each second is new evidence. A still
    /// one stays at one spot, and what that spot does to its levels — the shadowing of the
    /// furniture and walls between it and each node — is the same every second it stays:
    /// more seconds there average the noise away but never the spot. So the still states
    /// weigh the spot's mean evidence by what its seconds are worth (`spotInformation`) rather
    /// than by their number, and each update adds what that changed: a still beacon at a spot
    /// that two rooms' nodes hear alike settles on the room its spot favours on average
    /// instead of following every run of noise.
    mutating func update(roomLogLikelihood: [Double], seconds: Double,
                         movingLogLikelihoodRatio: Double, model: FusionModel) {
        let rooms = min(roomCount, roomLogLikelihood.count)
        let held = min(1, stillProbability)
        let recentBefore = recentSeconds * held
        for r in 0..<rooms {
            let before = spotSeconds[r] * held, now = before + seconds
            let worthBefore = Self.spotInformation(before, model.spotShare)
            let worthNow = Self.spotInformation(now, model.spotShare)
            let evidence = roomLogLikelihood[r].isFinite ? roomLogLikelihood[r] : -700
            let mean = (before * spotMean[r] + seconds * evidence) / now
            logJoint[2 * r] += worthNow * mean - worthBefore * spotMean[r]
            logJoint[2 * r + 1] += seconds * evidence + movingLogLikelihoodRatio
            spotMean[r] = mean
            spotSeconds[r] = now
            recentMean[r] = (recentBefore * recentMean[r] + seconds * evidence) / (recentBefore + seconds)
        }
        recentSeconds = recentBefore + seconds
        normalise()
    }

    /// Starts a new spot: what follows is not known to be where the beacon held still before.
    mutating func forgetSpot() {
        for r in spotSeconds.indices { spotSeconds[r] = 0 }
        recentSeconds = 0
    }

    /// The probability that the beacon holds still.
    var stillProbability: Double {
        var p = 0.0
        for r in 0..<roomCount { p += exp(logJoint[2 * r]) }
        return p
    }

    /// What `seconds` of evidence at one spot are worth, in independent seconds: each second
    /// is the spot plus its own noise, and `share` is the spot's variance over a second's
    /// noise. One second is worth one; many approach 1 + 1 / `share` (without a shared part,
    /// `share` 0, every second counts).
    static func spotInformation(_ seconds: Double, _ share: Double) -> Double {
        seconds * (1 + share) / (1 + share * seconds)
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
    var movingProbability: Double { 1 - stillProbability }

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
