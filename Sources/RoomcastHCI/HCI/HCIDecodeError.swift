import Shared

/// Why bytes from a controller, a socket or a capture could not be decoded.
public enum HCIDecodeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The packet ends before a field it declares.
    case truncated(ByteReaderError)
    /// A length field disagrees with the bytes actually present.
    case lengthMismatch(field: String, declared: Int, actual: Int)
    /// An H4 indicator that is not one of the five HCI packet types.
    case unknownPacketType(UInt8)
    /// A value no valid packet carries.
    case invalid(String)

    public var description: String {
        switch self {
        case let .truncated(e): "HCI packet \(e)"
        case let .lengthMismatch(field, declared, actual):
            "HCI \(field) declares \(declared) byte(s) but \(actual) are present"
        case let .unknownPacketType(t): "unknown H4 packet type 0x\(Hex.encode([t]))"
        case let .invalid(why): "invalid HCI packet: \(why)"
        }
    }
}

extension ByteReader {
    /// Runs `body`, turning a reader error into `HCIDecodeError.truncated`.
    @inline(__always)
    mutating func hci<T>(_ body: (inout ByteReader) throws(ByteReaderError) -> T) throws(HCIDecodeError) -> T {
        do { return try body(&self) } catch { throw .truncated(error) }
    }
}
