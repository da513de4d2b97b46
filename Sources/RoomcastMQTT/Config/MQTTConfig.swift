import Foundation
import RoomcastConfig
import Shared

/// The `mqtt:` section shared by the agent and the aggregator.
public struct MQTTConfig: Codable, Sendable, Equatable {
    /// Environment variable read for the password when `password_env` is not set.
    public static let passwordEnvironmentVariable = "ROOMCAST_MQTT_PASSWORD"

    /// Broker address (default `mqtt://localhost:1883`).
    public var broker: BrokerURL
    /// User name; overrides one given in the broker URL.
    public var username: String?
    /// Password in the file; prefer `password_env`. A `Secret`: logs and encodings show `***`.
    public var password: Secret?
    /// Name of an environment variable holding the password.
    public var passwordEnv: String?
    /// MQTT client id; nil lets the program derive one from its name and node.
    public var clientID: String?
    /// Keepalive interval in seconds (default 30).
    public var keepalive: Int
    /// First topic level(s) of every topic (default `roomcast`).
    public var topicPrefix: String
    /// TLS settings; nil with an `mqtts://` broker means the system CAs.
    public var tls: TLSConfig?
    /// MQTT protocol revision (default 5; 3.1.1 for brokers without MQTT 5).
    public var protocolVersion: ProtocolVersion
    /// The largest packet the broker may send this program (MQTT 5 Maximum Packet Size); the
    /// broker drops bigger messages for it. 0 means no limit; ignored under 3.1.1, which cannot
    /// send it. Default `defaultMaxPacketBytes`.
    public var maxPacketBytes: Int

    /// The smallest `maxPacketBytes` but 0: the biggest payload a Roomcast program accepts, with
    /// room for its topic and headers.
    public static let smallestMaxPacketBytes = WireFormat.maxPayloadBytes + 4096

    /// Above the biggest message a Roomcast program accepts (`WireFormat.maxPayloadBytes`, 64 KiB)
    /// with its topic and headers; retained presence and discovery configs are a few KiB.
    public static let defaultMaxPacketBytes = 128 * 1024

    /// The protocol revisions a program can speak.
    public enum ProtocolVersion: String, ConfigEnum, Equatable {
        case v5 = "5"
        case v311 = "3.1.1"
    }

    public init(broker: BrokerURL = .localhost, username: String? = nil, password: String? = nil,
                passwordEnv: String? = nil, clientID: String? = nil, keepalive: Int = 30,
                topicPrefix: String = "roomcast", tls: TLSConfig? = nil, protocolVersion: ProtocolVersion = .v5,
                maxPacketBytes: Int = MQTTConfig.defaultMaxPacketBytes) {
        self.protocolVersion = protocolVersion
        self.maxPacketBytes = maxPacketBytes
        self.broker = broker
        self.username = username
        self.password = password.map { Secret($0) }
        self.passwordEnv = passwordEnv
        self.clientID = clientID
        self.keepalive = keepalive
        self.topicPrefix = topicPrefix
        self.tls = tls
    }

    /// The `tls:` subsection.
    public struct TLSConfig: Codable, Sendable, Equatable {
        /// PEM file of CAs to trust; nil means the system store.
        public var caFile: String?
        /// Client certificate (PEM) for mutual TLS; needs `key_file`.
        public var certFile: String?
        /// Client private key (PEM); needs `cert_file`.
        public var keyFile: String?
        /// Skip verifying the broker's host name (testing only).
        public var insecure: Bool

        public init(caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil, insecure: Bool = false) {
            self.caFile = caFile
            self.certFile = certFile
            self.keyFile = keyFile
            self.insecure = insecure
        }

        enum CodingKeys: String, CodingKey {
            case caFile = "ca_file", certFile = "cert_file", keyFile = "key_file", insecure
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            caFile = try c.decodeIfPresent(String.self, forKey: .caFile)
            certFile = try c.decodeIfPresent(String.self, forKey: .certFile)
            keyFile = try c.decodeIfPresent(String.self, forKey: .keyFile)
            insecure = try c.decode(Bool.self, forKey: .insecure, default: false)
        }
    }

    enum CodingKeys: String, CodingKey {
        case broker, username, password, tls, keepalive
        case passwordEnv = "password_env", clientID = "client_id", topicPrefix = "topic_prefix"
        case protocolVersion = "protocol", maxPacketBytes = "max_packet_bytes"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        broker = try c.decode(BrokerURL.self, forKey: .broker, default: .localhost)
        username = try c.decodeIfPresent(String.self, forKey: .username)
        password = try c.decodeIfPresent(Secret.self, forKey: .password)
        passwordEnv = try c.decodeIfPresent(String.self, forKey: .passwordEnv)
        clientID = try c.decodeIfPresent(String.self, forKey: .clientID)
        keepalive = try c.decode(Int.self, forKey: .keepalive, default: 30)
        topicPrefix = try c.decode(String.self, forKey: .topicPrefix, default: "roomcast")
        tls = try c.decodeIfPresent(TLSConfig.self, forKey: .tls)
        protocolVersion = try c.decode(ProtocolVersion.self, forKey: .protocolVersion, default: .v5)
        maxPacketBytes = try c.decode(Int.self, forKey: .maxPacketBytes, default: Self.defaultMaxPacketBytes)
    }

    /// Encodes for showing: the password, a `Secret`, encodes as `***`, and so does a
    /// `password_env` that may be the password itself.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(broker, forKey: .broker)
        try c.encodeIfPresent(username, forKey: .username)
        try c.encodeIfPresent(password, forKey: .password)
        try c.encodeIfPresent(passwordEnv.map { Secret.shownInConfig(variableName: $0) }, forKey: .passwordEnv)
        try c.encodeIfPresent(clientID, forKey: .clientID)
        try c.encode(keepalive, forKey: .keepalive)
        try c.encode(topicPrefix, forKey: .topicPrefix)
        try c.encodeIfPresent(tls, forKey: .tls)
        try c.encode(protocolVersion, forKey: .protocolVersion)
        try c.encode(maxPacketBytes, forKey: .maxPacketBytes)
    }

    /// The topic builder for `topic_prefix`.
    public var topics: Topics { Topics(prefix: topicPrefix) }

    /// User name and password to connect with.
    public struct Credentials: Sendable, Equatable, CustomStringConvertible {
        public var username: String?
        public var password: Secret?

        /// Never shows the password.
        public var description: String {
            "user=\(username ?? "-") password=\(password == nil ? "-" : "***")"
        }
    }

    /// Resolves the credentials. The password comes from, in order: the
    /// variable named by `password_env`, then `ROOMCAST_MQTT_PASSWORD` (when not empty), then
    /// `password`, then the broker URL. A `password_env` naming an unset
    /// variable is an error rather than a silent anonymous login.
    public func credentials(environment: [String: String] = ProcessInfo.processInfo.environment,
                            path: String = "mqtt") throws(ConfigError) -> Credentials {
        let user = username ?? broker.username
        /// A password goes to the broker with a user name only (MQTT 3.1.1 §3.1.2.9): say which
        /// password has none, here where the config's names are known.
        func withUser(_ password: Secret?, from source: String) throws(ConfigError) -> Credentials {
            guard password == nil || user != nil else {
                throw ConfigError(problems: [ConfigProblem(path: ConfigPath.child(path, "username"),
                    message: "a password is set (\(source)) but no user name; set username or write the broker as mqtt://user@host")])
            }
            return Credentials(username: user, password: password)
        }
        if let name = passwordEnv {
            guard let value = environment[name] else {
                throw ConfigError(problems: [ConfigProblem(path: ConfigPath.child(path, "password_env"),
                    message: "environment variable \(Secret.shownVariableName(name, key: "password_env")) is not set; export it or remove password_env")])
            }
            return try withUser(Secret(value), from: "environment variable \(name)")
        }
        // Set but empty (`ROOMCAST_MQTT_PASSWORD=` left in an env file) counts as unset, as the
        // HTTP token's variable does: an empty password would override the file's.
        if let value = environment[Self.passwordEnvironmentVariable], !value.isEmpty {
            return try withUser(Secret(value), from: "environment variable \(Self.passwordEnvironmentVariable)")
        }
        return try withUser(password ?? broker.password, from: password != nil ? ConfigPath.child(path, "password") : "in the broker URL")
    }

    package func validate(at path: String, into checks: inout ConfigChecks) {
        let p = { (key: String) in ConfigPath.child(path, key) }
        checks.topicPrefix(topicPrefix, at: p("topic_prefix"))
        checks.range(keepalive, 5...3600, at: p("keepalive"), unit: " s")
        if password != nil && passwordEnv != nil {
            checks.add(p("password"), "set either password or password_env, not both")
        }
        if let name = passwordEnv, name.isEmpty || name.contains("=") {
            checks.add(p("password_env"), "must be an environment variable name")
        }
        checks.range(maxPacketBytes, 0...268_435_460, at: p("max_packet_bytes"), unit: " bytes")
        if maxPacketBytes > 0 && maxPacketBytes < Self.smallestMaxPacketBytes {
            checks.add(p("max_packet_bytes"), "must be 0 (no limit) or at least \(Self.smallestMaxPacketBytes) bytes, found \(maxPacketBytes): "
                       + "the broker would drop messages Roomcast reads (payloads up to \(WireFormat.maxPayloadBytes) bytes) without a word")
        }
        if let username, username.isEmpty { checks.add(p("username"), "must not be empty (leave it out for none)") }
        if let id = clientID, id.isEmpty || id.utf8.count > 65535 {
            checks.add(p("client_id"), "must be 1 to 65535 bytes")
        }
        if let tls {
            if !broker.isTLS {
                checks.add(p("tls"), "TLS settings given but the broker URL is mqtt://; use mqtts://")
            }
            if (tls.certFile == nil) != (tls.keyFile == nil) {
                checks.add(ConfigPath.child(p("tls"), tls.certFile == nil ? "cert_file" : "key_file"),
                           "cert_file and key_file must be given together")
            }
        }
    }
}
