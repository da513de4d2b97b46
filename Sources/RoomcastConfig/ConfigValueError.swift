/// Why a config value's text (a broker URL, a source) could not be parsed.
public struct ConfigValueError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String

    public init(message: String) { self.message = message }

    public var description: String { message }
}
