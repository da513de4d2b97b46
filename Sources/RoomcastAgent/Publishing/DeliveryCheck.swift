import Shared

/// Picks the few messages that go at QoS 1 so that a broker's refusal of a topic comes back.
///
/// Readings and the compatibility outputs go at QoS 0: a reading is worth sending only now, and
/// QoS 1 would have libmosquitto re-send old ones after a reconnect. But a broker that denies a
/// QoS 0 publish (its ACL) drops it without a word. So the first message of each topic family,
/// and then one a minute, goes at QoS 1: under MQTT 5 its PUBACK carries the refusal (0x87), which
/// the client counts and logs (`PublishRefusals`). Pure: the caller passes the time.
public struct DeliveryCheck: Sendable, Equatable {
    /// Time between two checked messages of one family, in seconds.
    public static let interval: Double = 60
    /// Families remembered; more (a topic layout this type does not expect) are all checked.
    static let maxFamilies = 64

    private var lastChecked: [String: Double] = [:]

    public init() {}

    /// The clock stepped back by `seconds`.
    mutating func clockSteppedBack(by seconds: Double) {
        for family in lastChecked.keys { lastChecked[family]! -= seconds }
    }

    /// Raises to QoS 1 the QoS 0 messages whose family is due a check at `now`.
    public mutating func mark(_ messages: inout [OutboundMessage], now: Double) {
        for i in messages.indices where messages[i].qos == 0 {
            let family = Self.family(of: messages[i].topic)
            if let last = lastChecked[family], now - last < Self.interval, now >= last { continue }
            if lastChecked.count >= Self.maxFamilies, lastChecked[family] == nil { lastChecked.removeAll() }
            lastChecked[family] = now
            messages[i].qos = 1
        }
    }

    /// After a reconnect: check every family again at once (the broker or its ACL may have changed).
    public mutating func reset() { lastChecked.removeAll() }

    /// The topic with each beacon-id level (`ibeacon:…`, `irk:…`: the only levels with a ':')
    /// replaced by `+`: `roomcast/nodes/hall-pi/beacons/+`, `espresense/devices/+/hall`.
    /// Runs for every message the agent publishes: one pass over the topic's bytes into one
    /// new string (splitting into levels and joining them again was a tenth of the agent's CPU).
    public static func family(of topic: String) -> String {
        var topic = topic
        // Native strings are contiguous already; `withUTF8` copies only a bridged or lazy one.
        return topic.withUTF8 { family(of: $0) } ?? topic
    }

    private static func family(of topic: UnsafeBufferPointer<UInt8>) -> String? {
        let colon = UInt8(ascii: ":"), slash = UInt8(ascii: "/"), plus = UInt8(ascii: "+")
        guard topic.contains(colon) else { return nil }
        return String(unsafeUninitializedCapacity: topic.count) { out in
            var n = 0
            var level = 0  // where the current level starts in `out`
            var replaced = false
            for byte in topic {
                if byte == slash {
                    out[n] = slash
                    n += 1
                    level = n
                    replaced = false
                } else if replaced {
                    continue
                } else if byte == colon {
                    n = level
                    out[n] = plus
                    n += 1
                    replaced = true
                } else {
                    out[n] = byte
                    n += 1
                }
            }
            return n
        }
    }
}
