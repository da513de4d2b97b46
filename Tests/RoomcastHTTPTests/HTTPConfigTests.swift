import RoomcastConfig
import RoomcastHTTP
import Shared
import Testing

/// The `http:` section's checks and what it says about exposure.
@Suite struct HTTPConfigTests {
    /// Reads are open to the network unless the listener is on loopback or reads need a token:
    /// a token alone protects nothing (no route changes state), and the warning said nothing then.
    @Test func readsAreExposedBeyondLoopbackUnlessProtectedWithAToken() {
        let token = ["ROOMCAST_HTTP_TOKEN": "t0ken"]
        #expect(!HTTPConfig(listen: "127.0.0.1:8267").exposesReads(environment: [:]))
        #expect(!HTTPConfig(listen: "[::1]:8267").exposesReads(environment: [:]))
        #expect(HTTPConfig(listen: "0.0.0.0:8267").exposesReads(environment: [:]))
        #expect(HTTPConfig(listen: "0.0.0.0:8267").exposesReads(environment: token), "a token without protect_reads")
        #expect(HTTPConfig(listen: "0.0.0.0:8267", protectReads: true).exposesReads(environment: [:]), "protect_reads without a token")
        #expect(!HTTPConfig(listen: "0.0.0.0:8267", protectReads: true).exposesReads(environment: token))
        #expect(!HTTPConfig().exposesReads(environment: [:]), "not listening")
    }

    /// A `token_env` naming an unset variable left the listener without a token, silently: an
    /// error at start now, as for `mqtt.password_env`.
    @Test func aTokenVariableThatIsNotSetIsAProblem() {
        let config = HTTPConfig(listen: "0.0.0.0:8267", tokenEnv: "DASHBOARD_TOKEN", protectReads: true)
        #expect(config.tokenProblem(environment: [:])?.description.contains("http.token_env") == true)
        #expect(config.tokenProblem(environment: ["DASHBOARD_TOKEN": ""]) != nil, "empty is not set")
        #expect(config.tokenProblem(environment: ["DASHBOARD_TOKEN": "t0ken"]) == nil)
        #expect(HTTPConfig(tokenEnv: "DASHBOARD_TOKEN").tokenProblem(environment: [:]) == nil, "no listener, no token needed")
        // Reads protected by no token at all: every page refused. An error, not a start.
        let noToken = HTTPConfig(listen: "0.0.0.0:8267", protectReads: true)
        #expect(noToken.tokenProblem(environment: [:])?.description.contains("http.protect_reads") == true)
        #expect(noToken.tokenProblem(environment: ["ROOMCAST_HTTP_TOKEN": "t0ken"]) == nil)
        #expect(HTTPConfig(protectReads: true).tokenProblem(environment: [:]) == nil, "no listener")
    }

    /// A listen address the listener cannot bind is a config error, not a failure at start (which
    /// systemd would restart every few seconds).
    @Test func aListenAddressIsCheckedAsTheListenerBindsIt() {
        func problems(_ listen: String) -> [String] {
            var checks = ConfigChecks()
            HTTPConfig(listen: listen).validate(at: "http", into: &checks)
            return checks.problems.map(\.description)
        }
        for good in ["127.0.0.1:8267", "0.0.0.0:80", "localhost:8267", "[::1]:8267", "[::]:8267", "[fe80::1]:1", "[::ffff:127.0.0.1]:8267"] {
            #expect(problems(good).isEmpty, "\(good)")
        }
        for bad in ["127.0.0.01:8267", "256.0.0.1:80", "1.2.3:80", "[1::2::3]:8267", "[::::]:80", "[12345::1]:80", "kitchen:80"] {
            #expect(problems(bad).contains { $0.contains("http.listen") && $0.contains("host must be an IP address") }, "\(bad)")
        }
    }

    /// Dashboards may not hold every connection: `/metrics` and `/healthz` must still get one.
    @Test func eventStreamsStayBelowTheConnectionLimit() {
        func problems(_ c: HTTPConfig) -> [String] {
            var checks = ConfigChecks()
            c.validate(at: "http", into: &checks)
            return checks.problems.map(\.description)
        }
        #expect(problems(HTTPConfig(listen: "127.0.0.1:8267")).isEmpty)
        #expect(problems(HTTPConfig(listen: "127.0.0.1:8267", maxConnections: 16, maxEventStreams: 16)).contains {
            $0.contains("http.max_event_streams") && $0.contains("below max_connections (16)")
        })
        #expect(problems(HTTPConfig(listen: "127.0.0.1:8267", maxConnections: 4, maxEventStreams: 0)).isEmpty)
        // The edge agent has no event streams: a small max_connections is fine there (it was
        // refused, max_event_streams' default being 8).
        var agent = ConfigChecks()
        HTTPConfig(listen: "127.0.0.1:8267", maxConnections: 4).validate(at: "http", servesEventStreams: false, into: &agent)
        #expect(agent.problems.isEmpty)
    }
}
