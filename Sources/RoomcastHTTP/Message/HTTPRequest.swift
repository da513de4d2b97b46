/// One parsed HTTP/1.1 request: what a handler sees.
public struct HTTPRequest: Sendable, Equatable {
    /// The method as sent (`GET`, `POST`, …); methods are case-sensitive (RFC 9110 §9.1).
    public var method: String
    /// The request target as sent (`/metrics?x=1`).
    public var target: String
    /// The target's path, percent-decoded (`/metrics`).
    public var path: String
    /// The query's parameters, percent-decoded; the last of a repeated name wins.
    public var query: [String: String]
    /// Header fields in the order sent, names lowercased.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    /// `HTTP/1.1` or `HTTP/1.0`, as sent.
    public var version: String

    public init(method: String, target: String, path: String, query: [String: String] = [:],
                headers: [(name: String, value: String)] = [], body: [UInt8] = [], version: String = "HTTP/1.1") {
        self.version = version
        self.method = method
        self.target = target
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The first value of the header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name == lower }?.value
    }

    public static func == (a: HTTPRequest, b: HTTPRequest) -> Bool {
        a.method == b.method && a.target == b.target && a.path == b.path && a.query == b.query && a.body == b.body
            && a.headers.map(\.name) == b.headers.map(\.name) && a.headers.map(\.value) == b.headers.map(\.value)
    }
}
