import Shared

/// An estimator the user can teach rooms (`FusionEngine+Training`): the aggregator core
/// drives labels through this, so baselines without training sit in the same core.
public protocol TrainableEstimator {
    mutating func beginLabel(room: String, beacon: BeaconID, seconds: Double, now: Double) throws(LabelError)
    mutating func cancelLabel(beacon: BeaconID)
    var activeLabels: [ActiveLabel] { get }
    mutating func takeFinishedLabels() -> [FinishedLabel]
    var learnedRooms: LearnedRooms { get }
    /// Moves whenever what the estimator learned on its own (not taught) changes.
    var departuresRevision: UInt64 { get }
    mutating func restore(_ learned: LearnedRooms)
    mutating func forgetLearned(room: String)
}

extension FusionEngine: TrainableEstimator {}
