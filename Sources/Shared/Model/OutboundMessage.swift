import Foundation

/// A message a service wants published: topic, payload, retain flag, QoS.
/// Pure logic returns these; the MQTT layer (or `--dry-run`) sends them.
public struct OutboundMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var retain: Bool
    /// 0 or 1.
    public var qos: Int

    public init(topic: String, payload: [UInt8], retain: Bool = false, qos: Int = 0) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
        self.qos = qos
    }

    /// A message with a JSON payload encoded per the wire format.
    public init<T: Encodable>(topic: String, json value: T, retain: Bool = false, qos: Int = 0) throws {
        self.init(topic: topic, payload: try WireFormat.encode(value), retain: retain, qos: qos)
    }

    /// A message with a plain text payload (e.g. `online`).
    public init(topic: String, text: String, retain: Bool = false, qos: Int = 0) {
        self.init(topic: topic, payload: Array(text.utf8), retain: retain, qos: qos)
    }
}

/// One line of `--dry-run` output and of `aggregator replay` input/output:
/// `{"payload": <JSON or string>, "retain": bool, "topic": "...", "ts": <unix seconds>}`.
/// A JSON payload is embedded as JSON; anything else as a string.
public struct MessageLogLine: Sendable, Equatable {
    public var ts: Double
    public var topic: String
    public var payload: [UInt8]
    public var retain: Bool

    public init(ts: Double, topic: String, payload: [UInt8], retain: Bool = false) {
        self.ts = ts
        self.topic = topic
        self.payload = payload
        self.retain = retain
    }

    public init(ts: Double, message: OutboundMessage) {
        self.init(ts: ts, topic: message.topic, payload: message.payload, retain: message.retain)
    }

    /// One JSONL line without the trailing newline; keys sorted.
    public func encoded() -> String {
        let payloadText: String
        if let first = payload.first(where: { $0 != 0x20 }), first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
           (try? JSONSerialization.jsonObject(with: Data(payload))) != nil {
            payloadText = String(decoding: payload, as: UTF8.self)
        } else {
            payloadText = Self.jsonString(String(decoding: payload, as: UTF8.self))
        }
        let tsText = Self.formatTimestamp(ts)
        return "{\"payload\":\(payloadText),\"retain\":\(retain),\"topic\":\(Self.jsonString(topic)),\"ts\":\(tsText)}"
    }

    /// Parses one line; payload objects come back as their JSON bytes.
    public static func decode(_ line: String) throws(WireFormatError) -> MessageLogLine {
        guard let obj = try? JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed]) as? [String: Any] else {
            throw .invalid("not a JSON object")
        }
        guard let ts = (obj["ts"] as? NSNumber)?.doubleValue, ts.isFinite else { throw .invalid("ts: missing or not a number") }
        guard let topic = obj["topic"] as? String else { throw .invalid("topic: missing") }
        let retain = (obj["retain"] as? Bool) ?? false
        let payload: [UInt8]
        switch obj["payload"] {
        case let s as String: payload = Array(s.utf8)
        case .some(let v) where JSONSerialization.isValidJSONObject(v):
            guard let data = try? JSONSerialization.data(withJSONObject: v, options: [.sortedKeys, .withoutEscapingSlashes]) else {
                throw .invalid("payload: not encodable")
            }
            payload = Array(data)
        case nil, is NSNull: payload = []
        default: throw .invalid("payload: unsupported type")
        }
        return MessageLogLine(ts: ts, topic: topic, payload: payload, retain: retain)
    }

    static func formatTimestamp(_ t: Double) -> String {
        let ms = (t * 1000).rounded()
        // Int64 traps past ±9.2e18 ms, which a corrupt replay line reaches (found by fuzzing).
        // A Double that large is a whole number of milliseconds, so its shortest form is exact JSON.
        guard ms.magnitude < 9e18 else { return "\(t)" }
        let n = Int64(ms)
        let whole = n / 1000
        let frac = (n % 1000).magnitude
        // Between -1 and 0 the integer part is 0 and alone would drop the sign.
        let sign = n < 0 && whole == 0 ? "-" : ""
        return frac == 0 ? "\(whole)" : "\(sign)\(whole)." + String(String(frac + 1000).dropFirst()).replacingOccurrences(of: "0+$", with: "", options: .regularExpression)
    }

    static func jsonString(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
            }
        }
        return out + "\""
    }
}
