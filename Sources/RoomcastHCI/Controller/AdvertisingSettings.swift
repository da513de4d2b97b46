/// What to transmit: the AD bytes (at most 31), an optional scan response,
/// the advertising interval and PDU type (non-connectable by default).
public struct AdvertisingSettings: Sendable, Hashable {
    public var data: [UInt8]
    public var scanResponse: [UInt8]?
    /// Seconds between advertising events (20 ms ... 10.24 s).
    public var interval: Double
    public var type: HCICommand.AdvertisingType

    public init(data: [UInt8], scanResponse: [UInt8]? = nil, interval: Double = 0.1,
                type: HCICommand.AdvertisingType = .advNonconnInd) {
        self.data = data
        self.scanResponse = scanResponse
        self.interval = interval
        self.type = type
    }

    /// Every problem with the settings, empty when valid.
    public func validate() -> [String] {
        var problems = [String]()
        if data.count > 31 { problems.append("advertising data is \(data.count) bytes; legacy advertising carries at most 31") }
        if let s = scanResponse, s.count > 31 { problems.append("scan response is \(s.count) bytes; at most 31") }
        if !(0.02...10.24).contains(interval) { problems.append("advertising interval \(interval) s is outside 0.02...10.24 s") }
        return problems
    }

    var parameters: HCICommand.AdvertisingParameters {
        let u = ScanSettings.units(interval, max: 0x4000)
        return HCICommand.AdvertisingParameters(intervalMin: Swift.max(u, 0x0020), intervalMax: Swift.max(u, 0x0020), type: type)
    }
}
