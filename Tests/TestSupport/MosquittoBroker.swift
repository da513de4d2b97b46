import Foundation
import Synchronization
import Testing

/// A real `mosquitto` broker for integration tests: a free loopback port, a
/// generated configuration in a temp folder, its log captured to a file.
///
/// Tests that start one carry `.requiresMosquitto`: skipped where mosquitto is missing, and
/// under CI (`CI=true`) run, so that `start` fails them.
public final class MosquittoBroker: Sendable {
    /// What to put in the broker's configuration.
    public struct Options: Sendable {
        /// User name → password; when non-empty a password file is made with `mosquitto_passwd -b`.
        public var users: [String: String]
        /// Whether clients without credentials may connect (default: only when `users` is empty).
        public var allowAnonymous: Bool?
        /// Adds a TLS listener with these certificates.
        public var tls: TLSMaterial?
        /// Makes the TLS listener demand a client certificate signed by the test CA.
        public var requireClientCertificate: Bool
        /// Serves `tls.misnamedServerCertificate` (for host name check tests).
        public var misnamedServerCertificate: Bool
        /// Contents of an ACL file (`user`, `topic read|write|readwrite`, `pattern` lines).
        public var aclRules: String?
        /// Lines appended verbatim (bridge `connection` blocks and the like).
        public var extraConfig: [String]
        /// A fixed plain port instead of a free one.
        public var port: Int?
        /// A fixed TLS port instead of a free one.
        public var tlsPort: Int?

        public init(users: [String: String] = [:], allowAnonymous: Bool? = nil, tls: TLSMaterial? = nil,
                    requireClientCertificate: Bool = false, misnamedServerCertificate: Bool = false,
                    aclRules: String? = nil,
                    extraConfig: [String] = [], port: Int? = nil, tlsPort: Int? = nil) {
            self.users = users
            self.allowAnonymous = allowAnonymous
            self.tls = tls
            self.requireClientCertificate = requireClientCertificate
            self.misnamedServerCertificate = misnamedServerCertificate
            self.aclRules = aclRules
            self.extraConfig = extraConfig
            self.port = port
            self.tlsPort = tlsPort
        }
    }

    /// Why a broker could not be started.
    public enum BrokerError: Error, CustomStringConvertible {
        case notInstalled(String)
        case didNotStart(reason: String, log: String)

        public var description: String {
            switch self {
            case .notInstalled(let m): m
            case .didNotStart(let reason, let log): "mosquitto did not start: \(reason)\n--- broker log ---\n\(log)"
            }
        }
    }

    public static let binary = "/usr/sbin/mosquitto"
    public static let passwdTool = "/usr/bin/mosquitto_passwd"
    /// mosquitto's dynamic security plugin (Debian's mosquitto package ships it), which unlike
    /// an `acl_file` refuses a subscription it will not deliver.
    public static var dynamicSecurityPlugin: String {
        let lib = "/usr/lib"
        let arches = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
        return arches.map { "\(lib)/\($0)/mosquitto_dynamic_security.so" }.first { FileManager.default.fileExists(atPath: $0) }
            ?? "\(lib)/x86_64-linux-gnu/mosquitto_dynamic_security.so"
    }

    /// `extraConfig` lines that load the dynamic security plugin with a configuration, written to
    /// `directory`, that denies every subscription (anonymous clients; publishing is allowed).
    public static func denyingEverySubscription(in directory: String) throws -> [String] {
        let path = "\(directory)/dynamic-security.json"
        try #"{"defaultACLAccess":{"publishClientSend":true,"publishClientReceive":true,"subscribe":false,"unsubscribe":true},"clients":[],"groups":[],"roles":[]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        return ["plugin \(dynamicSecurityPlugin)", "plugin_opt_config_file \(path)"]
    }

    /// `extraConfig` lines that load the dynamic security plugin with a configuration, written to
    /// `directory`, that lets anonymous clients subscribe to everything but `topics` (each refused
    /// with SUBACK 128, or 135 under MQTT 5).
    public static func denyingSubscriptions(to topics: [String], in directory: String) throws -> [String] {
        let path = "\(directory)/dynamic-security.json"
        let acls = topics.map { #"{"acltype":"subscribePattern","topic":"\#($0)","priority":1,"allow":false}"# }.joined(separator: ",")
        try (#"{"defaultACLAccess":{"publishClientSend":true,"publishClientReceive":true,"subscribe":true,"unsubscribe":true},"#
             + #""clients":[],"groups":[{"groupname":"anonymous","roles":[{"rolename":"denied"}]}],"#
             + #""roles":[{"rolename":"denied","acls":[\#(acls)]}],"anonymousGroup":"anonymous"}"#)
            .write(toFile: path, atomically: true, encoding: .utf8)
        return ["plugin \(dynamicSecurityPlugin)", "plugin_opt_config_file \(path)"]
    }

    /// True when running under CI (`CI=true`), where a missing broker must fail tests.
    public static var isCI: Bool { RequiredTool.isCI }

    /// True when the broker binary is installed (and not listed in `ROOMCAST_TEST_MISSING`).
    public static var isInstalled: Bool { RequiredTool.mosquitto.isInstalled }

    /// Whether broker tests should run: always under CI (so a missing broker fails), else when installed.
    public static var shouldRun: Bool { RequiredTool.mosquitto.shouldRun }

    /// The skip message shown outside CI when mosquitto is missing.
    public static var skipReason: Comment { RequiredTool.mosquitto.skipReason }

    /// 127.0.0.1.
    public let host = "127.0.0.1"
    /// The plain MQTT port.
    public let port: Int
    /// The TLS port, when `options.tls` was given.
    public let tlsPort: Int?
    /// The temp folder with the config, password file, ACL and log.
    public let directory: String
    /// The options it was started with.
    public let options: Options

    private let child = Mutex<ChildProcess?>(nil)
    private var configPath: String { "\(directory)/mosquitto.conf" }
    /// The broker's stderr log (all runs, including restarts).
    public var logPath: String { "\(directory)/broker.log" }

    private init(port: Int, tlsPort: Int?, directory: String, options: Options) {
        self.port = port
        self.tlsPort = tlsPort
        self.directory = directory
        self.options = options
    }

    deinit {
        child.withLock { $0?.send(SIGKILL) }
    }

    /// Starts a broker and returns once it accepts TCP connections on every listener.
    public static func start(_ options: Options = Options()) async throws -> MosquittoBroker {
        do { _ = try RequiredTool.mosquitto.require() } catch {
            throw BrokerError.notInstalled(error.description)
        }
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("roomcast-mosquitto-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // The broker drops to user `mosquitto` when started as root unless told
        // `user root`; keep the folder usable for either case.
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: dir)
        try await writeSupportFiles(options, in: dir)

        // A free port can be taken by someone else before mosquitto binds it: retry with new ones
        // (a new plain port too when the TLS port is given: a test that freed one port for the
        // broker still had its plain port picked here).
        var lastError: Error?
        for _ in 0..<3 {
            let port = try options.port ?? freePort()
            let tlsPort = try options.tls.map { _ in try options.tlsPort ?? freePort() }
            let broker = MosquittoBroker(port: port, tlsPort: tlsPort, directory: dir, options: options)
            try broker.writeConfig()
            do {
                try await broker.launch()
                return broker
            } catch {
                lastError = error
                if options.port != nil { break }
            }
        }
        throw lastError ?? BrokerError.didNotStart(reason: "unknown", log: "")
    }

    /// Every line of the broker log so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The last `lines` lines of the log, for failure messages.
    public func logTail(_ lines: Int = 40) -> String {
        log.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }

    /// True while the broker process runs.
    public var isRunning: Bool { child.withLock { $0?.isRunning ?? false } }

    /// Stops the broker with SIGTERM (clean: clients see their connection close) and waits for it to
    /// exit; SIGKILL after 5 s so a wedged broker cannot hang the test run.
    public func stop() async {
        guard let c = child.withLock({ $0 }) else { return }
        c.send(SIGTERM)
        let exited = try? await withTimeout(.seconds(5), "mosquitto to exit after SIGTERM") { await c.waitForExit() }
        if exited == nil { await signalAndWait(SIGKILL) }
    }

    /// Kills the broker with SIGKILL and waits for it to exit.
    public func kill() async {
        await signalAndWait(SIGKILL)
    }

    /// Freezes the broker (SIGSTOP): connections stay open but nothing is answered.
    public func pause() {
        child.withLock { $0?.send(SIGSTOP) }
    }

    /// Thaws a paused broker (SIGCONT).
    public func resume() {
        child.withLock { $0?.send(SIGCONT) }
    }

    /// Stops the broker and starts it again on the same ports with the same configuration.
    public func restart() async throws {
        await stop()
        try await launch()
    }

    /// Starts the broker again after `stop()`/`kill()` on the same ports.
    public func startAgain() async throws {
        guard !isRunning else { return }
        try await launch()
    }

    /// Kills the broker if it still runs and deletes its folder.
    public func cleanup() async {
        await kill()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func signalAndWait(_ signal: Int32) async {
        guard let c = child.withLock({ $0 }) else { return }
        c.send(signal)
        await c.waitForExit()
    }

    private func launch() async throws {
        let c = try ChildProcess(Self.binary, ["-c", configPath], stdoutPath: logPath, stderrPath: logPath)
        child.withLock { $0 = c }
        let ports = [port] + (tlsPort.map { [$0] } ?? [])
        do {
            try await eventually("mosquitto to accept connections on \(ports)", timeout: .seconds(10),
                                 detail: { self.logTail() }) {
                guard c.isRunning else {
                    throw BrokerError.didNotStart(reason: "it exited", log: self.logTail())
                }
                return ports.allSatisfy { acceptsConnections(port: $0) }
            }
        } catch {
            c.send(SIGKILL)
            await c.waitForExit()
            throw error
        }
    }

    private static func writeSupportFiles(_ options: Options, in dir: String) async throws {
        if !options.users.isEmpty {
            let passwd = "\(dir)/passwd"
            var first = true
            for (user, password) in options.users.sorted(by: { $0.key < $1.key }) {
                try await ChildProcess.run(passwdTool, (first ? ["-c"] : []) + ["-b", passwd, user, password], in: dir)
                first = false
            }
        }
        if let acl = options.aclRules {
            try acl.write(toFile: "\(dir)/acl", atomically: true, encoding: .utf8)
        }
    }

    private func writeConfig() throws {
        var lines = [
            "# Generated by Roomcast TestSupport for one test.",
            "per_listener_settings false",
            "persistence false",
            "log_dest stderr",
            "log_type all",
            "connection_messages true",
        ]
        if geteuid() == 0 { lines.append("user root") }
        lines.append("allow_anonymous \(options.allowAnonymous ?? options.users.isEmpty)")
        if !options.users.isEmpty { lines.append("password_file \(directory)/passwd") }
        if options.aclRules != nil { lines.append("acl_file \(directory)/acl") }
        lines.append("listener \(port) \(host)")
        if let tls = options.tls, let tlsPort {
            lines += [
                "listener \(tlsPort) \(host)",
                "cafile \(tls.caCertificate)",
                "certfile \(options.misnamedServerCertificate ? tls.misnamedServerCertificate : tls.serverCertificate)",
                "keyfile \(options.misnamedServerCertificate ? tls.misnamedServerKey : tls.serverKey)",
                "require_certificate \(options.requireClientCertificate)",
            ]
        }
        lines += options.extraConfig
        try (lines.joined(separator: "\n") + "\n").write(toFile: configPath, atomically: true, encoding: .utf8)
    }
}
