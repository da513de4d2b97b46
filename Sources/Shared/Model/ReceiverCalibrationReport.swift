/// Retained payload of `<prefix>/aggregator/calibration`
/// (docs/schema/calibration.schema.json): what fusion learned about each receiver.
public struct ReceiverCalibrationReport: Codable, Sendable, Equatable {
    /// One receiver node.
    public struct Node: Codable, Sendable, Equatable {
        /// Where the offset was learned: the nodes' own beacons at known distances, or
        /// tracked beacons at estimated positions.
        public enum Source: String, Codable, Sendable { case nodeBeacons = "node_beacons", beacons }
        public var node: String
        /// dB this receiver reads above the model (subtracted from its readings).
        public var offsetDb: Double
        public var source: Source

        public init(node: String, offsetDb: Double, source: Source) {
            self.node = node
            self.offsetDb = offsetDb
            self.source = source
        }

        enum CodingKeys: String, CodingKey {
            case node, source
            case offsetDb = "offset_db"
        }
    }

    public var v: Int = WireFormat.version
    public var ts: Double
    public var nodes: [Node]

    public init(ts: Double, nodes: [Node]) {
        self.ts = ts
        self.nodes = nodes
    }
}
