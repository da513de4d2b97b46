/// What a connected edge agent publishes every second on `<prefix>/nodes/<node>/heartbeat` (not
/// retained): that its link to the broker is up, whether or not it hears any beacon.
///
/// Why: a node that drops off the network without closing its connection (its Wi-Fi gone, its
/// power cut) is said `offline` by its Last Will only once the broker's keep-alive gives up,
/// 45 s at the default. Until then its silence looks like its beacons leaving: they went away
/// after the away timeout (and people `not_home`) though nothing was listening. A node that
/// promises a heartbeat and misses three is taken as missing, not silent (`NodeLiveness`).
public struct NodeHeartbeat: Codable, Sendable, Equatable {
    public var v: Int = WireFormat.version
    /// The node's clock when it was sent.
    public var ts: Double

    /// How often a connected agent sends one (seconds).
    public static let interval = 1.0

    public init(ts: Double) { self.ts = ts }
}
