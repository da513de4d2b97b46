import Shared

/// Messages for other ecosystems, each off by default: Home Assistant's
/// `mqtt_room` sensor and ESPresense tooling, so one Roomcast node can stand in
/// for those nodes. Which are published is a list of `CompatibilityOutput`s.
public struct CompatibilityOutputs: Sendable {
    /// The outputs published, in the order of `CompatibilityOutput.all`.
    public var enabled: [CompatibilityOutput]
    /// The room reported for this node (`mqtt_room` and ESPresense key by room).
    public let room: String

    public init(room: String, enabled: [CompatibilityOutput] = []) {
        self.room = room
        self.enabled = enabled
    }

    public var isEnabled: Bool { !enabled.isEmpty }

    /// The extra messages for one published reading.
    public func messages(for r: BeaconReading) -> [OutboundMessage] {
        enabled.compactMap { $0.message(r, room) }
    }
}
