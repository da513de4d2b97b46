/// What the init sequence learned about the controller.
public struct ControllerInfo: Sendable, Hashable {
    /// BD_ADDR in display order.
    public var address: [UInt8]
    public var hciVersion: UInt8
    public var hciRevision: UInt16
    public var lmpVersion: UInt8
    /// Bluetooth SIG company identifier of the controller's maker.
    public var manufacturer: UInt16
    public var leFeatures: LEFeatures

    public init(address: [UInt8], hciVersion: UInt8, hciRevision: UInt16, lmpVersion: UInt8, manufacturer: UInt16,
                leFeatures: LEFeatures) {
        self.address = address
        self.hciVersion = hciVersion
        self.hciRevision = hciRevision
        self.lmpVersion = lmpVersion
        self.manufacturer = manufacturer
        self.leFeatures = leFeatures
    }
}
