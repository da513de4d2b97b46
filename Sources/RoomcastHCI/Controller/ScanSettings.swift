/// How to scan: passive or active, interval and window in seconds, and
/// which command set (legacy, extended, or chosen from the LE features).
public struct ScanSettings: Sendable, Hashable {
    /// Which scan commands to use.
    public enum Mode: String, Sendable, Hashable, CaseIterable {
        /// Extended when the controller supports LE Extended Advertising, else legacy.
        case auto
        case legacy
        case extended
    }

    public var type: HCICommand.ScanType
    /// Seconds between scan window starts (2.5 ms ... 10.24 s).
    public var interval: Double
    /// Seconds of listening per interval (at most `interval`).
    public var window: Double
    public var mode: Mode
    /// Off by default: duplicate filtering would stop the RSSI stream of a beacon after its first report.
    public var filterDuplicates: Bool

    public init(type: HCICommand.ScanType = .passive, interval: Double = 0.1, window: Double = 0.1,
                mode: Mode = .auto, filterDuplicates: Bool = false) {
        self.type = type
        self.interval = interval
        self.window = window
        self.mode = mode
        self.filterDuplicates = filterDuplicates
    }

    /// Seconds in 0.625 ms units, clamped to the range the commands accept.
    static func units(_ seconds: Double, max: UInt16) -> UInt16 {
        let u = (seconds / 0.000625).rounded()
        guard u.isFinite else { return 0x0010 }
        return UInt16(Swift.min(Double(max), Swift.max(4, u)))
    }

    /// Every problem with the settings, empty when valid.
    public func validate() -> [String] {
        var problems = [String]()
        if !(0.0025...10.24).contains(interval) { problems.append("scan interval \(interval) s is outside 0.0025...10.24 s") }
        if !(0.0025...10.24).contains(window) { problems.append("scan window \(window) s is outside 0.0025...10.24 s") }
        if window > interval { problems.append("scan window \(window) s is longer than the interval \(interval) s") }
        return problems
    }

    /// LE Set Scan Parameters for these settings.
    var legacyParameters: HCICommand.ScanParameters {
        HCICommand.ScanParameters(type: type, interval: Self.units(interval, max: 0x4000),
                                  window: Self.units(window, max: 0x4000))
    }

    /// LE Set Extended Scan Parameters for these settings (1M PHY; coded too when supported).
    func extendedParameters(coded: Bool) -> HCICommand.ExtendedScanParameters {
        let phy = HCICommand.PHYScanParameters(type: type, interval: Self.units(interval, max: 0xFFFF),
                                               window: Self.units(window, max: 0xFFFF))
        return HCICommand.ExtendedScanParameters(le1M: phy, leCoded: coded ? phy : nil)
    }
}
