/// One decoded advertisement: what was heard, the beacons in it, and who it belongs to.
public struct DecodedAdvertisement: Sendable, Equatable {
    public var address: BLEAddress?
    public var addressType: BLEAddressType?
    public var rssi: Int?
    public var data: AdvertisingData
    public var scan: BeaconScan
    /// Nil when the config does not track this advertisement.
    public var identity: TrackedIdentity?
}
