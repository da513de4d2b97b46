import Shared

/// A decoded config that can check its own meaning (names, references, ranges).
public protocol ConfigValidating {
    /// Every semantic problem, each with the path of the offending value.
    func validate() -> [ConfigProblem]
}

/// Collects validation problems; small helpers for the checks every config repeats.
public struct ConfigChecks: Sendable {
    public private(set) var problems: [ConfigProblem] = []

    public init() {}

    public mutating func add(_ path: String, _ message: String) {
        problems.append(ConfigProblem(path: path, message: message))
    }

    public mutating func add(contentsOf other: [ConfigProblem]) {
        problems.append(contentsOf: other)
    }

    /// The problems of a setting table (`SettingTable.tableProblems()`).
    public mutating func add(contentsOf other: [SettingProblem]) {
        for problem in other { add(problem.path, problem.message) }
    }

    /// A name shown to people (Home Assistant device and area names, a beacon's or region's name
    /// in payloads), never a topic level: not empty, at most 128 bytes, no control characters.
    public mutating func displayName(_ value: String?, at path: String) {
        guard let value else { return }
        if value.allSatisfy({ $0 == " " }) { add(path, "must not be empty") }
        else if value.utf8.count > 128 { add(path, "must be at most 128 bytes") }
        // The intake's own rule (C0, C1, line separators): a name the agent puts in every reading
        // must not have every reading refused.
        else if ControlCharacters.contains(value) {
            add(path, "must not contain control characters")
        }
    }

    /// `value` must be usable as one MQTT topic level (see `TopicName`).
    public mutating func topicName(_ value: String, at path: String) {
        if let problem = TopicName.problem(with: value) { add(path, problem) }
    }

    /// A topic prefix: one or more valid topic levels joined by '/'.
    public mutating func topicPrefix(_ value: String, at path: String) {
        // Brokers keep `$` topics for themselves (`$SYS`; MQTT 3.1.1 §4.7.2): publishes there are
        // refused, and a subscription under `$share/` is a shared one that matches other topics.
        if value.hasPrefix("$") {
            add(path, "must not start with '$' (brokers keep those topics: $SYS, $share)")
            return
        }
        let levels = value.split(separator: "/", omittingEmptySubsequences: false)
        for level in levels {
            if let problem = TopicName.problem(with: String(level)) {
                add(path, "level '\(ConfigNode.excerpt(String(level)))' \(problem)")
                return
            }
        }
    }

    /// `value` must lie in `range`.
    public mutating func range<T: Comparable>(_ value: T, _ range: ClosedRange<T>, at path: String, unit: String = "") {
        if !range.contains(value) {
            add(path, "must be between \(range.lowerBound) and \(range.upperBound)\(unit), found \(value)")
        }
    }

    /// `value` must be greater than zero.
    public mutating func positive(_ value: Double, at path: String) {
        if !(value > 0) { add(path, "must be greater than 0, found \(value)") }
    }

    /// Names in `items` must be unique; reports each repeat at its own index.
    public mutating func unique(_ names: [String], list: String, field: String = "name") {
        var first: [String: Int] = [:]
        for (i, name) in names.enumerated() {
            if let j = first[name] {
                add("\(list)[\(i)].\(field)", "duplicate \(field) '\(ConfigNode.excerpt(name))' (also \(list)[\(j)])")
            } else {
                first[name] = i
            }
        }
    }
}
