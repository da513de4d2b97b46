import Foundation
import Testing

/// The first `count` elements of an async sequence.
func first<S: AsyncSequence & Sendable>(_ count: Int, of sequence: S) async throws -> [S.Element] where S.Element: Sendable {
    var out = [S.Element]()
    for try await e in sequence {
        out.append(e)
        if out.count == count { break }
    }
    return out
}
