import Shared

/// Core 5.4 Vol 4 Part E §7.7.15: the controller accepted (status 0) or refused a command.
public struct CommandStatus: Sendable, Hashable {
    public var status: UInt8
    public var numHCICommandPackets: UInt8
    public var opcode: HCIOpcode

    public init(status: UInt8, numHCICommandPackets: UInt8, opcode: HCIOpcode) {
        self.status = status
        self.numHCICommandPackets = numHCICommandPackets
        self.opcode = opcode
    }

    static func decode(from r: inout ByteReader) throws(HCIDecodeError) -> CommandStatus {
        try r.hci { r throws(ByteReaderError) in
            CommandStatus(status: try r.readUInt8(), numHCICommandPackets: try r.readUInt8(),
                          opcode: HCIOpcode(rawValue: try r.readUInt16LE()))
        }
    }
}
