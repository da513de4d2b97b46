/// A named region (like CoreLocation's CLBeaconRegion): an iBeacon/AltBeacon UUID, optionally
/// narrowed by major and minor, or an Eddystone namespace, optionally narrowed by instance.
public struct RegionConfig: Codable, Sendable, Equatable {
    public var name: String
    public var uuid: String?
    public var major: Int?
    public var minor: Int?
    /// Eddystone namespace, 20 hex digits.
    public var namespace: String?
    /// Eddystone instance, 12 hex digits.
    public var instance: String?

    public init(name: String, uuid: String? = nil, major: Int? = nil, minor: Int? = nil,
                namespace: String? = nil, instance: String? = nil) {
        self.name = name
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.namespace = namespace
        self.instance = instance
    }
}
