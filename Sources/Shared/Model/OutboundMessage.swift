import Foundation

/// A message a service wants published: topic, payload, retain flag, QoS.
/// Pure logic returns these; the MQTT layer (or `--dry-run`) sends them.
public struct OutboundMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var retain: Bool
    /// 0 or 1.
    public var qos: Int
    /// True when one of Roomcast's own encoders wrote `payload`, so it is certainly valid JSON and
    /// `--dry-run` need not check its syntax again. A hint about where the bytes came from, not part
    /// of the message: `==` ignores it.
    public var payloadIsEncodedJSON: Bool
    /// True for a message that says once that something happened (an agent's region event):
    /// refused while the broker is away, the agent holds it and sends it after the reconnect.
    /// Anything else is worth sending only now, even at QoS 1 (a reading raised to QoS 1 only
    /// to learn of a refusal). How the sender treats it, not part of the message: `==` ignores it.
    public var heldThroughOutage = false

    public init(topic: String, payload: [UInt8], retain: Bool = false, qos: Int = 0) {
        self.topic = topic
        self.payload = payload
        self.retain = retain
        self.qos = qos
        self.payloadIsEncodedJSON = false
    }

    /// A message whose payload one of Roomcast's own JSON encoders wrote (e.g. `BeaconReading.fastJSON()`).
    public init(topic: String, encodedJSON payload: [UInt8], retain: Bool = false, qos: Int = 0) {
        self.init(topic: topic, payload: payload, retain: retain, qos: qos)
        payloadIsEncodedJSON = true
    }

    /// A message with a JSON payload encoded per the wire format.
    public init<T: Encodable>(topic: String, json value: T, retain: Bool = false, qos: Int = 0) throws {
        self.init(topic: topic, encodedJSON: try WireFormat.encode(value), retain: retain, qos: qos)
    }

    public static func == (a: OutboundMessage, b: OutboundMessage) -> Bool {
        a.topic == b.topic && a.payload == b.payload && a.retain == b.retain && a.qos == b.qos
    }

    /// A message with a plain text payload (e.g. `online`).
    public init(topic: String, text: String, retain: Bool = false, qos: Int = 0) {
        self.init(topic: topic, payload: Array(text.utf8), retain: retain, qos: qos)
    }
}
