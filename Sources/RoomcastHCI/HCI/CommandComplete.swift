import Shared

/// Core 5.4 Vol 4 Part E §7.7.14: the controller finished a command.
public struct CommandComplete: Sendable, Hashable {
    /// How many more commands the controller accepts now.
    public var numHCICommandPackets: UInt8
    public var opcode: HCIOpcode
    /// Return parameters; the first byte is the status for every command this library sends.
    public var returnParameters: [UInt8]

    public init(numHCICommandPackets: UInt8, opcode: HCIOpcode, returnParameters: [UInt8]) {
        self.numHCICommandPackets = numHCICommandPackets
        self.opcode = opcode
        self.returnParameters = returnParameters
    }

    /// The status byte (0 = success); nil when there are no return parameters.
    public var status: UInt8? { returnParameters.first }

    static func decode(from r: inout ByteReader) throws(HCIDecodeError) -> CommandComplete {
        let n = try r.hci { r throws(ByteReaderError) in try r.readUInt8() }
        let op = try r.hci { r throws(ByteReaderError) in try r.readUInt16LE() }
        return CommandComplete(numHCICommandPackets: n, opcode: HCIOpcode(rawValue: op), returnParameters: r.readRest())
    }
}
