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

    @Test func withoutASharedPartTheSpotCountsEverySecondAsTheSecondsDo() {
        // spot_share 0: evidence counted as the spot's moves the filter exactly as evidence
        // counted per second (the model without a spot).
        var model = FusionModel()
        model.spotShare = 0
        var asSpot = RoomMotionFilter(roomCount: 3), perSecond = RoomMotionFilter(roomCount: 3)
        let zero = [0.0, 0, 0]
        for t in 0..<200 {
            let evidence = [0.0, -Double(t % 7) * 0.3, -1.5 + sin(Double(t))]
            asSpot.predict(dt: 1, model: model)
            perSecond.predict(dt: 1, model: model)
            asSpot.update(spotLogLikelihood: evidence, secondLogLikelihood: zero, seconds: 1, movingLogLikelihoodRatio: -0.5, model: model)
            perSecond.update(spotLogLikelihood: zero, secondLogLikelihood: evidence, seconds: 1, movingLogLikelihoodRatio: -0.5, model: model)
        }
        for (a, b) in zip(asSpot.logJoint, perSecond.logJoint) { #expect(abs(a - b) < 1e-9) }
    }

    @Test func aStillSpotsEvidenceSaturatesWhereSecondsCountedOneByOneGrowWithoutBound() {
        // The same small lead for room 1 every second, the links quiet (still): counted per
        // second the still states' odds grow by the lead each second; counted as one spot's
        // they stop near (1 + 1 / share) × the lead, creeping on only as the spot is
        // forgotten (at the chance that the beacon has moved meanwhile).
        let model = FusionModel()
        let lead = [-0.2, 0.0]
        var spot = RoomMotionFilter(roomCount: 2), seconds = RoomMotionFilter(roomCount: 2)
        let zero = [0.0, 0]
        func stillOdds(_ f: RoomMotionFilter) -> Double { f.logJoint[2] - f.logJoint[0] }
        var spotOdds: [Double] = [], secondOdds: [Double] = []
        for _ in 0..<600 {
            spot.update(spotLogLikelihood: lead, secondLogLikelihood: zero, seconds: 1, movingLogLikelihoodRatio: -3, model: model)
            seconds.update(spotLogLikelihood: zero, secondLogLikelihood: lead, seconds: 1, movingLogLikelihoodRatio: -3, model: model)
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
        // 0's, so room 0 should stay the likeliest and room 2 nowhere near. The probability still
        // rooms trade each second (`stillChangeRate`) reaches room 2 free of the spot's evidence
        // against it, and each update credits it with its mean's rise, so room 2 reaches about
        // 0.6. Charging what arrives that way fixes this case and leaves a walker in a room
        // they passed (docs/fusion.md, known limits), so the filter keeps it for now.
        let model = FusionModel()
        var filter = RoomMotionFilter(roomCount: 3)
        let zero = [0.0, 0, 0]
        var rooms: [Double] = []
        var room2: [Double] = []
        for t in 0..<420 {
            let evidence = [0.0, -1.0, t < 240 ? -3.5 : -2.0]
            filter.predict(dt: 1, model: model)
            filter.update(spotLogLikelihood: evidence, secondLogLikelihood: zero, seconds: 1, movingLogLikelihoodRatio: -3, model: model)
            filter.roomLogPosterior(into: &rooms)
            room2.append(exp(rooms[2]))
        }
        #expect(room2[239] < 0.05, "before the rise room 2 is ruled out: \(room2[239])")
        withKnownIssue("a still beacon's rooms trade probability free of its spot's evidence (docs/fusion.md, Known limits)") {
            #expect(room2.max()! < 0.05, "room 2 at most \(room2.max()!)")
        }
    }
}
