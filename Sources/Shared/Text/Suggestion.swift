/// "Did you mean ...?" for unknown config keys, options and subcommands.
public enum Suggestion {
    /// The candidate closest to `word` by edit distance, when close enough to
    /// be a plausible typo: at most a third of the word's length (at least 1),
    /// and never a wholesale replacement (`z` does not suggest `x`).
    public static func closest<S: Sequence>(to word: String, in candidates: S) -> String? where S.Element == String {
        // Names are at most 128 bytes; a longer word (from the network) is no typo, and its
        // distances would cost its length squared per candidate.
        guard word.utf8.count <= 128 else { return nil }
        let limit = max(1, word.count / 3)
        var best: (String, Int)?
        for candidate in candidates.sorted() {
            let d = distance(word.lowercased(), candidate.lowercased())
            if d <= limit, d < max(word.count, candidate.count), d < (best?.1 ?? .max) { best = (candidate, d) }
        }
        return best?.0
    }

    /// Levenshtein distance, with an adjacent swap counting as one edit.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            previous2 = previous
            previous = current
        }
        return previous[b.count]
    }
}
