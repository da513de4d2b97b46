import Shared

/// One line of `raw.jsonl(.gz)`: one advertisement as received by one node.
public struct RawPacket: Codable, Sendable, Equatable {
    /// Reception time, unix seconds.
    public var t: Double
    public var node: String
    public var id: BeaconID
    public var rssi: Int
    /// The advertiser address when it is not the beacon's own (rotating phones); optional.
    public var mac: String?

    public init(t: Double, node: String, id: BeaconID, rssi: Int, mac: String? = nil) {
        self.t = t
        self.node = node
        self.id = id
        self.rssi = rssi
        self.mac = mac
    }
}
