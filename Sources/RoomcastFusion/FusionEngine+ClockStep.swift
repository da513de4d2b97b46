extension FusionEngine {
    /// The wall clock stepped back by `seconds` (an NTP correction, a clock set by hand). Every
    /// time the engine keeps moves back by as much, so what it measured on the old clock keeps
    /// its length: a beacon silent for 20 s is still silent for 20 s, a label still has its
    /// remaining seconds. Left alone, those times would lie in the future: the engine would not
    /// sweep, count fresh evidence, or let anything go away until the clock caught up.
    public mutating func clockSteppedBack(by seconds: Double) {
        guard seconds.isFinite, seconds > 0 else { return }
        let d = seconds
        for n in nodes.indices {
            nodes[n].onlineSince -= d
            nodes[n].offlineSince -= d
            nodes[n].lastHeard -= d
            nodes[n].heardSince -= d
        }
        for i in slots.indices where slots[i].count > 0 { slots[i].ts -= d }
        for b in beacons.indices {
            beacons[b].leftSilentSince -= d
            beacons[b].lastSeen -= d
            beacons[b].firstSeen -= d
            beacons[b].firstHeard -= d
            beacons[b].lastEvaluation -= d
            beacons[b].countedUntil -= d
            beacons[b].since -= d
            beacons[b].risingSince -= d
            beacons[b].switchLedSince -= d
            beacons[b].resumedAt -= d
        }
        for name in offlineBeforeMade.keys { offlineBeforeMade[name]! -= d }
        nextCalibration -= d
        lastSweep -= d
        hearingSince -= d
        training.clockSteppedBack(by: d)
    }
}

extension RoomTraining {
    mutating func clockSteppedBack(by d: Double) {
        for i in labels.indices {
            labels[i].started -= d
            labels[i].ends -= d
        }
    }
}
