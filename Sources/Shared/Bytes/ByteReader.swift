/// A bounds-checked cursor over bytes. Every read checks the remaining length
/// and throws `ByteReaderError.truncated` instead of trapping, so a decoder
/// built on it never crashes on a short or malformed packet.
///
/// The reads are inlinable: decoders in other modules (HCI, advertising) read byte by byte,
/// and a call per byte cost more than the byte's decoding.
public struct ByteReader: Sendable {
    public let bytes: [UInt8]
    @usableFromInline var position: Int
    @usableFromInline let end: Int

    public var offset: Int { position }

    /// A reader over `bytes[range]` (the whole array by default).
    @inlinable
    public init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        let r = range ?? bytes.indices
        self.position = r.lowerBound
        self.end = r.upperBound
    }

    @inlinable public var remaining: Int { end - position }
    @inlinable public var isAtEnd: Bool { position >= end }

    @inlinable public mutating func readUInt8() throws(ByteReaderError) -> UInt8 {
        try need(1)
        defer { position += 1 }
        return bytes[position]
    }

    @inlinable public mutating func readInt8() throws(ByteReaderError) -> Int8 {
        Int8(bitPattern: try readUInt8())
    }

    @inlinable public mutating func readUInt16LE() throws(ByteReaderError) -> UInt16 {
        try need(2)
        defer { position += 2 }
        return UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }

    @inlinable public mutating func readUInt16BE() throws(ByteReaderError) -> UInt16 {
        try need(2)
        defer { position += 2 }
        return UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
    }

    @inlinable public mutating func readUInt32LE() throws(ByteReaderError) -> UInt32 {
        try need(4)
        defer { position += 4 }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[position + i]) << (8 * i) }
        return v
    }

    /// Reads `count` bytes as a new array.
    @inlinable public mutating func readBytes(_ count: Int) throws(ByteReaderError) -> [UInt8] {
        guard count >= 0 else { throw .invalidLength(count) }
        try need(count)
        defer { position += count }
        return Array(bytes[position..<position + count])
    }

    /// A sub-reader over the next `count` bytes; advances past them.
    @inlinable public mutating func subReader(_ count: Int) throws(ByteReaderError) -> ByteReader {
        guard count >= 0 else { throw .invalidLength(count) }
        try need(count)
        defer { position += count }
        return ByteReader(bytes, range: position..<position + count)
    }

    /// The bytes not yet read, consuming them.
    @inlinable public mutating func readRest() -> [UInt8] {
        defer { position = end }
        return position < end ? Array(bytes[position..<end]) : []
    }

    @inlinable public mutating func skip(_ count: Int) throws(ByteReaderError) {
        guard count >= 0 else { throw .invalidLength(count) }
        try need(count)
        position += count
    }

    @inlinable func need(_ count: Int) throws(ByteReaderError) {
        if end - position < count {
            throw .truncated(needed: count, available: Swift.max(0, end - position), at: position)
        }
    }
}

/// Why a `ByteReader` read failed.
public enum ByteReaderError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated(needed: Int, available: Int, at: Int)
    case invalidLength(Int)

    public var description: String {
        switch self {
        case let .truncated(needed, available, at):
            return "truncated: needed \(needed) byte(s) at offset \(at), \(available) left"
        case let .invalidLength(n):
            return "invalid length \(n)"
        }
    }
}
