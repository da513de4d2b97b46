// Placeholder until the training branch lands.
extension FusionEngine {
    var learnedRoomCount: Int { 0 }
    mutating func recordTraining(_ b: Int, base: Int, now: Double, seconds: Double) {}
    mutating func finishLabels(now: Double) {}
    mutating func learnedLikelihood(base: Int, power: Double) -> Bool { false }
}
