internal import CMosquitto
import Foundation
import Shared

/// Making the libmosquitto handle: identity, protocol, TLS, will and limits, each setting checked.
extension MQTTClient {
    /// Creates and configures a mosquitto handle; destroys it again if any setting fails.
    static func makeHandle(_ cfg: MQTTClientConfiguration, endpoint: String) throws(MQTTError) -> OpaquePointer {
        guard let h = mosquitto_new(cfg.clientID.isEmpty ? nil : cfg.clientID, cfg.cleanSession, nil) else {
            throw .library(call: "mosquitto_new", code: Int(errno), message: String(cString: strerror(errno)))
        }
        func check(_ rc: Int32, _ call: String, _ problem: @autoclosure () -> String? = nil) throws(MQTTError) {
            guard rc != Mosquitto.success else { return }
            mosquitto_destroy(h)
            if let problem = problem() { throw .invalidConfiguration([problem]) }
            throw Mosquitto.error(rc, call: call, errnoValue: errno, endpoint: endpoint, host: cfg.host)
        }
        // Several threads use the handle (publishers, the loop thread): turn on libmosquitto's locking.
        try check(mosquitto_threaded_set(h, true), "mosquitto_threaded_set")
        let version: Int32 = cfg.protocolVersion == .v5 ? 5 : 4 // MQTT_PROTOCOL_V5 / MQTT_PROTOCOL_V311
        try check(mosquitto_int_option(h, MOSQ_OPT_PROTOCOL_VERSION, version), "mosquitto_int_option")
        // libmosquitto keeps at most 20 QoS 1 messages in flight and queues the rest until PUBACKs
        // come back: a tick that decides thousands of beacons then trickles out 20 per round trip
        // to a busy broker while `outboundQueueLimit` fills and refuses what follows. As many as
        // that limit may be in flight; under MQTT 5 the broker's Receive Maximum still caps it.
        try check(mosquitto_int_option(h, MOSQ_OPT_SEND_MAXIMUM, Int32(Swift.max(1, Swift.min(65_535, cfg.outboundQueueLimit)))),
                  "mosquitto_int_option")
        if cfg.protocolVersion == .v5 {
            // Under MQTT 5 the broker keeps at most the client's Receive Maximum of QoS 1 messages
            // in flight to it, in place of its own max_inflight_messages (libmosquitto offers 20).
            // This client acknowledges each one as it reads it and holds none, so it offers the
            // most, as an MQTT 3.1.1 client gets from a broker with max_inflight_messages 0.
            try check(mosquitto_int_option(h, MOSQ_OPT_RECEIVE_MAXIMUM, 65535), "mosquitto_int_option")
        }
        if let size = cfg.maximumPacketSize {
            try check(stashConnectProperties(h, maximumPacketSize: size), "mosquitto_connect_bind_v5",
                      "mqtt.maximumPacketSize \(size) was refused by libmosquitto (it needs protocolVersion v5)")
        }
        if let user = cfg.username {
            try check(mosquitto_username_pw_set(h, user, cfg.password?.revealed), "mosquitto_username_pw_set")
        }
        if let will = cfg.lastWill {
            let rc = will.payload.withUnsafeBytes { buf in
                mosquitto_will_set(h, will.topic, Int32(buf.count), buf.baseAddress, Int32(will.qos.rawValue), will.retain)
            }
            try check(rc, "mosquitto_will_set", "mqtt.lastWill is not a valid will (topic \"\(will.topic)\", \(will.payload.count) bytes)")
        }
        if let tls = cfg.tls {
            for (field, path) in [("caFile", tls.caFile), ("certificateFile", tls.certificateFile), ("keyFile", tls.keyFile)] {
                if let path, !FileManager.default.isReadableFile(atPath: path) {
                    mosquitto_destroy(h)
                    throw .invalidConfiguration(["mqtt.tls.\(field) \"\(path)\" cannot be read"])
                }
            }
            // libmosquitto loads the client's certificate and key only when it connects, and an
            // unusable one then reads as a failed handshake with the broker, retried for good.
            if let problem = Self.pemProblem(certificate: tls.certificateFile, key: tls.keyFile) {
                mosquitto_destroy(h)
                throw .invalidConfiguration(["mqtt.tls.\(problem.field) \(problem.message)"])
            }
            if tls.caFile == nil {
                try check(mosquitto_int_option(h, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "mosquitto_int_option")
            }
            // A pass-phrase callback that gives none: without one, OpenSSL asks for an encrypted
            // key's pass phrase on the terminal at connect, and the loop thread waited there.
            let rc = mosquitto_tls_set(h, tls.caFile, tls.caFile == nil ? "/etc/ssl/certs" : nil,
                                       tls.certificateFile, tls.keyFile, { _, _, _, _ in 0 })
            try check(rc, "mosquitto_tls_set", "mqtt.tls files were refused by libmosquitto (caFile, certificateFile, keyFile must be PEM; the key unencrypted)")
            try check(mosquitto_tls_insecure_set(h, tls.insecure), "mosquitto_tls_insecure_set")
        }
        return h
    }

    /// Why the client certificate or key cannot be used, as far as reading them tells: not PEM,
    /// or an encrypted key (no one is there to type its pass phrase). Whether they match each
    /// other is found at the connect (`didLog`). `field`: `certificateFile` or `keyFile`.
    package static func pemProblem(certificate: String?, key: String?) -> (field: String, message: String)? {
        func head(_ path: String) -> String {
            guard let handle = FileHandle(forReadingAtPath: path) else { return "" }
            defer { try? handle.close() }
            return String(decoding: (try? handle.read(upToCount: 64 * 1024)) ?? Data(), as: UTF8.self)
        }
        if let certificate, !head(certificate).contains("-----BEGIN CERTIFICATE-----") {
            return ("certificateFile", "\"\(certificate)\" is not a PEM certificate (-----BEGIN CERTIFICATE-----)")
        }
        if let key {
            let text = head(key)
            guard text.contains("-----BEGIN") && text.contains("PRIVATE KEY-----") else {
                return ("keyFile", "\"\(key)\" is not a PEM private key (-----BEGIN PRIVATE KEY-----)")
            }
            if text.contains("ENCRYPTED") {
                return ("keyFile", "\"\(key)\" is encrypted; give it unencrypted (openssl pkey -in KEY -out KEY.plain), readable only by the service")
            }
        }
        return nil
    }
}

/// Stores the CONNECT properties (MQTT 5 Maximum Packet Size) in the handle without connecting.
///
/// libmosquitto takes CONNECT properties only through `mosquitto_connect_bind_v5`, which connects
/// blocking (a black-holed broker would hold the loop thread for the kernel's SYN timeout, past
/// `connectTimeout` and `shutdown()`). It copies the properties into the handle before it looks at
/// the host, and every later connect (`mosquitto_connect_async`, `mosquitto_reconnect_async`)
/// sends the stored ones; called with no host it stores them and returns MOSQ_ERR_INVAL without
/// touching the network. Only a wrong property or protocol version is a failure here. The tests
/// check that the broker honours the limit on the first connection and after a reconnect.
func stashConnectProperties(_ h: OpaquePointer, maximumPacketSize: Int) -> Int32 {
    var props: OpaquePointer?
    defer { mosquitto_property_free_all(&props) }
    let added = mosquitto_property_add_int32(&props, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue), UInt32(maximumPacketSize))
    guard added == Mosquitto.success else { return added }
    let rc = mosquitto_connect_bind_v5(h, nil, 0, 0, nil, props)
    return rc == Int32(MOSQ_ERR_INVAL.rawValue) ? Mosquitto.success : rc
}
