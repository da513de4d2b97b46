import Shared

/// Cuts a byte stream into H4 packets (Core 5.4 Vol 4 Part A §2): a UART or a
/// unix socket delivers bytes in arbitrary pieces; a raw HCI socket delivers
/// one whole packet per read, which the framer handles the same way.
public struct H4Framer: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0
    /// Largest packet accepted: an ACL header allows 65535 + 4 bytes.
    public static let maximumPacketLength = 65_540

    /// An empty framer.
    public init() {}

    /// Bytes received but not yet returned as a packet.
    public var pendingCount: Int { buffer.count - start }

    /// Adds bytes from the stream.
    public mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 4096 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete packet (type and the bytes after the indicator), or nil
    /// when more bytes are needed. Throws on an unknown indicator: the stream
    /// cannot be resynchronised after that, the caller must reopen it.
    public mutating func next() throws(HCIDecodeError) -> (type: HCIPacketType, bytes: [UInt8])? {
        guard let (type, reader) = try nextInPlace() else { return nil }
        return (type, Array(reader.bytes[reader.offset ..< reader.offset + reader.remaining]))
    }

    /// The next complete packet as a reader over the framer's own bytes (no copy), or nil when
    /// more bytes are needed; throws as `next()`. Let the reader go before the next `append`, or
    /// that append copies the whole buffer.
    public mutating func nextInPlace() throws(HCIDecodeError) -> (type: HCIPacketType, reader: ByteReader)? {
        guard start < buffer.count else { return nil }
        guard let type = HCIPacketType(rawValue: buffer[start]) else { throw .unknownPacketType(buffer[start]) }
        let header = Self.headerLength(type)
        guard buffer.count - start >= 1 + header else { return nil }
        let length = header + Self.payloadLength(type, header: buffer, at: start + 1)
        guard buffer.count - start >= 1 + length else { return nil }
        let reader = ByteReader(buffer, range: start + 1 ..< start + 1 + length)
        start += 1 + length
        return (type, reader)
    }

    /// Drops the bytes of a packet begun but not complete; returns how many. A link that keeps
    /// packet boundaries calls it after each datagram: there a packet shorter than its header
    /// says is lost, and joined to the next datagram it would make every packet after it wrong.
    @discardableResult
    public mutating func discardPending() -> Int {
        let dropped = pendingCount
        start = buffer.count
        return dropped
    }

    /// The fixed header length after the indicator.
    static func headerLength(_ type: HCIPacketType) -> Int {
        switch type {
        case .command: 3
        case .aclData: 4
        case .synchronousData: 3
        case .event: 2
        case .isoData: 4
        }
    }

    /// The payload length the header at `bytes[at...]` declares (header present).
    static func payloadLength(_ type: HCIPacketType, header b: [UInt8], at i: Int) -> Int {
        switch type {
        case .command: Int(b[i + 2])
        case .aclData: Int(b[i + 2]) | Int(b[i + 3]) << 8
        case .synchronousData: Int(b[i + 2])
        case .event: Int(b[i + 1])
        case .isoData: (Int(b[i + 2]) | Int(b[i + 3]) << 8) & 0x3FFF
        }
    }
}
