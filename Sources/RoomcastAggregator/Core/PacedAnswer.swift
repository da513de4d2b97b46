/// A partition's answers to a shared retained state that another writer left without its part
/// (the learn state, the receiver calibration): as many as a learn command may bring
/// (`LearnSession.commandsPerWindow` in `commandWindow`), then held back, the last one going out
/// once the window allows (at the next tick or message), unless a state heard meanwhile has the
/// part again.
///
/// Why: an answer is the whole state, up to 64 KiB, and the topic is open to any client the
/// broker lets write it; one that writes over and over must not make the aggregator publish that
/// much per message it sends. Partitions correcting each other converge in a few answers, and an
/// answer held back is sent late, never dropped.
struct PacedAnswer: Sendable {
    private var window = LearnSession.WindowLimit(most: LearnSession.commandsPerWindow, every: LearnSession.commandWindow)
    /// An answer was held back.
    private(set) var isDue = false

    /// Whether to answer now; when not, the answer is due at a later tick (`dueNow`).
    mutating func answerNow(at now: Double) -> Bool {
        isDue = !window.admit(now: now)
        return !isDue
    }

    /// Whether an answer held back may go out now.
    mutating func dueNow(at now: Double) -> Bool {
        isDue && answerNow(at: now)
    }

    /// The latest state heard needs no answer: one held back is not sent.
    mutating func settle() { isDue = false }
}
