/// A typed HCI command that encodes itself (opcode, parameter length,
/// parameters; `h4Packet` adds the H4 indicator).
public enum HCICommand: Sendable, Hashable {
    /// Core 5.4 Vol 4 Part E §7.3.2 HCI_Reset.
    case reset
    /// Core 5.4 Vol 4 Part E §7.3.1 HCI_Set_Event_Mask.
    case setEventMask(UInt64)
    /// Core 5.4 Vol 4 Part E §7.8.1 HCI_LE_Set_Event_Mask.
    case leSetEventMask(UInt64)
    /// Core 5.4 Vol 4 Part E §7.4.6 HCI_Read_BD_ADDR.
    case readBDAddr
    /// Core 5.4 Vol 4 Part E §7.4.1 HCI_Read_Local_Version_Information.
    case readLocalVersionInformation
    /// Core 5.4 Vol 4 Part E §7.8.3 HCI_LE_Read_Local_Supported_Features (page 0).
    case leReadLocalSupportedFeatures
    /// Core 5.4 Vol 4 Part E §7.8.10 HCI_LE_Set_Scan_Parameters.
    case leSetScanParameters(ScanParameters)
    /// Core 5.4 Vol 4 Part E §7.8.11 HCI_LE_Set_Scan_Enable.
    case leSetScanEnable(enable: Bool, filterDuplicates: Bool)
    /// Core 5.4 Vol 4 Part E §7.8.64 HCI_LE_Set_Extended_Scan_Parameters.
    case leSetExtendedScanParameters(ExtendedScanParameters)
    /// Core 5.4 Vol 4 Part E §7.8.65 HCI_LE_Set_Extended_Scan_Enable
    /// (duration and period in 10 ms / 1.28 s units, 0 = until disabled).
    case leSetExtendedScanEnable(enable: Bool, filterDuplicates: Bool, duration: UInt16, period: UInt16)
    /// Core 5.4 Vol 4 Part E §7.8.5 HCI_LE_Set_Advertising_Parameters.
    case leSetAdvertisingParameters(AdvertisingParameters)
    /// Core 5.4 Vol 4 Part E §7.8.7 HCI_LE_Set_Advertising_Data (at most 31 bytes).
    case leSetAdvertisingData([UInt8])
    /// Core 5.4 Vol 4 Part E §7.8.8 HCI_LE_Set_Scan_Response_Data (at most 31 bytes).
    case leSetScanResponseData([UInt8])
    /// Core 5.4 Vol 4 Part E §7.8.9 HCI_LE_Set_Advertising_Enable.
    case leSetAdvertisingEnable(Bool)
    /// Core 5.4 Vol 4 Part E §7.8.4 HCI_LE_Set_Random_Address (display order, most significant byte first).
    case leSetRandomAddress([UInt8])

    /// The spec's default event mask (bits 0-44) plus LE Meta (bit 61), without
    /// which no advertising report reaches the host.
    public static let defaultEventMask: UInt64 = 0x2000_1FFF_FFFF_FFFF
    /// LE events: Advertising Report (bit 1), Extended Advertising Report (bit 12)
    /// and the connection events a scanner may still see.
    public static let defaultLEEventMask: UInt64 = 0x0000_0000_0000_101F

    public var opcode: HCIOpcode {
        switch self {
        case .reset: .reset
        case .setEventMask: .setEventMask
        case .leSetEventMask: .leSetEventMask
        case .readBDAddr: .readBDAddr
        case .readLocalVersionInformation: .readLocalVersionInformation
        case .leReadLocalSupportedFeatures: .leReadLocalSupportedFeatures
        case .leSetScanParameters: .leSetScanParameters
        case .leSetScanEnable: .leSetScanEnable
        case .leSetExtendedScanParameters: .leSetExtendedScanParameters
        case .leSetExtendedScanEnable: .leSetExtendedScanEnable
        case .leSetAdvertisingParameters: .leSetAdvertisingParameters
        case .leSetAdvertisingData: .leSetAdvertisingData
        case .leSetScanResponseData: .leSetScanResponseData
        case .leSetAdvertisingEnable: .leSetAdvertisingEnable
        case .leSetRandomAddress: .leSetRandomAddress
        }
    }

    /// The command's parameters, little-endian as on the wire.
    public var parameters: [UInt8] {
        var w = [UInt8]()
        switch self {
        case .reset, .readBDAddr, .readLocalVersionInformation, .leReadLocalSupportedFeatures:
            break
        case let .setEventMask(mask), let .leSetEventMask(mask):
            w.appendLE(mask, bytes: 8)
        case let .leSetScanParameters(p):
            w.append(p.type.rawValue)
            w.appendLE(p.interval, bytes: 2)
            w.appendLE(p.window, bytes: 2)
            w.append(p.ownAddressType)
            w.append(p.filterPolicy)
        case let .leSetScanEnable(enable, dup):
            w.append(enable ? 1 : 0)
            w.append(dup ? 1 : 0)
        case let .leSetExtendedScanParameters(p):
            w.append(p.ownAddressType)
            w.append(p.filterPolicy)
            var phys: UInt8 = 0
            if p.le1M != nil { phys |= 0x01 }
            if p.leCoded != nil { phys |= 0x04 }
            w.append(phys)
            for phy in [p.le1M, p.leCoded] {
                guard let phy else { continue }
                w.append(phy.type.rawValue)
                w.appendLE(phy.interval, bytes: 2)
                w.appendLE(phy.window, bytes: 2)
            }
        case let .leSetExtendedScanEnable(enable, dup, duration, period):
            w.append(enable ? 1 : 0)
            w.append(dup ? 1 : 0)
            w.appendLE(duration, bytes: 2)
            w.appendLE(period, bytes: 2)
        case let .leSetAdvertisingParameters(p):
            w.appendLE(p.intervalMin, bytes: 2)
            w.appendLE(p.intervalMax, bytes: 2)
            w.append(p.type.rawValue)
            w.append(p.ownAddressType)
            w.append(p.peerAddressType)
            w.append(contentsOf: Self.wireAddress(p.peerAddress))
            w.append(p.channelMap)
            w.append(p.filterPolicy)
        case let .leSetAdvertisingData(data), let .leSetScanResponseData(data):
            // Significant part length, then always 31 octets (zero padded).
            let n = min(data.count, 31)
            w.append(UInt8(n))
            w.append(contentsOf: data.prefix(31))
            w.append(contentsOf: repeatElement(0, count: 31 - n))
        case let .leSetAdvertisingEnable(on):
            w.append(on ? 1 : 0)
        case let .leSetRandomAddress(address):
            w.append(contentsOf: Self.wireAddress(address))
        }
        return w
    }

    /// Opcode (LE), parameter length, parameters: the bytes after the H4 indicator.
    public var encoded: [UInt8] {
        let p = parameters
        var out: [UInt8] = [UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8), UInt8(p.count)]
        out.append(contentsOf: p)
        return out
    }

    /// The command as an H4 packet (indicator 0x01 first).
    public var h4Packet: [UInt8] { [HCIPacketType.command.rawValue] + encoded }

    /// A display-order address as the 6 little-endian wire bytes (zero-filled when short).
    static func wireAddress(_ display: [UInt8]) -> [UInt8] {
        var a = Array(display.prefix(6))
        a.append(contentsOf: repeatElement(0, count: 6 - a.count))
        return a.reversed()
    }
}

extension HCICommand {
    /// Active scanning sends SCAN_REQ and hears scan responses; passive only listens.
    public enum ScanType: UInt8, Sendable, Hashable {
        case passive = 0x00
        case active = 0x01
    }

    /// Parameters of LE Set Scan Parameters; interval and window in 0.625 ms units.
    public struct ScanParameters: Sendable, Hashable {
        public var type: ScanType
        public var interval: UInt16
        public var window: UInt16
        /// 0 public, 1 random.
        public var ownAddressType: UInt8
        /// 0 accepts every advertiser.
        public var filterPolicy: UInt8

        public init(type: ScanType = .passive, interval: UInt16 = 0x0010, window: UInt16 = 0x0010,
                    ownAddressType: UInt8 = 0, filterPolicy: UInt8 = 0) {
            self.type = type
            self.interval = interval
            self.window = window
            self.ownAddressType = ownAddressType
            self.filterPolicy = filterPolicy
        }
    }

    /// One PHY's scan settings in LE Set Extended Scan Parameters.
    public struct PHYScanParameters: Sendable, Hashable {
        public var type: ScanType
        public var interval: UInt16
        public var window: UInt16

        public init(type: ScanType, interval: UInt16, window: UInt16) {
            self.type = type
            self.interval = interval
            self.window = window
        }
    }

    /// Parameters of LE Set Extended Scan Parameters: one entry per scanned PHY.
    public struct ExtendedScanParameters: Sendable, Hashable {
        public var ownAddressType: UInt8
        public var filterPolicy: UInt8
        public var le1M: PHYScanParameters?
        public var leCoded: PHYScanParameters?

        public init(ownAddressType: UInt8 = 0, filterPolicy: UInt8 = 0,
                    le1M: PHYScanParameters?, leCoded: PHYScanParameters? = nil) {
            self.ownAddressType = ownAddressType
            self.filterPolicy = filterPolicy
            self.le1M = le1M
            self.leCoded = leCoded
        }
    }

    /// Legacy advertising PDU types (Core 5.4 Vol 4 Part E §7.8.5 Advertising_Type).
    public enum AdvertisingType: UInt8, Sendable, Hashable {
        case advInd = 0x00
        case advDirectIndHighDuty = 0x01
        case advScanInd = 0x02
        case advNonconnInd = 0x03
        case advDirectIndLowDuty = 0x04
    }

    /// Parameters of LE Set Advertising Parameters; intervals in 0.625 ms units.
    public struct AdvertisingParameters: Sendable, Hashable {
        public var intervalMin: UInt16
        public var intervalMax: UInt16
        public var type: AdvertisingType
        public var ownAddressType: UInt8
        public var peerAddressType: UInt8
        /// Display order; only used for directed advertising.
        public var peerAddress: [UInt8]
        /// Bit 0..2: channels 37, 38, 39.
        public var channelMap: UInt8
        public var filterPolicy: UInt8

        public init(intervalMin: UInt16 = 0x00A0, intervalMax: UInt16 = 0x00A0, type: AdvertisingType = .advNonconnInd,
                    ownAddressType: UInt8 = 0, peerAddressType: UInt8 = 0, peerAddress: [UInt8] = [0, 0, 0, 0, 0, 0],
                    channelMap: UInt8 = 0x07, filterPolicy: UInt8 = 0) {
            self.intervalMin = intervalMin
            self.intervalMax = intervalMax
            self.type = type
            self.ownAddressType = ownAddressType
            self.peerAddressType = peerAddressType
            self.peerAddress = peerAddress
            self.channelMap = channelMap
            self.filterPolicy = filterPolicy
        }
    }
}

extension [UInt8] {
    @inline(__always)
    mutating func appendLE<T: FixedWidthInteger>(_ v: T, bytes: Int) {
        for i in 0..<bytes { append(UInt8(truncatingIfNeeded: v >> (8 * i))) }
    }
}
