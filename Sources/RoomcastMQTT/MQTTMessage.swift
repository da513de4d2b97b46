/// One MQTT application message, inbound or outbound.
public struct MQTTMessage: Sendable, Hashable {
    /// Topic name (no wildcards).
    public var topic: String
    /// Raw payload bytes.
    public var payload: [UInt8]
    /// Delivery guarantee.
    public var qos: MQTTQoS
    /// Retained by the broker for late subscribers (inbound: delivered from the retained store).
    public var retain: Bool

    /// A message with a byte payload.
    public init(topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }

    /// A message with a UTF-8 text payload.
    public init(topic: String, string: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false) {
        self.init(topic: topic, payload: Array(string.utf8), qos: qos, retain: retain)
    }

    /// The payload decoded as UTF-8, nil when it is not valid UTF-8.
    public var payloadString: String? { String(validating: payload, as: UTF8.self) }
}
