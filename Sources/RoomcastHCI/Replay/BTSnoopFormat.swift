import Shared
/// The btsnoop capture format (RFC 1761 "snoop" layout as Bluetooth tools use
/// it; BlueZ src/shared/btsnoop.h): a 16-byte header, then records of
/// original length, included length, flags, cumulative drops (all u32 BE),
/// a u64 BE timestamp in microseconds since 0 AD, and the packet bytes.
public enum BTSnoopFormat {
    public static let magic: [UInt8] = Array("btsnoop\0".utf8)
    public static let headerLength = 16
    public static let recordHeaderLength = 24
    /// Microseconds from 0 AD to the unix epoch, as Wireshark uses (`KUnixTimeBase`). BlueZ
    /// writes the same stamps another way: 0x00E03AB44A676000 (0 AD to the year 2000) added to
    /// the microseconds since 2000.
    public static let epochDelta: UInt64 = 0x00DC_DDB3_0F2F_8000

    /// Which packet encapsulation a capture uses.
    public enum Datalink: UInt32, Sendable, Hashable {
        /// Un-encapsulated HCI; the type comes from the flags.
        case hciUnencapsulated = 1001
        /// H4: each record starts with the packet indicator.
        case h4 = 1002
        /// Linux monitor (btmon): the flags hold controller index and opcode.
        case monitor = 2001
    }

    /// Unix seconds from a btsnoop timestamp.
    @inline(__always)
    public static func unixTime(_ ts: UInt64) -> Double {
        ts >= epochDelta ? Double(ts - epochDelta) / 1_000_000 : -Double(epochDelta - ts) / 1_000_000
    }

    /// A btsnoop timestamp from unix seconds; nil for a time the format cannot hold (before
    /// 0 AD, or past what 64 bits of microseconds reach) or no time at all (NaN).
    public static func timestamp(unix t: Double) -> UInt64? {
        let microseconds = (t * 1_000_000).rounded()
        // Int64's range, kept inside the values a Double represents exactly at its ends.
        guard microseconds >= -Double(epochDelta), microseconds < 9.2e18 - Double(epochDelta) else { return nil }
        return UInt64(Int64(epochDelta) + Int64(microseconds))
    }

    /// The HCI packet type and direction a record holds, or nil for records
    /// that are not HCI packets (monitor notes, index events...). For H4 the
    /// indicator is the first data byte, so `skip` is 1.
    @inline(__always)
    static func classify(datalink: Datalink, flags: UInt32, firstByte: UInt8?)
        -> (type: HCIPacketType, direction: HCIFrame.Direction, skip: Int)? {
        switch datalink {
        case .h4:
            guard let b = firstByte, let type = HCIPacketType(rawValue: b) else { return nil }
            return (type, flags & 1 == 1 ? .controllerToHost : .hostToController, 1)
        case .hciUnencapsulated:
            let received = flags & 1 == 1
            if flags & 2 != 0 { return received ? (.event, .controllerToHost, 0) : (.command, .hostToController, 0) }
            return (.aclData, received ? .controllerToHost : .hostToController, 0)
        case .monitor:
            switch flags & 0xFFFF {
            case 2: return (.command, .hostToController, 0)
            case 3: return (.event, .controllerToHost, 0)
            case 4: return (.aclData, .hostToController, 0)
            case 5: return (.aclData, .controllerToHost, 0)
            case 6: return (.synchronousData, .hostToController, 0)
            case 7: return (.synchronousData, .controllerToHost, 0)
            case 18: return (.isoData, .hostToController, 0)
            case 19: return (.isoData, .controllerToHost, 0)
            default: return nil
            }
        }
    }
}

/// Why a btsnoop capture could not be read or written.
public enum BTSnoopError: Error, Equatable, Sendable, CustomStringConvertible {
    case notBTSnoop(path: String)
    case unsupportedVersion(UInt32)
    case unsupportedDatalink(UInt32)
    /// A record's declared length runs past the end of the file or is absurd.
    case corruptRecord(offset: UInt64, why: String)
    case io(path: String, SystemCallError)
    /// A time a record cannot hold (`BTSnoopFormat.timestamp(unix:)`).
    case unwritableTime(Double)

    public var description: String {
        switch self {
        case let .notBTSnoop(path): "\(path) is not a btsnoop capture (bad magic)"
        case let .unsupportedVersion(v): "btsnoop version \(v) is not supported (only 1)"
        case let .unsupportedDatalink(d): "btsnoop datalink \(d) is not supported (1001, 1002 H4, 2001 monitor)"
        case let .corruptRecord(offset, why): "btsnoop record at byte \(offset) is corrupt: \(why)"
        case let .io(path, e): "\(path): \(e)"
        case let .unwritableTime(t): "time \(t) cannot be written in a btsnoop record (unix seconds from year 0 to about 290,000)"
        }
    }
}
