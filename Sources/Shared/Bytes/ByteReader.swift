/// A bounds-checked cursor over bytes. Every read checks the remaining length
/// and throws `ByteReaderError.truncated` instead of trapping, so a decoder
/// built on it never crashes on a short or malformed packet.
public struct ByteReader: Sendable {
    public let bytes: [UInt8]
    public private(set) var offset: Int
    private let end: Int

    /// A reader over `bytes[range]` (the whole array by default).
    public init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        let r = range ?? bytes.indices
        self.offset = r.lowerBound
        self.end = r.upperBound
    }

    public var remaining: Int { end - offset }
    public var isAtEnd: Bool { offset >= end }

    public mutating func readUInt8() throws(ByteReaderError) -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return bytes[offset]
    }

    public mutating func readInt8() throws(ByteReaderError) -> Int8 {
        Int8(bitPattern: try readUInt8())
    }

    public mutating func readUInt16LE() throws(ByteReaderError) -> UInt16 {
        try need(2)
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    public mutating func readUInt16BE() throws(ByteReaderError) -> UInt16 {
        try need(2)
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    public mutating func readUInt24LE() throws(ByteReaderError) -> UInt32 {
        try need(3)
        defer { offset += 3 }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
    }

    public mutating func readUInt32LE() throws(ByteReaderError) -> UInt32 {
        try need(4)
        defer { offset += 4 }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[offset + i]) << (8 * i) }
        return v
    }

    public mutating func readUInt32BE() throws(ByteReaderError) -> UInt32 {
        try need(4)
        defer { offset += 4 }
        var v: UInt32 = 0
        for i in 0..<4 { v = v << 8 | UInt32(bytes[offset + i]) }
        return v
    }

    public mutating func readUInt64BE() throws(ByteReaderError) -> UInt64 {
        try need(8)
        defer { offset += 8 }
        var v: UInt64 = 0
        for i in 0..<8 { v = v << 8 | UInt64(bytes[offset + i]) }
        return v
    }

    /// Reads `count` bytes as a new array.
    public mutating func readBytes(_ count: Int) throws(ByteReaderError) -> [UInt8] {
        guard count >= 0 else { throw .invalidLength(count) }
        try need(count)
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A sub-reader over the next `count` bytes; advances past them.
    public mutating func subReader(_ count: Int) throws(ByteReaderError) -> ByteReader {
        guard count >= 0 else { throw .invalidLength(count) }
        try need(count)
        defer { offset += count }
        return ByteReader(bytes, range: offset..<offset + count)
    }

    /// The bytes not yet read, consuming them.
    public mutating func readRest() -> [UInt8] {
        defer { offset = end }
        return offset < end ? Array(bytes[offset..<end]) : []
    }

    public mutating func skip(_ count: Int) throws(ByteReaderError) {
        guard count >= 0 else { throw .invalidLength(count) }
        try need(count)
        offset += count
    }

    private func need(_ count: Int) throws(ByteReaderError) {
        if end - offset < count {
            throw .truncated(needed: count, available: Swift.max(0, end - offset), at: offset)
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
