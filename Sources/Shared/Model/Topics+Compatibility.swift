extension Topics {
    /// The topics of other ecosystems' formats, which take no prefix (docs/mqtt-api.md,
    /// compatibility outputs): Home Assistant's mqtt_room sensor and ESPresense.
    public enum Compatibility {
        /// Where Home Assistant's mqtt_room sensor reads a room's reports (`MQTTRoomReport`).
        public static func mqttRoom(_ room: String) -> String { "room_presence/\(room)" }
        /// Where an ESPresense node reports a device it hears in its room.
        public static func espresenseDevice(_ id: String, room: String) -> String { "\(espresenseDevicePrefix)\(id)/\(room)" }
        /// Every ESPresense device report (a subscription filter).
        public static let allESPresenseDevices = "espresense/devices/+/+"
        /// What every ESPresense device topic starts with.
        public static let espresenseDevicePrefix = "espresense/devices/"

        /// Every ESPresense node's status (`online`, retained, and `offline`, its Last Will).
        public static let allESPresenseStatuses = "espresense/rooms/+/status"
        /// What every ESPresense room topic starts with.
        public static let espresenseRoomPrefix = "espresense/rooms/"

        /// The room of an ESPresense node's status topic (`espresense/rooms/<room>/status`), nil
        /// for any other topic.
        public static func parseESPresenseStatus(_ topic: String) -> Substring? {
            let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
            guard levels.count == 4, levels[0] == "espresense", levels[1] == "rooms", levels[3] == "status" else { return nil }
            return levels[2]
        }

        /// The ESPresense device id and room of `topic` (`espresense/devices/<id>/<room>`), nil
        /// when it has another shape. The levels are not checked further.
        public static func parseESPresenseDevice(_ topic: String) -> (id: Substring, room: Substring)? {
            let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
            guard levels.count == 4, levels[0] == "espresense", levels[1] == "devices" else { return nil }
            return (levels[2], levels[3])
        }
    }
}
