/// A positional argument.
public struct ArgumentSpec: Sendable, Equatable {
    public var name: String
    public var help: String
    public var isOptional: Bool
    /// Takes every remaining positional; only the last argument may repeat.
    public var isRepeating: Bool

    public init(_ name: String, help: String, optional: Bool = false, repeating: Bool = false) {
        self.name = name
        self.help = help
        self.isOptional = optional
        self.isRepeating = repeating
    }

    var synopsis: String {
        var s = "<\(name)>"
        if isRepeating { s += " ..." }
        return isOptional ? "[\(s)]" : s
    }
}
