/// A problem found while walking AD structures. Decoding goes on past it where
/// the structure boundaries are still known.
public struct ADIssue: Sendable, Equatable, Encodable, CustomStringConvertible {
    /// Offset of the AD structure's length byte in the input.
    public let offset: Int
    /// The AD type, when the structure got that far.
    public let adType: UInt8?
    public let problem: Problem

    public enum Problem: Sendable, Equatable {
        /// The length byte claims more bytes than are left; decoding stops here.
        case overrun(length: Int, available: Int)
        /// The payload length does not fit the AD type.
        case badLength(length: Int, expected: String)
        /// AD type 0x00 is not assigned.
        case reservedType
        /// A name that is not valid UTF-8 (decoded with replacement characters).
        case invalidUTF8
    }

    public init(offset: Int, adType: UInt8?, problem: Problem) {
        self.offset = offset
        self.adType = adType
        self.problem = problem
    }

    public var description: String {
        let type = adType.map { " (type 0x\(Self.hex2($0)))" } ?? ""
        let what: String
        switch problem {
        case let .overrun(length, available):
            what = "length \(length) runs past the end (\(available) byte(s) left); ignored the rest"
        case let .badLength(length, expected):
            what = "payload of \(length) byte(s), expected \(expected)"
        case .reservedType:
            what = "AD type 0x00 is not assigned; ignored"
        case .invalidUTF8:
            what = "name is not valid UTF-8"
        }
        return "AD structure at offset \(offset)\(type): \(what)"
    }

    enum CodingKeys: String, CodingKey { case offset, type, message }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(offset, forKey: .offset)
        try c.encodeIfPresent(adType.map(Int.init), forKey: .type)
        try c.encode(description, forKey: .message)
    }

    static func hex2(_ b: UInt8) -> String {
        let d = Array("0123456789abcdef")
        return String([d[Int(b >> 4)], d[Int(b & 0xF)]])
    }
}
