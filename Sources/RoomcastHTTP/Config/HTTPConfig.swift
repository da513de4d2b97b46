import Foundation
import RoomcastConfig

/// The `http:` section of the aggregator's and the agent's config: the optional HTTP listener
/// (dashboard, `/metrics`, `/healthz`; docs/http.md). Off unless `listen` is set.
public struct HTTPConfig: Codable, Sendable, Equatable {
    /// Environment variable read for the token when `token_env` is not set.
    public static let tokenEnvironmentVariable = "ROOMCAST_HTTP_TOKEN"
    /// The address `--http` and the docs suggest: loopback, so nothing is exposed by accident.
    public static let suggestedListen = "127.0.0.1:8267"

    /// `host:port` to listen on (`127.0.0.1:8267`, `[::1]:8267`, `0.0.0.0:8267`); nil: no listener.
    public var listen: String?
    /// Connections served at once; one more is answered 503 at once (default 16).
    public var maxConnections: Int
    /// Largest request head and body accepted, in bytes (default 8192).
    public var maxRequestBytes: Int
    /// Time a client has to send its request, in seconds (default 10).
    public var requestTimeoutS: Double
    /// Live event streams (the dashboard's) at once (default 8).
    public var maxEventStreams: Int
    /// The token for requests that change state (`Authorization: Bearer <token>`, or Basic with
    /// the token as password); prefer `token_env`. A `Secret`: every rendering shows `***`.
    public var token: Secret?
    /// Name of an environment variable holding the token.
    public var tokenEnv: String?
    /// Require the token for every page too, not only for changes (`/healthz` stays open for
    /// supervisors; default false).
    public var protectReads: Bool

    public init(listen: String? = nil, maxConnections: Int = 16, maxRequestBytes: Int = 8192, requestTimeoutS: Double = 10,
                maxEventStreams: Int = 8, token: Secret? = nil, tokenEnv: String? = nil, protectReads: Bool = false) {
        self.listen = listen
        self.maxConnections = maxConnections
        self.maxRequestBytes = maxRequestBytes
        self.requestTimeoutS = requestTimeoutS
        self.maxEventStreams = maxEventStreams
        self.token = token
        self.tokenEnv = tokenEnv
        self.protectReads = protectReads
    }

    enum CodingKeys: String, CodingKey {
        case listen, token
        case maxConnections = "max_connections", maxRequestBytes = "max_request_bytes",
             requestTimeoutS = "request_timeout_s", maxEventStreams = "max_event_streams",
             tokenEnv = "token_env", protectReads = "protect_reads"
    }

    /// Encodes for showing: the token, a `Secret`, encodes as `***`, and so does a `token_env`
    /// that may be the token itself.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(listen, forKey: .listen)
        try c.encode(maxConnections, forKey: .maxConnections)
        try c.encode(maxRequestBytes, forKey: .maxRequestBytes)
        try c.encode(requestTimeoutS, forKey: .requestTimeoutS)
        try c.encode(maxEventStreams, forKey: .maxEventStreams)
        try c.encodeIfPresent(token, forKey: .token)
        try c.encodeIfPresent(tokenEnv.map { Secret.shownInConfig(variableName: $0) }, forKey: .tokenEnv)
        try c.encode(protectReads, forKey: .protectReads)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = HTTPConfig()
        listen = try c.decodeIfPresent(String.self, forKey: .listen)
        maxConnections = try c.decode(Int.self, forKey: .maxConnections, default: d.maxConnections)
        maxRequestBytes = try c.decode(Int.self, forKey: .maxRequestBytes, default: d.maxRequestBytes)
        requestTimeoutS = try c.decode(Double.self, forKey: .requestTimeoutS, default: d.requestTimeoutS)
        maxEventStreams = try c.decode(Int.self, forKey: .maxEventStreams, default: d.maxEventStreams)
        token = try c.decodeIfPresent(Secret.self, forKey: .token)
        tokenEnv = try c.decodeIfPresent(String.self, forKey: .tokenEnv)
        protectReads = try c.decode(Bool.self, forKey: .protectReads, default: d.protectReads)
    }

    /// A parsed `listen` value.
    public struct Endpoint: Sendable, Equatable, CustomStringConvertible {
        /// An IPv4 or IPv6 literal (`localhost` becomes `127.0.0.1`).
        public var host: String
        public var port: UInt16
        public var isIPv6: Bool { host.contains(":") }
        /// True for 127.0.0.0/8 and ::1.
        public var isLoopback: Bool { host.hasPrefix("127.") || host == "::1" }
        public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

        public init(host: String, port: UInt16) {
            self.host = host
            self.port = port
        }

        /// Parses `host:port`; nil with the reason when it is not one.
        public static func parse(_ text: String) -> Result<Endpoint, EndpointError> {
            var host: Substring
            var portText: Substring
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]"), text[close...].hasPrefix("]:") else { return .failure(.init("expected [ipv6]:port")) }
                host = text[text.index(after: text.startIndex)..<close]
                portText = text[text.index(close, offsetBy: 2)...]
            } else {
                guard let colon = text.lastIndex(of: ":") else { return .failure(.init("expected host:port, e.g. \(suggestedListen)")) }
                host = text[..<colon]
                portText = text[text.index(after: colon)...]
            }
            guard let port = UInt16(portText), port > 0 else { return .failure(.init("port must be 1...65535, found '\(portText)'")) }
            if host == "localhost" { host = "127.0.0.1" }
            // What the listener binds with: `127.0.0.01` or `1::2::3` pass a look at their
            // characters and fail there, a restart loop rather than a config error.
            var v4 = in_addr(), v6 = in6_addr()
            let isV4 = !host.contains(":") && inet_pton(AF_INET, String(host), &v4) == 1
            let isV6 = host.contains(":") && inet_pton(AF_INET6, String(host), &v6) == 1
            guard isV4 || isV6 else {
                return .failure(.init("host must be an IP address (127.0.0.1, 0.0.0.0, [::1]) or localhost, found '\(ConfigNode.excerpt(String(host)))'"))
            }
            return .success(Endpoint(host: String(host), port: port))
        }
    }

    /// Why a `listen` value is not an endpoint.
    public struct EndpointError: Error, Sendable, Equatable {
        public var message: String
        init(_ message: String) { self.message = message }
    }

    /// The endpoint to listen on; nil when off or invalid (`validate` reports the latter).
    public var endpoint: Endpoint? { listen.flatMap { try? Endpoint.parse($0).get() } }

    /// The token, from (in order) the variable named by `token_env`, `ROOMCAST_HTTP_TOKEN`, then
    /// `token`; nil when none is set (changes are then refused).
    public func resolvedToken(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let name = tokenEnv { return environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let value = environment[Self.tokenEnvironmentVariable], !value.isEmpty { return value }
        return token?.revealed
    }

    /// A `token_env` that names no set variable, or `protect_reads` with no token at all, while
    /// the listener is on: an error at start, as for `mqtt.password_env`. Left to run, the
    /// listener had no token: every change refused, every read under `protect_reads` refused
    /// too, with a warning that said reads were exposed.
    public func tokenProblem(at path: String = "http", environment: [String: String] = ProcessInfo.processInfo.environment) -> ConfigProblem? {
        guard listen != nil else { return nil }
        if let name = tokenEnv, environment[name].map({ $0.isEmpty }) ?? true {
            return ConfigProblem(path: path + ".token_env",
                                 message: "environment variable \(Secret.shownVariableName(name, key: "token_env")) is not set or empty; export it or remove token_env")
        }
        guard protectReads, resolvedToken(environment: environment) == nil else { return nil }
        return ConfigProblem(path: path + ".protect_reads",
                             message: "needs a token, and none is set: set http.token_env (or export \(Self.tokenEnvironmentVariable)), or turn protect_reads off")
    }

    /// True when what the listener serves can be read from the network by anyone: it listens
    /// beyond loopback and reads are not behind a token (`protect_reads` with a token). A token
    /// alone protects nothing, since no route changes state.
    public func exposesReads(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let endpoint, !endpoint.isLoopback else { return false }
        return !(protectReads && resolvedToken(environment: environment) != nil)
    }

    /// What the warning about `exposesReads` tells the user to do.
    public static let exposureHint = "set http.token_env and http.protect_reads, or listen on 127.0.0.1"

    /// Every problem of the section, under `path`. `servesEventStreams`: false for the edge
    /// agent, which has no dashboard: its connections are never held by event streams.
    public func validate(at path: String, servesEventStreams: Bool = true, into checks: inout ConfigChecks) {
        if let listen, case .failure(let e) = Endpoint.parse(listen) { checks.add(path + ".listen", e.message) }
        checks.range(maxConnections, 1...1024, at: path + ".max_connections")
        checks.range(maxRequestBytes, 1024...1_048_576, at: path + ".max_request_bytes", unit: " bytes")
        checks.range(requestTimeoutS, 0.5...300, at: path + ".request_timeout_s", unit: " s")
        checks.range(maxEventStreams, 0...256, at: path + ".max_event_streams")
        if servesEventStreams, maxEventStreams > 0, maxEventStreams >= maxConnections, (1...1024).contains(maxConnections) {
            checks.add(path + ".max_event_streams", "must be below max_connections (\(maxConnections)): dashboards holding every connection leave none for /metrics and /healthz")
        }
        if let token, token.isEmpty { checks.add(path + ".token", "must not be empty; remove it to refuse changes") }
        if let tokenEnv, tokenEnv.isEmpty { checks.add(path + ".token_env", "must not be empty") }
    }
}
