import Shared
import RoomcastConfig

/// Everything an `MQTTClient` needs to reach and talk to one broker.
///
/// Broker URLs are parsed elsewhere (Shared's `BrokerURL`); this takes the
/// resulting fields. `validate()` reports every problem at once.
public struct MQTTClientConfiguration: Sendable, Hashable {
    /// MQTT protocol revision spoken on the wire.
    public enum ProtocolVersion: String, Sendable, Hashable, Codable, CaseIterable {
        /// MQTT 3.1.1.
        case v311
        /// MQTT 5.0.
        case v5
    }

    /// TLS settings; `nil` in the configuration means plain TCP.
    public struct TLS: Sendable, Hashable, Codable {
        /// PEM file of the CA(s) that sign the broker certificate; nil uses the system trust store.
        public var caFile: String?
        /// PEM client certificate, for brokers that require one (with `keyFile`).
        public var certificateFile: String?
        /// PEM private key of `certificateFile` (unencrypted).
        public var keyFile: String?
        /// Skip the check that the broker certificate names `host`. The chain is still
        /// verified. Only for test rigs and brokers reached by a name not in their certificate.
        public var insecure: Bool

        /// TLS options.
        public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil, insecure: Bool = false) {
            self.caFile = caFile
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.insecure = insecure
        }
    }

    /// Broker host name or address.
    public var host: String
    /// Broker TCP port.
    public var port: Int
    /// Client identifier; empty lets the broker or library pick one (needs `cleanSession`).
    public var clientID: String
    /// User name, if the broker wants one.
    public var username: String?
    /// Password; a `Secret`, so printing this configuration never shows it.
    public var password: Secret?
    /// Keep-alive interval in seconds (5...65535); a dead link is noticed after about 1.5x this.
    public var keepAlive: Int
    /// Protocol revision.
    public var protocolVersion: ProtocolVersion
    /// TLS options, nil for plain TCP.
    public var tls: TLS?
    /// Message the broker publishes if this client vanishes without a clean disconnect.
    public var lastWill: MQTTMessage?
    /// Start each connection with a fresh session (true) or resume the broker-side one.
    public var cleanSession: Bool
    /// Delay policy between failed connection attempts, including the first.
    public var reconnectBackoff: MQTTBackoff
    /// Seconds one attempt may take from TCP connect to CONNACK, and then the broker may stay
    /// silent before every re-sent subscription is acknowledged, before it is abandoned.
    public var connectTimeout: Double
    /// Inbound messages kept for a slow consumer; older ones are dropped and counted beyond this.
    public var inboundBufferSize: Int
    /// Topic and payload bytes kept for a slow consumer of `inboundBatches`; older messages are
    /// dropped and counted beyond this too. Default 64 MiB.
    public var inboundBufferBytes: Int
    /// Deliver inbound messages through `MQTTClient.inboundBatches` (a batch per turn of the
    /// loop thread) instead of `messages` (one at a time): for a consumer of tens of thousands
    /// a second. Default false.
    public var batchInbound: Bool
    /// Outbound QoS 1 messages not yet acknowledged before `publish` refuses more.
    public var outboundQueueLimit: Int
    /// Outbound QoS 0 messages not yet written to the socket before `publish` refuses
    /// more. libmosquitto queues them without bound when the link is slower than the
    /// radio; refusing (and counting) keeps memory bounded and never sends a backlog of
    /// old readings later.
    public var outboundQoS0Limit: Int
    /// The largest packet the broker may send this client, in bytes (MQTT 5 Maximum Packet
    /// Size, §3.1.2.11.4): the broker drops a bigger message for this client instead of
    /// sending it, so it is never read into memory here. Needs `.v5` (MQTT 3.1.1 has no way
    /// to say it); nil means no limit.
    public var maximumPacketSize: Int?

    /// A configuration with Roomcast's defaults.
    public init(
        host: String,
        port: Int = 1883,
        clientID: String = "",
        username: String? = nil,
        password: String? = nil,
        keepAlive: Int = 30,
        protocolVersion: ProtocolVersion = .v5,
        tls: TLS? = nil,
        lastWill: MQTTMessage? = nil,
        cleanSession: Bool = true,
        reconnectBackoff: MQTTBackoff = MQTTBackoff(),
        connectTimeout: Double = 10,
        inboundBufferSize: Int = 1024,
        inboundBufferBytes: Int = 64 << 20,
        outboundQueueLimit: Int = 1000,
        outboundQoS0Limit: Int = 10_000,
        maximumPacketSize: Int? = nil,
        batchInbound: Bool = false
    ) {
        self.host = host
        self.port = port
        self.clientID = clientID
        self.username = username
        self.password = password.map { Secret($0) }
        self.keepAlive = keepAlive
        self.protocolVersion = protocolVersion
        self.tls = tls
        self.lastWill = lastWill
        self.cleanSession = cleanSession
        self.reconnectBackoff = reconnectBackoff
        self.connectTimeout = connectTimeout
        self.inboundBufferSize = inboundBufferSize
        self.inboundBufferBytes = inboundBufferBytes
        self.outboundQueueLimit = outboundQueueLimit
        self.outboundQoS0Limit = outboundQoS0Limit
        self.maximumPacketSize = maximumPacketSize
        self.batchInbound = batchInbound
    }

    /// The largest Maximum Packet Size MQTT 5 can express: a 268,435,455-byte remaining length
    /// plus the fixed header.
    public static let maximumPacketSizeLimit = 268_435_460

    /// Every problem with this configuration, each naming its field; empty when valid.
    public func validate(path: String = "mqtt") -> [String] {
        var out: [String] = []
        if host.isEmpty { out.append("\(path).host must not be empty") }
        if !(1...65535).contains(port) { out.append("\(path).port must be within 1...65535 (got \(port))") }
        if clientID.utf8.count > 65535 { out.append("\(path).clientID is longer than 65535 bytes") }
        if !cleanSession && clientID.isEmpty {
            out.append("\(path).clientID must be set when cleanSession is false (the broker keys the session by it)")
        }
        if password != nil && username == nil { out.append("\(path).password is set without a username") }
        if let n = maximumPacketSize {
            if !(1...Self.maximumPacketSizeLimit).contains(n) {
                out.append("\(path).maximumPacketSize must be within 1...\(Self.maximumPacketSizeLimit) bytes (got \(n))")
            }
            if protocolVersion != .v5 { out.append("\(path).maximumPacketSize needs protocolVersion v5 (MQTT 3.1.1 cannot send it)") }
        }
        if !(5...65535).contains(keepAlive) { out.append("\(path).keepAlive must be within 5...65535 seconds (got \(keepAlive))") }
        if let tls {
            if (tls.certificateFile == nil) != (tls.keyFile == nil) {
                out.append("\(path).tls.certificateFile and \(path).tls.keyFile must be given together")
            }
        }
        if let will = lastWill, will.topic.isEmpty || will.topic.contains(where: { $0 == "+" || $0 == "#" }) {
            out.append("\(path).lastWill.topic must be a topic name without wildcards (got \"\(will.topic)\")")
        }
        out += reconnectBackoff.problems(at: "\(path).reconnectBackoff")
        if !(connectTimeout > 0) { out.append("\(path).connectTimeout must be > 0 seconds (got \(connectTimeout))") }
        if !(1...1_000_000).contains(inboundBufferSize) {
            out.append("\(path).inboundBufferSize must be within 1...1000000 (got \(inboundBufferSize))")
        }
        if inboundBufferBytes < 1 {
            out.append("\(path).inboundBufferBytes must be at least 1 (got \(inboundBufferBytes))")
        }
        if !(1...65535).contains(outboundQueueLimit) {
            out.append("\(path).outboundQueueLimit must be within 1...65535 (got \(outboundQueueLimit))")
        }
        return out
    }

    /// `host:port` for messages and logs.
    public var endpoint: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
