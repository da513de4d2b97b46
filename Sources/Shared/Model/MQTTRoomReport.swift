/// The payload Home Assistant's mqtt_room sensor reads on `room_presence/<room>`.
public struct MQTTRoomReport: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    /// Metres from the reporting room's receiver.
    public var distance: Double

    public init(id: String, name: String, distance: Double) {
        self.id = id
        self.name = name
        self.distance = distance
    }

    /// The distance reported to a room a beacon has just left (metres; beyond any BLE range).
    public static let outOfRange: Double = 1000
    /// The distance an away is reported at (as the room `not_home`, the state Home Assistant's
    /// mqtt_room shows for away): just within `outOfRange`, so that, reported right after the
    /// room left at `outOfRange`, mqtt_room takes it as closer at once; and a room the beacon is
    /// heard in next is closer still.
    public static let awayDistance: Double = 999
}
