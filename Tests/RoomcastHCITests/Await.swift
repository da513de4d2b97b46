import Foundation
import Testing

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Runs `body`, failing loudly if it takes longer than `seconds`: a guard against a hang,
/// not a timing target — make it generous (the AddressSanitizer pass runs the whole suite at
/// once on two cores, where a 5-s guard on a fake controller's start fired before the
/// controller's own 2-s command timeout could).
@discardableResult
func within<T: Sendable>(_ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TimedOut(what: what) }
        return value
    }
}

/// The first `count` elements of an async sequence.
func first<S: AsyncSequence & Sendable>(_ count: Int, of sequence: S) async throws -> [S.Element] where S.Element: Sendable {
    var out = [S.Element]()
    for try await e in sequence {
        out.append(e)
        if out.count == count { break }
    }
    return out
}
