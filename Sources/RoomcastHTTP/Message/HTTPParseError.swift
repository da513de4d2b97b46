/// Why bytes from a client are not a request we serve; each maps to the status answered.
public struct HTTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: HTTPStatus
    public var message: String

    public init(_ status: HTTPStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    public var description: String { "\(status): \(message)" }

    static func bad(_ message: String) -> HTTPParseError { HTTPParseError(.badRequest, message) }
}
