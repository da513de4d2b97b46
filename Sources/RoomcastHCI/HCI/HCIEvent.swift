import Shared

/// An HCI event (Core 5.4 Vol 4 Part E §5.4.4 and §7.7). Events this library
/// does not interpret are kept as `.unknown` with their parameters.
public enum HCIEvent: Sendable, Hashable {
    /// Core 5.4 Vol 4 Part E §7.7.14 HCI_Command_Complete.
    case commandComplete(CommandComplete)
    /// Core 5.4 Vol 4 Part E §7.7.15 HCI_Command_Status.
    case commandStatus(CommandStatus)
    /// Core 5.4 Vol 4 Part E §7.7.16 HCI_Hardware_Error.
    case hardwareError(code: UInt8)
    /// Core 5.4 Vol 4 Part E §7.7.65 HCI_LE_Meta.
    case leMeta(LEMetaEvent)
    case unknown(code: UInt8, parameters: [UInt8])

    public static let commandCompleteCode: UInt8 = 0x0E
    public static let commandStatusCode: UInt8 = 0x0F
    public static let hardwareErrorCode: UInt8 = 0x10
    public static let leMetaCode: UInt8 = 0x3E

    /// Decodes an event starting at its event code (no H4 indicator).
    /// `timestamp` is stamped on any advertising reports inside.
    public static func decode(_ bytes: [UInt8], timestamp: Double = 0) throws(HCIDecodeError) -> HCIEvent {
        var r = ByteReader(bytes)
        return try decode(from: &r, timestamp: timestamp)
    }

    /// Decodes an event from `reader`, which must hold exactly the event
    /// (event code, length, parameters) and nothing after it.
    public static func decode(from reader: inout ByteReader, timestamp: Double) throws(HCIDecodeError) -> HCIEvent {
        let code = try reader.hci { r throws(ByteReaderError) in try r.readUInt8() }
        let length = Int(try reader.hci { r throws(ByteReaderError) in try r.readUInt8() })
        guard reader.remaining >= length else {
            throw .truncated(.truncated(needed: length, available: reader.remaining, at: reader.offset))
        }
        guard reader.remaining == length else {
            throw .lengthMismatch(field: "event parameter length", declared: length, actual: reader.remaining)
        }
        var p = try reader.hci { r throws(ByteReaderError) in try r.subReader(length) }
        switch code {
        case commandCompleteCode:
            return .commandComplete(try CommandComplete.decode(from: &p))
        case commandStatusCode:
            return .commandStatus(try CommandStatus.decode(from: &p))
        case hardwareErrorCode:
            return .hardwareError(code: try p.hci { r throws(ByteReaderError) in try r.readUInt8() })
        case leMetaCode:
            return .leMeta(try LEMetaEvent.decode(from: &p, timestamp: timestamp))
        default:
            return .unknown(code: code, parameters: p.readRest())
        }
    }

    /// The advertising reports this event carries (empty for other events).
    public var advertisingReports: [AdvertisingReport] {
        if case let .leMeta(meta) = self {
            switch meta {
            case let .advertisingReports(r), let .extendedAdvertisingReports(r): return r
            case .unknown: return []
            }
        }
        return []
    }
}
