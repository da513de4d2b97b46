import Shared

/// What the dashboard shows, as one JSON document: the site's geometry, each node's status and
/// every decision in force. Sent whole on each update (`/events`) and by `/api/state`; a home's
/// is a few kilobytes. Encoded with sorted keys like every wire message (docs/http.md).
public struct DashboardSnapshot: Codable, Sendable, Equatable {
    public var v: Int = 1
    /// Aggregator time of the snapshot.
    public var ts: Double
    /// Which snapshot this is, counted from 1 since the aggregator started, in the order they were
    /// built. A page just connected can be sent one built before the state it got first; it keeps
    /// the later (the clock, `ts`, can step back; this count cannot).
    public var seq: UInt64?
    /// True when this instance publishes (false: a standby, or the broker is unreachable).
    public var active: Bool
    public var connected: Bool
    /// Rooms with polygons and floors, in config order.
    public var rooms: [Room]
    public var nodes: [Node]
    public var beacons: [PresenceDecision]

    public struct Room: Codable, Sendable, Equatable {
        public var name: String
        public var floor: Int
        public var polygon: [[Double]]?
        /// The open stretches of its walls (`rooms[].doorways`), drawn as gaps in its outline.
        public var doorways: [[[Double]]]?
        /// The name people read (`rooms[].display_name`, else derived from `name`); the page
        /// shows it, and keys everything by `name`.
        public var title: String?
    }

    public struct Node: Codable, Sendable, Equatable {
        public var name: String
        public var room: String?
        public var position: [Double]?
        /// `online` (readings within the last 30 s), `silent` (none lately), `offline` (its
        /// status topic says so), or `unknown` (never heard since start).
        public var status: String
        public var lastSeen: Double?
        /// Readings accepted since start (the page derives readings/s from two snapshots).
        public var readings: UInt64
        /// Offset of its clock from ours, in seconds (positive: behind), when off by more than the limit.
        public var clockOffsetS: Double?
        /// The name people read (`nodes[].display_name`, else derived from `name`).
        public var title: String?
        /// The floor the plan draws it on: its room's, else the storey its z lies in.
        public var floor: Int?

        enum CodingKeys: String, CodingKey {
            case name, room, position, status, readings, title, floor
            case lastSeen = "last_seen", clockOffsetS = "clock_offset_s"
        }
    }

    /// Seconds without a reading after which a node that has not said `offline` shows as silent.
    public static let silentAfter: Double = 30

    /// A node's status at `now`.
    static func status(online: Bool, lastSeen: Double?, now: Double) -> String {
        if !online { return "offline" }
        guard let lastSeen else { return "unknown" }
        return now - lastSeen <= silentAfter ? "online" : "silent"
    }
}
