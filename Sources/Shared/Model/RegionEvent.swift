/// A region enter/exit at one node on `<prefix>/nodes/<node>/events`
/// (docs/schema/region-event.schema.json): didEnterRegion / didExitRegion.
public struct RegionEvent: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable { case enter, exit }
    public var v: Int = WireFormat.version
    public var ts: Double
    public var node: String
    public var region: String
    public var event: Kind
    /// The beacon that caused the transition.
    public var id: BeaconID?

    public init(ts: Double, node: String, region: String, event: Kind, id: BeaconID?) {
        self.ts = ts
        self.node = node
        self.region = region
        self.event = event
        self.id = id
    }
}
