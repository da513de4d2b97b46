/// What went wrong talking to a broker; every message says what to check.
public enum MQTTError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The configuration cannot work; each entry names a field.
    case invalidConfiguration([String])
    /// An operation needs a live connection and there is none right now.
    case notConnected
    /// The client was shut down.
    case shutDown
    /// Nothing listens at the broker address (TCP connection refused).
    case connectionRefused(endpoint: String)
    /// The broker host name could not be resolved.
    case hostLookupFailed(host: String, detail: String)
    /// The broker address is unreachable (no route, timeout at the TCP level).
    case unreachable(endpoint: String, detail: String)
    /// No CONNACK within the configured connect timeout.
    case connectTimedOut(endpoint: String, seconds: Double)
    /// The TLS handshake failed (untrusted certificate, name mismatch, client certificate rejected).
    case tlsHandshakeFailed(endpoint: String, detail: String)
    /// The broker rejected the user name or password (CONNACK 4, MQTT 5 reason 0x86).
    case badCredentials(endpoint: String, username: String?)
    /// The broker does not allow this client to connect (CONNACK 5, MQTT 5 reason 0x87);
    /// mosquitto 2.0 also answers a wrong password this way.
    case notAuthorized(endpoint: String, username: String?)
    /// The broker refused the connection for another reason.
    case brokerRefused(endpoint: String, code: Int, reason: String)
    /// An established connection was lost.
    case connectionLost(endpoint: String, detail: String)
    /// `waitUntilConnected` ran out of time; `lastError` is the latest attempt's failure.
    case timedOut(seconds: Double, lastError: String?)
    /// The waiting task was cancelled.
    case cancelled
    /// A topic name or filter is malformed.
    case invalidTopic(String)
    /// The payload is larger than MQTT (or the broker) allows.
    case payloadTooLarge(topic: String, bytes: Int)
    /// Too many QoS 1 messages await acknowledgement.
    case outboundQueueFull(limit: Int)
    /// The broker refused a subscription (typically an ACL).
    case subscriptionRejected(filter: String)
    /// Any other libmosquitto failure, with the call that failed.
    case library(call: String, code: Int, message: String)

    /// True for failures that retrying with the same settings will not fix
    /// (credentials, TLS trust, configuration); `waitUntilConnected` reports them at once.
    public var isPermanent: Bool {
        switch self {
        case .invalidConfiguration, .tlsHandshakeFailed, .badCredentials, .notAuthorized, .shutDown: true
        case .brokerRefused(_, let code, _): code == 1 || code == 2 || code == 0x84 || code == 0x85 || code == 0x8C
        default: false
        }
    }

    /// True when the broker refused the credentials or the client.
    public var isAuthenticationFailure: Bool {
        switch self {
        case .badCredentials, .notAuthorized: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .invalidConfiguration(let problems):
            return "invalid MQTT configuration: " + problems.joined(separator: "; ")
        case .notConnected:
            return "not connected to the MQTT broker; the message was not sent (the client reconnects on its own)"
        case .shutDown:
            return "the MQTT client has been shut down"
        case .connectionRefused(let ep):
            return "connection to MQTT broker \(ep) refused: is mosquitto running and listening on that port?"
        case .hostLookupFailed(let host, let detail):
            return "cannot resolve MQTT broker host \"\(host)\": \(detail); check the host name and DNS"
        case .unreachable(let ep, let detail):
            return "MQTT broker \(ep) unreachable: \(detail); check the address, network and firewall"
        case .connectTimedOut(let ep, let s):
            return "no answer from MQTT broker \(ep) within \(Self.seconds(s)); check the address, port and whether TLS is expected there"
        case .tlsHandshakeFailed(let ep, let detail):
            return "TLS handshake with MQTT broker \(ep) failed: \(detail); check that the CA file signed the broker's certificate, that the host matches the certificate's name (the `insecure` switch skips only that name check), that no certificate has expired or is not yet valid by this machine's clock (a Pi without a clock battery is wrong until NTP sets it: check `date`) and, if the broker requires one, the client certificate"
        case .badCredentials(let ep, let user):
            return "MQTT broker \(ep) refused the connection: bad user name or password\(Self.user(user)); fix the credentials (mosquitto_passwd on the broker)"
        case .notAuthorized(let ep, let user):
            // mosquitto 2.0 also answers a wrong password with "not authorised".
            if let user {
                return "MQTT broker \(ep) refused the connection: not authorised for user \"\(user)\"; check the password for user \"\(user)\" (mosquitto reports a wrong password this way) and that the broker allows this user"
            }
            return "MQTT broker \(ep) refused the connection: not authorised (no user name given); set username and password, or allow anonymous clients on the broker"
        case .brokerRefused(let ep, let code, let reason):
            return "MQTT broker \(ep) refused the connection: \(reason) (code \(code))"
        case .connectionLost(let ep, let detail):
            return "connection to MQTT broker \(ep) lost: \(detail)"
        case .timedOut(let s, let last):
            return "not connected to the MQTT broker after \(Self.seconds(s))" + (last.map { "; last attempt: \($0)" } ?? "")
        case .cancelled:
            return "waiting for the MQTT connection was cancelled"
        case .invalidTopic(let t):
            return "invalid MQTT topic \"\(t)\": topic names must be non-empty UTF-8 without + or #; filters may use + for one level and # only at the end"
        case .payloadTooLarge(let t, let n):
            return "payload of \(n) bytes on \(t) is too large for MQTT or the broker's maximum packet size"
        case .outboundQueueFull(let limit):
            return "\(limit) QoS 1 messages are still waiting for the broker's acknowledgement; this one was not sent"
        case .subscriptionRejected(let f):
            return "the MQTT broker rejected the subscription to \"\(f)\"; check the broker's ACL for this user"
        case .library(let call, let code, let message):
            return "\(call) failed: \(message) (libmosquitto error \(code))"
        }
    }

    private static func seconds(_ s: Double) -> String {
        s == s.rounded() ? "\(Int(s)) s" : "\(s) s"
    }

    private static func user(_ u: String?) -> String { u.map { " for user \"\($0)\"" } ?? " (no user name given)" }
}
