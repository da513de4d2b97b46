import Foundation
import RoomcastFusion
import RoomcastSimulation

/// A home with two receivers (the simulator's cottage) cannot learn its receivers' offsets:
/// a node's beacon needs two other receivers to hear it. What the two ways a user can help it
/// are worth there: correcting each receiver by hand (`aggregator calibrate`: a beacon carried
/// round the node at 1 m) and teaching the rooms (`aggregator learn`).
extension ResultsBenchmark {
    static let twoReceiverLayout = "cottage"
    /// Two rooms decide little per home, and a hand calibration helps one home and costs the
    /// next: 24 homes per seed of each split, so the means are of many.
    static let twoReceiverHomesPerSeed = 24

    static let twoReceiverRows = [
        "roomcast, membership", "roomcast, membership, calibrated by hand ⁴",
        "roomcast, membership, taught by a 30-s tour ²", "roomcast, membership, given the true offsets",
        positionsRow, "roomcast, positions, calibrated by hand ⁴", "roomcast, positions, given the true offsets",
        farApartRow, farApartRow + ", calibrated by hand ⁴", farApartRow + ", taught by a 30-s tour ²",
        "bermuda", "ceil-nearest", "bound",
    ]
    /// The same homes with receivers that differ far more than the simulator's 3 dB spread
    /// (another kind of adapter, an external antenna).
    static let farApartSigma = 8.0
    static let farApartRow = "roomcast, membership, receivers \(Int(farApartSigma)) dB apart ⁵"

    static func twoReceivers(seeds: Int) throws -> String {
        var sums: [String: Tally] = [:]
        func add(_ name: String, _ score: Score) { sums[name, default: Tally()].add(score) }
        /// Homes where the hand calibration is right less often than none (membership, positions),
        /// and where teaching is (membership).
        var costlier = (membership: 0, positions: 0, taught: 0)
        let splits = ["check", "holdout"]
        for split in splits {
            for k in 1...(seeds * twoReceiverHomesPerSeed) {
                let seed = SimulationBenchmark.seedBase(split: split)! + UInt64(k)
                let (firstDay, generated, ceiling) = generatedHome(layout: twoReceiverLayout, seed: seed)
                let run = try awaitResult { try await ScenarioRun.generated(generated) }
                let byHand = ScenarioSimulator(settings: firstDay).oneMetreCalibration()
                let trueOffsets = generated.receiverOffsets.mapValues { -$0 }
                add("bound", generated.boundScore())
                add("ceil-nearest", ceiling)
                let membership = try run.roomcast(positions: false).score
                let membershipByHand = try run.roomcast(positions: false, rxAdjust: byHand).score
                add("roomcast, membership", membership)
                add("roomcast, membership, calibrated by hand ⁴", membershipByHand)
                if membershipByHand.settledAccuracy < membership.settledAccuracy { costlier.membership += 1 }
                let toured = try awaitResult { try await ScenarioRun.teachingTour(of: firstDay) }
                let taught = try run.roomcast(positions: false, learned: toured).score
                add("roomcast, membership, taught by a 30-s tour ²", taught)
                if taught.settledAccuracy < membership.settledAccuracy { costlier.taught += 1 }
                add("roomcast, membership, given the true offsets", try run.roomcast(positions: false, rxAdjust: trueOffsets).score)
                let positions = try run.roomcast(positions: true).score
                let positionsByHand = try run.roomcast(positions: true, rxAdjust: byHand).score
                add(positionsRow, positions)
                add("roomcast, positions, calibrated by hand ⁴", positionsByHand)
                if positionsByHand.settledAccuracy < positions.settledAccuracy { costlier.positions += 1 }
                add("roomcast, positions, given the true offsets", try run.roomcast(positions: true, rxAdjust: trueOffsets).score)
                add("bermuda", try run.baseline(Baselines.named("bermuda")!, positions: false).score)
                let farApart = { var home = firstDay; home.radio.receiverOffsetSigma = farApartSigma; return home }()
                let farSimulator = ScenarioSimulator(settings: farApart)
                let farGenerated = farSimulator.run()
                let farRun = try awaitResult { try await ScenarioRun.generated(farGenerated) }
                add(farApartRow, try farRun.roomcast(positions: false).score)
                add(farApartRow + ", calibrated by hand ⁴",
                    try farRun.roomcast(positions: false, rxAdjust: farSimulator.oneMetreCalibration()).score)
                let farToured = try awaitResult { try await ScenarioRun.teachingTour(of: farApart) }
                add(farApartRow + ", taught by a 30-s tour ²", try farRun.roomcast(positions: false, learned: farToured).score)
            }
        }
        let homes = splits.count * seeds * twoReceiverHomesPerSeed
        var out = "\n## Two receivers\n\n"
        out += "The simulator's \(twoReceiverLayout) (two rooms, one node each), whose receivers' offsets nothing"
        out += " can learn (a node's beacon needs two other receivers to hear it): means over \(homes) homes"
        out += " (\(seeds * twoReceiverHomesPerSeed) each of the check and the holdout split's seeds, normal noise,"
        out += " 15 minutes), scored as above.\n\n"
        out += meansTable(twoReceiverRows, sums)
        out += """

            ⁴ Each receiver's `rx_adjust` as `aggregator calibrate` would find it (README, set-up step 8): the
            median level of a beacon carried round the node at 1 m, at its height, against the level
            it should read there (`roomcast-bench simulation --calibrated 1m`). Computed from the
            simulated world without packets or the agent's filter, so a careful user's best case. That median carries the
            shadowing of those spots as well as the receiver's offset. Calibrated by hand, a home is
            right less often than uncalibrated in \(costlier.membership) of the \(homes) with membership only, and in \(costlier.positions)
            with positions; taught, in \(costlier.taught). "Given the true offsets": each receiver's own offset, which no
            procedure measures exactly (`--calibrated exact`).

            ⁵ The same homes with receivers' offsets drawn with a spread of \(Int(farApartSigma)) dB instead of 3
            (`--radio offset=\(Int(farApartSigma))`): receivers of different kinds, as an external antenna makes one.

            """
        return out
    }
}
