import Shared

extension MQTTConfig {
    /// The MQTT client configuration: broker, credentials, TLS, and the Last Will.
    public func clientConfiguration(clientID defaultID: String, will: OutboundMessage?) throws(ConfigError) -> MQTTClientConfiguration {
        let credentials = try credentials()
        let tlsOptions: MQTTClientConfiguration.TLS?
        if let tls {
            tlsOptions = .init(caFile: tls.caFile, certificateFile: tls.certFile, keyFile: tls.keyFile, insecure: tls.insecure)
        } else if broker.isTLS {
            tlsOptions = .init(caFile: Self.systemCAFile)
        } else {
            tlsOptions = nil
        }
        return MQTTClientConfiguration(
            host: broker.host, port: broker.port, clientID: clientID ?? defaultID, username: credentials.username,
            password: credentials.password, keepAlive: keepalive, tls: tlsOptions,
            lastWill: will.map { MQTTMessage(topic: $0.topic, payload: $0.payload, qos: .atLeastOnce, retain: $0.retain) })
    }

    /// Debian's bundle of trusted CAs, for `mqtts://` without an explicit `tls.ca_file`.
    static let systemCAFile = "/etc/ssl/certs/ca-certificates.crt"
}
