/// The beacon frames found in one advertisement and the look-alikes refused.
public struct BeaconScan: Sendable, Equatable {
    public var beacons: [Beacon] = []
    public var rejections: [BeaconRejection] = []
    public init() {}
}
