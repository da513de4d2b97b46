import RoomcastHCI
import Testing

@Suite struct H4FramerTests {
    @Test func packetsSplitAnywhereAreReassembled() throws {
        let packets: [[UInt8]] = [
            bytes(HCIEventTests.resetComplete), bytes(HCIEventTests.twoReports), bytes(HCIEventTests.extendedReport),
            [0x02, 0x40, 0x20, 0x03, 0x00, 0xAA, 0xBB, 0xCC],  // ACL, handle 0x040, 3 bytes
            HCICommand.reset.h4Packet,
        ]
        let stream = packets.flatMap { $0 }
        for chunk in [1, 2, 3, 7, 50, stream.count] {
            var framer = H4Framer()
            var out = [[UInt8]]()
            var i = 0
            while i < stream.count {
                framer.append(stream[i..<min(i + chunk, stream.count)])
                i += chunk
                while let p = try framer.next() { out.append([p.type.rawValue] + p.bytes) }
            }
            #expect(out == packets, "chunk \(chunk)")
            #expect(framer.pendingCount == 0)
        }
    }

    @Test func anUnknownIndicatorThrows() {
        var framer = H4Framer()
        framer.append([0x41, 0x3E, 0x00])
        #expect(throws: HCIDecodeError.unknownPacketType(0x41)) { try framer.next() }
    }
}
