internal import CMosquitto
import Foundation

/// The one place libmosquitto return codes become `MQTTError`s.
enum Mosquitto {
    /// mosquitto_lib_init, exactly once per process: Swift initialises globals
    /// lazily under a once-lock, which makes this thread-safe.
    static let initialised: Int32 = mosquitto_lib_init()

    static let success = Int32(MOSQ_ERR_SUCCESS.rawValue)

    /// libmosquitto's version, e.g. "2.0.11".
    static var version: String {
        var major: Int32 = 0, minor: Int32 = 0, rev: Int32 = 0
        _ = mosquitto_lib_version(&major, &minor, &rev)
        return "\(major).\(minor).\(rev)"
    }

    /// Maps a return code of `call` to an error; `errnoValue` must be captured right after the call.
    /// `payloadBytes`: the size of a publish's payload (a subscribe has none).
    static func error(_ rc: Int32, call: String, errnoValue: Int32, endpoint: String, host: String, topic: String? = nil,
                      payloadBytes: Int? = nil) -> MQTTError {
        switch rc {
        case Int32(MOSQ_ERR_NO_CONN.rawValue):
            return .notConnected
        case Int32(MOSQ_ERR_CONN_LOST.rawValue):
            return .connectionLost(endpoint: endpoint, detail: "the broker closed the connection")
        case Int32(MOSQ_ERR_KEEPALIVE.rawValue):
            return .connectionLost(endpoint: endpoint, detail: "no answer to keep-alive pings")
        case Int32(MOSQ_ERR_TLS.rawValue), Int32(MOSQ_ERR_TLS_HANDSHAKE.rawValue):
            return .tlsHandshakeFailed(endpoint: endpoint, detail: "TLS error")
        case Int32(MOSQ_ERR_EAI.rawValue):
            return .hostLookupFailed(host: host, detail: String(cString: gai_strerror(errnoValue)))
        case Int32(MOSQ_ERR_PAYLOAD_SIZE.rawValue), Int32(MOSQ_ERR_OVERSIZE_PACKET.rawValue):
            if let topic, let payloadBytes { return .payloadTooLarge(topic: topic, bytes: payloadBytes) }
        case Int32(MOSQ_ERR_INVAL.rawValue), Int32(MOSQ_ERR_MALFORMED_UTF8.rawValue):
            if let topic { return .invalidTopic(topic) }
        case Int32(MOSQ_ERR_ERRNO.rawValue):
            return errnoError(errnoValue, endpoint: endpoint)
        default:
            break
        }
        return .library(call: call, code: Int(rc), message: String(cString: mosquitto_strerror(rc)))
    }

    /// Maps a socket errno to an error.
    static func errnoError(_ e: Int32, endpoint: String) -> MQTTError {
        let text = String(cString: strerror(e))
        switch e {
        case ECONNREFUSED: return .connectionRefused(endpoint: endpoint)
        case ETIMEDOUT, EHOSTUNREACH, ENETUNREACH, EHOSTDOWN, ENETDOWN: return .unreachable(endpoint: endpoint, detail: text)
        case EPROTO: return .tlsHandshakeFailed(endpoint: endpoint, detail: text)
        default: return .connectionLost(endpoint: endpoint, detail: text)
        }
    }

    /// Maps a refusing CONNACK code (MQTT 3.1.1 return code or MQTT 5 reason code) to an error.
    static func connackError(_ code: Int, endpoint: String, username: String?) -> MQTTError {
        switch code {
        case 4, 0x86: return .badCredentials(endpoint: endpoint, username: username)
        case 5, 0x87: return .notAuthorized(endpoint: endpoint, username: username)
        default:
            let reason: String
            switch code {
            case 1, 0x84: reason = "unacceptable protocol version (try the other protocolVersion)"
            // MQTT 3.1.1 has no code for a keep-alive the broker will not take: mosquitto 2.0.12
            // and later say this one for it too.
            case 2: reason = "client identifier rejected (choose another clientID), or a keep-alive longer than the broker allows (mosquitto's max_keepalive: lower mqtt.keepalive)"
            case 0x85: reason = "client identifier rejected (choose another clientID)"
            case 3, 0x88: reason = "server unavailable"
            case 0x89: reason = "server busy"
            case 0x8A: reason = "client banned"
            case 0x8C: reason = "bad authentication method"
            case 0x97: reason = "quota exceeded"
            default: reason = String(cString: code < 128 ? mosquitto_connack_string(Int32(code)) : mosquitto_reason_string(Int32(code)))
            }
            return .brokerRefused(endpoint: endpoint, code: code, reason: reason)
        }
    }

    /// What an MQTT 5 broker's DISCONNECT reason code says, and what to do about it.
    static func disconnectReason(_ code: Int) -> String {
        let reason = String(cString: mosquitto_reason_string(Int32(code))).lowercased()
        let said = "the broker disconnected this client (0x\(String(code, radix: 16, uppercase: true)), \(reason))"
        // Two programs with one client id displace each other: say what to do about it.
        guard code == 0x8E else { return said }
        return said + ": another client connected with the same client id; give each program its own (a copied config, or a second process with one name)"
    }
}
