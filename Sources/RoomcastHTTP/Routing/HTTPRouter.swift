/// Maps method and exact path to a handler, in the manner of the well-known Swift server
/// routers. Routes that change state need the token; with `protectReads` every route does
/// except those marked `.open` (`/healthz`, for supervisors).
public struct HTTPRouter: Sendable {
    /// Who may call a route.
    public enum Access: Sendable {
        /// Anyone, always.
        case open
        /// Anyone, unless reads are protected.
        case read
        /// Only with the token.
        case change
    }

    struct Route: Sendable {
        var method: String
        var path: String
        var access: Access
        var handler: HTTPServer.Handler
    }

    private var routes: [Route] = []
    public let authorization: HTTPAuthorization
    public let protectReads: Bool

    public init(authorization: HTTPAuthorization = HTTPAuthorization(token: nil), protectReads: Bool = false) {
        self.authorization = authorization
        self.protectReads = protectReads
    }

    /// Adds a GET route (HEAD is answered from it, without the body).
    public mutating func get(_ path: String, access: Access = .read, _ handler: @escaping HTTPServer.Handler) {
        routes.append(Route(method: "GET", path: path, access: access, handler: handler))
    }

    /// Adds a POST route; POST always changes state, so it always needs the token.
    public mutating func post(_ path: String, _ handler: @escaping HTTPServer.Handler) {
        routes.append(Route(method: "POST", path: path, access: .change, handler: handler))
    }

    /// The paths served, for the index and the tests.
    public var paths: [String] { routes.map(\.path) }

    public func respond(to request: HTTPRequest) -> HTTPResponse {
        let candidates = routes.filter { $0.path == request.path }
        guard !candidates.isEmpty else { return .text("not found\n", status: .notFound) }
        let method = request.method == "HEAD" ? "GET" : request.method
        guard let route = candidates.first(where: { $0.method == method }) else {
            let allowed = Set(candidates.map(\.method) + (candidates.contains { $0.method == "GET" } ? ["HEAD"] : [])).sorted()
            return .text("method not allowed\n", status: .methodNotAllowed, headers: [("Allow", allowed.joined(separator: ", "))])
        }
        let needsToken = route.access == .change || (route.access == .read && protectReads)
        if needsToken && !authorization.allows(request) {
            guard authorization.isConfigured else {
                return .text("no token is configured for changes; set http.token_env\n", status: .forbidden)
            }
            return .text("a token is required\n", status: .unauthorized,
                         headers: [("WWW-Authenticate", "Basic realm=\"roomcast\", charset=\"UTF-8\"")])
        }
        return route.handler(request)
    }
}
