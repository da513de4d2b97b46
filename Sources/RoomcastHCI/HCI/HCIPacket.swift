import Shared

/// One HCI packet of any type; events are decoded, the rest kept as bytes.
public enum HCIPacket: Sendable, Hashable {
    case command(opcode: HCIOpcode, parameters: [UInt8])
    case event(HCIEvent)
    /// ACL, synchronous and ISO data, kept as the bytes after the H4 indicator.
    case data(type: HCIPacketType, bytes: [UInt8])

    /// Decodes an H4 packet: the indicator byte, then the packet.
    public static func decode(h4 bytes: [UInt8], timestamp: Double = 0) throws(HCIDecodeError) -> HCIPacket {
        guard let first = bytes.first else {
            throw .truncated(.truncated(needed: 1, available: 0, at: 0))
        }
        guard let type = HCIPacketType(rawValue: first) else { throw .unknownPacketType(first) }
        var r = ByteReader(bytes, range: 1..<bytes.count)
        return try decode(type: type, from: &r, timestamp: timestamp)
    }

    /// Decodes a packet of a known type from a reader holding exactly that packet.
    public static func decode(type: HCIPacketType, from r: inout ByteReader, timestamp: Double) throws(HCIDecodeError) -> HCIPacket {
        switch type {
        case .event:
            return .event(try HCIEvent.decode(from: &r, timestamp: timestamp))
        case .command:
            let op = try r.hci { r throws(ByteReaderError) in try r.readUInt16LE() }
            let length = Int(try r.hci { r throws(ByteReaderError) in try r.readUInt8() })
            let params = try r.hci { r throws(ByteReaderError) in try r.readBytes(length) }
            guard r.isAtEnd else {
                throw .lengthMismatch(field: "command parameter length", declared: length, actual: length + r.remaining)
            }
            return .command(opcode: HCIOpcode(rawValue: op), parameters: params)
        case .aclData, .synchronousData, .isoData:
            let start = r.offset
            let header = H4Framer.headerLength(type)
            try r.hci { r throws(ByteReaderError) in try r.skip(header) }
            let declared = H4Framer.payloadLength(type, header: r.bytes, at: start)
            guard r.remaining >= declared else {
                throw .truncated(.truncated(needed: declared, available: r.remaining, at: r.offset))
            }
            guard r.remaining == declared else {
                throw .lengthMismatch(field: "data length", declared: declared, actual: r.remaining)
            }
            return .data(type: type, bytes: Array(r.bytes[start..<r.offset + declared]))
        }
    }
}
