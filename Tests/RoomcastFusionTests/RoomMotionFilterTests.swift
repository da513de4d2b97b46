import Foundation
import Testing
@testable import RoomcastFusion

/// The filter's spot (docs/fusion.md, "A still beacon's spot counts once"), on its own.
@Suite struct RoomMotionFilterTests {
    @Test func aSpotsSecondsAreWorthAtMostOnePlusOneOverTheShare() {
        #expect(RoomMotionFilter.spotInformation(1, 0.3) == 1)
        #expect(RoomMotionFilter.spotInformation(0, 0.3) == 0)
        #expect(abs(RoomMotionFilter.spotInformation(1e9, 0.3) - (1 + 1 / 0.3)) < 1e-6)
        let worths = (1...600).map { RoomMotionFilter.spotInformation(Double($0), 0.3) }
        #expect(zip(worths, worths.dropFirst()).allSatisfy { $0 < $1 }, "more seconds are never worth less")
        // Without a shared part every second counts.
        #expect(RoomMotionFilter.spotInformation(37, 0) == 37)
    }

    @Test func aStillSpotsEvidenceSaturatesWhereSecondsCountedOneByOneGrowWithoutBound() {
        // The same small lead for room 1 every second, the links quiet (still): counted per
        // second the still states' odds grow by the lead each second; counted as one spot's
        // they stop near (1 + 1 / share) × the lead, creeping on only as the spot is
        // forgotten (at the chance that the beacon has moved meanwhile).
        // Without a shared part (`spotShare` 0) every second counts, as the model without a
        // spot does.
        let model = FusionModel()
        var perSecondModel = model
        perSecondModel.spotShare = 0
        let lead = [-0.2, 0.0]
        var spot = RoomMotionFilter(roomCount: 2), seconds = RoomMotionFilter(roomCount: 2)
        func stillOdds(_ f: RoomMotionFilter) -> Double { f.logJoint[2] - f.logJoint[0] }
        var spotOdds: [Double] = [], secondOdds: [Double] = []
        for _ in 0..<600 {
            spot.update(roomLogLikelihood: lead, seconds: 1, movingLogLikelihoodRatio: -3, model: model)
            seconds.update(roomLogLikelihood: lead, seconds: 1, movingLogLikelihoodRatio: -3, model: perSecondModel)
            spotOdds.append(stillOdds(spot))
            secondOdds.append(stillOdds(seconds))
        }
        let ceiling = (1 + 1 / model.spotShare) * 0.2
        #expect(spotOdds.allSatisfy { $0 <= 1.1 * ceiling }, "spot: \(spotOdds.last!) against about \(ceiling)")
        #expect(spotOdds.last! > 0.9 * ceiling, "the spot's lead is counted: \(spotOdds.last!)")
        #expect(secondOdds.last! > 100, "per second the lead adds up: \(secondOdds.last!)")
    }

    @Test func aRoomTheSpotRulesOutDoesNotTakeAStillBeaconAsItsMeanCreepsUp() {
        // A still beacon whose spot favours room 0 every second, room 1 a little less and room
        // 2 far less, until room 2's evidence rises part of the way (someone moving about near
        // its node): room 2's spot mean creeps up, from -3.5 to -2.9, but stays far below room
        // 0's, so room 0 stays the likeliest and room 2 nowhere near. What reaches room 2 by a
        // room change (`stillChangeRate`) is at a spot of its own and pays that spot's evidence;
        // were it credited with room 2's rise instead, it would gather to about 0.6 and take the
        // beacon.
        let room2 = Self.roomProbabilities(seconds: 420) { t in ([0.0, -1.0, t < 240 ? -3.5 : -2.0], -3) }.map { $0[2] }
        #expect(room2[239] < 0.05, "before the rise room 2 is ruled out: \(room2[239])")
        #expect(room2.max()! < 0.05, "room 2 at most \(room2.max()!)")
    }

    @Test func aBeaconThatStopsPastARoomItWalkedThroughEndsInTheRoomItsSpotFavours() {
        // A beacon holds still in room 0, walks through room 1 (its seconds favour room 1)
        // and stops in room 2 near room 1's door: its first still seconds favour room 1 too,
        // as the carrier settles, and from then on its spot favours room 2 by 0.5 a second.
        // The seconds around the stop are where the beacon came to rest, so they belong to
        // its spot and are outweighed as the spot's mean settles: room 2 should win within a
        // minute and keep the beacon. Had the spot begun only once the beacon was surely still,
        // those seconds would have been counted one by one, beyond what a spot is worth.
        let likeliest = Self.roomProbabilities(seconds: 400) { t in
            switch t {
            case ..<120: ([0, -3, -3], -3)
            case ..<123: ([-3, 0, -0.8], 4)
            case ..<128: ([-5, 0, -0.8], -3)
            default: ([-5, -0.5, 0], -3)
            }
        }.map { rooms in rooms.indices.max { rooms[$0] < rooms[$1] }! }
        #expect(likeliest[119] == 0, "still in room 0 before the walk")
        #expect(likeliest[188...].allSatisfy { $0 == 2 }, "room 2 from a minute after the stop: \(likeliest[128...].map(String.init).joined())")
    }

    /// Each second's room probabilities of a filter given, per second `t`, the room evidence
    /// for every room and the motion log-likelihood ratio.
    static func roomProbabilities(seconds: Int, _ evidence: (Int) -> ([Double], Double)) -> [[Double]] {
        let model = FusionModel()
        var filter = RoomMotionFilter(roomCount: 3)
        var rooms: [Double] = []
        return (0..<seconds).map { t in
            let (spot, motion) = evidence(t)
            filter.predict(dt: 1, model: model)
            filter.update(roomLogLikelihood: spot, seconds: 1, movingLogLikelihoodRatio: motion, model: model)
            filter.roomLogPosterior(into: &rooms)
            return rooms.map(exp)
        }
    }
}
