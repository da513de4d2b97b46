import Foundation
import Shared
import RoomcastConfig

extension MQTTConfig {
    /// The MQTT client configuration: broker, credentials, TLS, protocol and packet limit, and the Last Will.
    public func clientConfiguration(clientID defaultID: String, will: OutboundMessage?) throws(ConfigError) -> MQTTClientConfiguration {
        let credentials = try credentials()
        let tlsOptions: MQTTClientConfiguration.TLS?
        if let tls {
            // Named as the config names them: the client library's own error would say `caFile`.
            let unreadable = [("ca_file", tls.caFile), ("cert_file", tls.certFile), ("key_file", tls.keyFile)].compactMap { key, file in
                file.flatMap { FileManager.default.isReadableFile(atPath: $0) ? nil : ConfigProblem(
                    path: ConfigPath.child(ConfigPath.child("mqtt", "tls"), key), message: "'\($0)' cannot be read") }
            }
            if !unreadable.isEmpty { throw ConfigError(problems: unreadable) }
            if let problem = MQTTClient.pemProblem(certificate: tls.certFile, key: tls.keyFile) {
                let key = problem.field == "keyFile" ? "key_file" : "cert_file"
                throw ConfigError(problems: [ConfigProblem(path: ConfigPath.child(ConfigPath.child("mqtt", "tls"), key), message: problem.message)])
            }
            tlsOptions = .init(caFile: tls.caFile, certificateFile: tls.certFile, keyFile: tls.keyFile, insecure: tls.insecure)
        } else if broker.isTLS {
            tlsOptions = .init(caFile: Self.systemCAFile)
        } else {
            tlsOptions = nil
        }
        return MQTTClientConfiguration(
            host: broker.host, port: broker.port, clientID: clientID ?? defaultID, username: credentials.username,
            password: credentials.password?.revealed, keepAlive: keepalive, protocolVersion: protocolVersion == .v5 ? .v5 : .v311,
            tls: tlsOptions,
            lastWill: will.map { MQTTMessage(topic: $0.topic, payload: $0.payload, qos: .atLeastOnce, retain: $0.retain) },
            // MQTT 3.1.1 cannot carry the limit (the default is then simply not sent).
            maximumPacketSize: protocolVersion == .v5 && maxPacketBytes > 0 ? maxPacketBytes : nil)
    }

    /// Debian's bundle of trusted CAs, for `mqtts://` without an explicit `tls.ca_file`.
    static let systemCAFile = "/etc/ssl/certs/ca-certificates.crt"
}
