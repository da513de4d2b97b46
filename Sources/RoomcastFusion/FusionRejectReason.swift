/// Why the engine refused a reading.
public enum FusionRejectReason: Int, CaseIterable, Sendable, CustomStringConvertible {
    /// Non-finite time, RSSI out of range, or a non-finite distance.
    case invalid
    /// The site lists its beacons and this is not one of them.
    case unknownBeacon
    /// A node outside the site (with `auto_nodes` off, or beyond `max_nodes`).
    case unknownNode
    /// The node is offline; its in-flight readings are ignored until it returns.
    case nodeOffline
    /// Captured more than `max_age` before now.
    case tooOld
    /// Stamped more than `max_future` ahead of now.
    case tooFarFuture
    /// Same node, beacon and sequence number as an accepted reading.
    case duplicate
    /// An older sequence number (and not newer in time) than one already accepted.
    case outOfOrder
    /// `max_beacons` are already tracked, every one of them placed in a room at some time.
    case capacity

    /// Snake-case name for metrics and logs.
    public var description: String {
        switch self {
        case .invalid: "invalid"
        case .unknownBeacon: "unknown_beacon"
        case .unknownNode: "unknown_node"
        case .nodeOffline: "node_offline"
        case .tooOld: "too_old"
        case .tooFarFuture: "too_far_future"
        case .duplicate: "duplicate"
        case .outOfOrder: "out_of_order"
        case .capacity: "capacity"
        }
    }
}
