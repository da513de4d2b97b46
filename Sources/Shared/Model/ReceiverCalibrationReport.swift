/// Retained payload of `<prefix>/aggregator/calibration`
/// (docs/schema/calibration.schema.json): what fusion learned about each receiver.
public struct ReceiverCalibrationReport: Codable, Sendable, Equatable {
    /// One receiver node.
    public struct Node: Codable, Sendable, Equatable {
        /// Where the offset was learned: the nodes' own beacons at known distances, or
        /// tracked beacons at estimated positions. Open: a source a newer release names is
        /// kept and published again as it came (v1 may add them), not a report refused whole.
        public struct Source: RawRepresentable, Codable, Sendable, Hashable {
            public var rawValue: String
            public init(rawValue: String) { self.rawValue = rawValue }
            public static let nodeBeacons = Source(rawValue: "node_beacons")
            public static let beacons = Source(rawValue: "beacons")
            /// The longest source name read: it is published again.
            public static let maximumBytes = 64

            public init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                let name = try container.decode(String.self)
                guard name.utf8.count <= Self.maximumBytes, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                    throw DecodingError.dataCorruptedError(in: container, debugDescription: "source longer than \(Self.maximumBytes) bytes, or with control characters")
                }
                rawValue = name
            }

            public func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(rawValue)
            }
        }
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
