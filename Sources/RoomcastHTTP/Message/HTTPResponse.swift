/// What a handler answers: a status, header fields and a body that is either bytes or a
/// stream written on the connection's own thread until the client goes away (Server-Sent Events).
public struct HTTPResponse: Sendable {
    public var status: HTTPStatus
    /// Header fields besides those the server adds (`Content-Length`, `Connection`, `Date`).
    public var headers: [(name: String, value: String)]
    public var body: Body

    public enum Body: Sendable {
        case bytes([UInt8])
        /// Written after the head; the connection closes when the closure returns. The closure
        /// blocks (it runs on the connection's thread, never on the cooperative pool).
        case stream(@Sendable (HTTPBodyWriter) -> Void)
    }

    public init(status: HTTPStatus = .ok, headers: [(name: String, value: String)] = [], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public init(status: HTTPStatus = .ok, contentType: String, body: [UInt8], headers: [(name: String, value: String)] = []) {
        self.init(status: status, headers: [("Content-Type", contentType)] + headers, body: .bytes(body))
    }

    /// A plain-text response (errors, `/healthz`).
    public static func text(_ text: String, status: HTTPStatus = .ok, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", body: Array(text.utf8), headers: headers)
    }

    /// The first header value named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }
}

/// Writes a streamed body; throws once the client has gone.
public protocol HTTPBodyWriter: Sendable {
    func write(_ bytes: [UInt8]) throws
    /// True once the client has closed its side: a stream with nothing to write finds out here,
    /// not at its next write (which may succeed once after the close, and may be many seconds away).
    var clientHasClosed: Bool { get }
}

/// The status codes Roomcast answers with (RFC 9110 §15).
public struct HTTPStatus: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var code: Int
    public var reason: String

    public init(_ code: Int, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code) \(reason)" }

    public static let ok = HTTPStatus(200, "OK")
    public static let noContent = HTTPStatus(204, "No Content")
    public static let badRequest = HTTPStatus(400, "Bad Request")
    public static let unauthorized = HTTPStatus(401, "Unauthorized")
    public static let forbidden = HTTPStatus(403, "Forbidden")
    public static let notFound = HTTPStatus(404, "Not Found")
    public static let methodNotAllowed = HTTPStatus(405, "Method Not Allowed")
    public static let requestTimeout = HTTPStatus(408, "Request Timeout")
    public static let contentTooLarge = HTTPStatus(413, "Content Too Large")
    public static let uriTooLong = HTTPStatus(414, "URI Too Long")
    public static let misdirectedRequest = HTTPStatus(421, "Misdirected Request")
    public static let headerFieldsTooLarge = HTTPStatus(431, "Request Header Fields Too Large")
    public static let internalServerError = HTTPStatus(500, "Internal Server Error")
    public static let notImplemented = HTTPStatus(501, "Not Implemented")
    public static let serviceUnavailable = HTTPStatus(503, "Service Unavailable")
    public static let versionNotSupported = HTTPStatus(505, "HTTP Version Not Supported")
}
