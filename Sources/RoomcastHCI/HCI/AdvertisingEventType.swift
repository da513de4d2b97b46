/// What kind of advertising PDU a report came from, in the extended report's
/// bit layout (Core 5.4 Vol 4 Part E §7.7.65.13 Event_Type); legacy report
/// types are mapped onto it as the spec's table for legacy PDUs does.
public struct AdvertisingEventType: Sendable, Hashable, CustomStringConvertible {
    /// Extended-report bits: 0 connectable, 1 scannable, 2 directed, 3 scan response,
    /// 4 legacy PDU, 5-6 data status.
    public let rawValue: UInt16
    /// The legacy report's Event_Type (0 ADV_IND ... 4 SCAN_RSP), nil for extended reports.
    public let legacyCode: UInt8?

    /// An extended report's Event_Type.
    public init(extended rawValue: UInt16) {
        self.rawValue = rawValue
        self.legacyCode = nil
    }

    /// A legacy report's Event_Type (Core 5.4 Vol 4 Part E §7.7.65.2).
    public init(legacy code: UInt8) {
        legacyCode = code
        switch code {
        case 0x00: rawValue = 0b0001_0011  // ADV_IND
        case 0x01: rawValue = 0b0001_0101  // ADV_DIRECT_IND
        case 0x02: rawValue = 0b0001_0010  // ADV_SCAN_IND
        case 0x03: rawValue = 0b0001_0000  // ADV_NONCONN_IND
        case 0x04: rawValue = 0b0001_1011  // SCAN_RSP (to ADV_IND; legacy reports do not say which)
        default: rawValue = 0b0001_0000
        }
    }

    public var isConnectable: Bool { rawValue & 0x01 != 0 }
    public var isScannable: Bool { rawValue & 0x02 != 0 }
    public var isDirected: Bool { rawValue & 0x04 != 0 }
    public var isScanResponse: Bool { rawValue & 0x08 != 0 }
    public var isLegacyPDU: Bool { rawValue & 0x10 != 0 }

    /// Whether the report holds all of its data (extended reports may be split).
    public var dataStatus: DataStatus {
        switch (rawValue >> 5) & 0x03 {
        case 0: .complete
        case 1: .incompleteMoreToCome
        default: .incompleteTruncated
        }
    }

    /// Extended report data status (bits 5-6).
    public enum DataStatus: Sendable, Hashable {
        case complete
        case incompleteMoreToCome
        case incompleteTruncated
    }

    /// The same type with another data status (used when fragments are joined).
    func with(dataStatus: DataStatus) -> AdvertisingEventType {
        let bits: UInt16 = switch dataStatus {
        case .complete: 0
        case .incompleteMoreToCome: 1
        case .incompleteTruncated: 2
        }
        return AdvertisingEventType(extended: rawValue & ~0x0060 | bits << 5)
    }

    public var description: String {
        switch legacyCode {
        case 0x00: return "ADV_IND"
        case 0x01: return "ADV_DIRECT_IND"
        case 0x02: return "ADV_SCAN_IND"
        case 0x03: return "ADV_NONCONN_IND"
        case 0x04: return "SCAN_RSP"
        case let code?: return "legacy(\(code))"
        case nil: return "extended(0x\(String(rawValue, radix: 16)))"
        }
    }
}
