import Foundation

/// A wait that ran out of time; its description says what was awaited.
public struct TimeoutError: Error, CustomStringConvertible {
    /// What the test was waiting for.
    public let what: String
    /// How long it waited.
    public let after: Duration
    /// State worth showing (last value seen, broker log tail).
    public let detail: String?

    public init(what: String, after: Duration, detail: String? = nil) {
        self.what = what
        self.after = after
        self.detail = detail
    }

    public var description: String {
        "timed out after \(after) waiting for \(what)" + (detail.map { "\n\($0)" } ?? "")
    }
}

/// Polls `condition` until it holds; throws a `TimeoutError` naming `what` when
/// `timeout` passes first. For state that has no event to await.
public func eventually(
    _ what: String,
    timeout: Duration = .seconds(10),
    poll: Duration = .milliseconds(10),
    detail: () -> String? = { nil },
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return }
        if ContinuousClock.now >= deadline { throw TimeoutError(what: what, after: timeout, detail: detail()) }
        try await Task.sleep(for: poll)
    }
}

/// Runs `operation`, throwing a `TimeoutError` naming `what` if it has not
/// finished within `timeout` (the operation is then cancelled): a guard against a hang, not a
/// timing target — make it generous.
@discardableResult
public func withTimeout<T: Sendable>(
    _ timeout: Duration,
    _ what: String,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw TimeoutError(what: what, after: timeout)
        }
        defer { group.cancelAll() }
        guard let first = try await group.next() else { throw TimeoutError(what: what, after: timeout) }
        return first
    }
}
