/// Config that did not validate; `problems` as `validate()` returns them.
public struct AdvertisingConfigError: Error, Equatable, CustomStringConvertible {
    public var problems: [String]
    public var description: String { problems.joined(separator: "\n") }

    public init(problems: [String]) { self.problems = problems }
}
