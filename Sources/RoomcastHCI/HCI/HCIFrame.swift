import Shared

/// One HCI packet as a transport delivered or sent it: type, the bytes after
/// the H4 indicator, and when (unix seconds on the source's clock).
public struct HCIFrame: Sendable, Hashable {
    public enum Direction: Sendable, Hashable {
        /// Events and incoming data.
        case controllerToHost
        /// Commands and outgoing data.
        case hostToController
    }

    public var type: HCIPacketType
    public var bytes: [UInt8]
    public var timestamp: Double
    public var direction: Direction

    public init(type: HCIPacketType, bytes: [UInt8], timestamp: Double, direction: Direction) {
        self.type = type
        self.bytes = bytes
        self.timestamp = timestamp
        self.direction = direction
    }

    /// The frame as an H4 packet (indicator first).
    public var h4Bytes: [UInt8] { [type.rawValue] + bytes }

    /// Decodes the packet.
    public func decode() throws(HCIDecodeError) -> HCIPacket {
        var r = ByteReader(bytes)
        return try HCIPacket.decode(type: type, from: &r, timestamp: timestamp)
    }
}
