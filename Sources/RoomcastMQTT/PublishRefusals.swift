import RoomcastLogging

/// Publishes the broker acknowledged with a refusing MQTT 5 reason code (PUBACK ≥ 0x80, e.g.
/// 0x87 Not authorized when its ACL denies the topic), counted per topic family, and when to
/// say so in the log.
///
/// A broker that denies a publish drops it; under MQTT 3.1.1 or at QoS 0 the client never
/// hears of it. Under MQTT 5 a QoS 1 publish comes back with the reason, and this is where it
/// is kept. Pure: the caller passes the time, so the pacing is tested without waiting.
public struct PublishRefusals: Sendable, Equatable {
    /// Shortest gap between two log lines about refusals; while they go on, the gaps grow to
    /// hourly (`LogPacing`): a broker whose ACL denies a node's topics does so for good.
    public static let logInterval: Double = 60
    /// Most topic families counted apart; further ones are counted under `otherFamily`, so a
    /// broker refusing everything cannot grow this without bound.
    public static let maxFamilies = 32
    public static let otherFamily = "(other topics)"

    /// Refusals since start, per topic family.
    public private(set) var byFamily: [String: Int] = [:]
    /// The reason code of the latest refusal.
    public private(set) var lastReason: Int?
    private var lines = LogPacing(interval: PublishRefusals.logInterval)
    private var loggedTotal = 0

    public init() {}

    /// All refusals since start.
    public var total: Int { byFamily.values.reduce(0, +) }

    /// Counts one refusal of a publish in `family` with `reason`.
    public mutating func record(family: String, reason: Int) {
        let key = byFamily[family] != nil || byFamily.count < Self.maxFamilies ? family : Self.otherFamily
        byFamily[key, default: 0] += 1
        lastReason = reason
    }

    /// What to log now: nil unless refusals came since the last report and a line is due (the
    /// first at once, then from `logInterval` apart ever further apart while they go on).
    public mutating func report(now: Double) -> Report? {
        let total = self.total
        guard total > loggedTotal, lines.admit(now: now).admit else { return nil }
        let report = Report(sinceLast: total - loggedTotal, total: total, byFamily: byFamily, reason: lastReason ?? 0)
        loggedTotal = total
        return report
    }

    /// One log line's worth.
    public struct Report: Sendable, Equatable {
        public var sinceLast: Int
        public var total: Int
        public var byFamily: [String: Int]
        public var reason: Int

        /// `room_presence/hall=12, espresense/devices/+/hall=12`, most refused first.
        public var families: String {
            byFamily.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        }
    }

    /// MQTT 5 reason codes a PUBACK can carry (MQTT 5.0 §3.4.2.1), as words; and 0x95, which
    /// mosquitto sends for a message over its `message_size_limit`.
    public static func describe(reason: Int) -> String {
        let name: String = switch reason {
        case 0x10: "no matching subscribers"
        case 0x80: "unspecified error"
        case 0x83: "implementation specific error"
        case 0x87: "not authorized"
        case 0x90: "topic name invalid"
        case 0x91: "packet identifier in use"
        case 0x95: "packet too large"
        case 0x97: "quota exceeded"
        case 0x99: "payload format invalid"
        default: "reason code"
        }
        return "0x" + String(reason, radix: 16, uppercase: true) + " " + name
    }
}
