/// One thing wrong with a config: where (path and location) and what.
public struct ConfigProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// Dotted path such as `nodes[2].room`; empty for the whole document.
    public var path: String
    public var message: String
    /// Where the offending value is; nil when it has no place in the file.
    public var location: ConfigLocation?

    public init(path: String, message: String, location: ConfigLocation? = nil) {
        self.path = path
        self.message = message
        self.location = location
    }

    /// `nodes[2].room: unknown room 'kitchn' (line 14, column 11)`.
    public var description: String {
        var s = path.isEmpty ? message : "\(path): \(message)"
        if let location { s += " (\(location))" }
        return s
    }
}
