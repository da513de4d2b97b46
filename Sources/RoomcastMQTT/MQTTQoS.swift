/// MQTT delivery guarantee. Roomcast uses at most QoS 1 (readings are
/// idempotent; QoS 2's extra round trip buys nothing here).
public enum MQTTQoS: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Fire and forget (QoS 0).
    case atMostOnce = 0
    /// Acknowledged by the broker, may arrive twice (QoS 1).
    case atLeastOnce = 1
}
