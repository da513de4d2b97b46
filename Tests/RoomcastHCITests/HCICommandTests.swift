import RoomcastHCI
import Shared
import Testing

/// Golden bytes for every command (opcode LE, length, parameters), checked
/// against the layouts in Core 5.4 Vol 4 Part E §7.3, §7.4 and §7.8.
@Suite struct HCICommandTests {
    static let cases: [(HCICommand, String)] = [
        (.reset, "030c00"),
        (.setEventMask(HCICommand.defaultEventMask), "010c08ffffffffff1f0020"),
        (.leSetEventMask(HCICommand.defaultLEEventMask), "0120081f10000000000000"),
        (.readBDAddr, "091000"),
        (.readLocalVersionInformation, "011000"),
        (.leReadLocalSupportedFeatures, "032000"),
        // Active scan, interval = window = 10 ms (0x0010), public own address, accept all.
        (.leSetScanParameters(.init(type: .active, interval: 0x0010, window: 0x0010)), "0b2007011000100000 00"),
        (.leSetScanEnable(enable: true, filterDuplicates: false), "0c20020100"),
        (.leSetScanEnable(enable: false, filterDuplicates: true), "0c20020001"),
        (.leSetExtendedScanParameters(.init(le1M: .init(type: .passive, interval: 0x0060, window: 0x0030))),
         "4120080000010060003000"),
        (.leSetExtendedScanParameters(.init(le1M: .init(type: .passive, interval: 0x0060, window: 0x0030),
                                            leCoded: .init(type: .active, interval: 0x0120, window: 0x0090))),
         "41200d000005006000300001200190 00"),
        (.leSetExtendedScanEnable(enable: true, filterDuplicates: false, duration: 0, period: 0), "422006010000000000"),
        // 100 ms (0x00A0) ADV_NONCONN_IND on all three channels.
        (.leSetAdvertisingParameters(.init()), "06200fa000a000030000000000000000 0700"),
        (.leSetAdvertisingData([0x02, 0x01, 0x06]), "082020030201 06" + String(repeating: "00", count: 28)),
        (.leSetScanResponseData([]), "09202000" + String(repeating: "00", count: 31)),
        (.leSetAdvertisingEnable(true), "0a200101"),
        (.leSetAdvertisingEnable(false), "0a200100"),
        (.leSetRandomAddress([0xC0, 0x11, 0x22, 0x33, 0x44, 0x55]), "052006554433 2211c0"),
    ]

    @Test(arguments: cases)
    func goldenBytes(command: HCICommand, expected: String) {
        #expect(Hex.encode(command.encoded) == Hex.encode(Hex.decode(expected)!))
        #expect(command.h4Packet.first == 0x01)
        #expect(Array(command.h4Packet.dropFirst()) == command.encoded)
    }

    @Test(arguments: cases)
    func decodesBackAsTheSameCommand(command: HCICommand, expected: String) throws {
        let packet = try HCIPacket.decode(h4: command.h4Packet)
        #expect(packet == .command(opcode: command.opcode, parameters: command.parameters))
    }

    @Test func opcodeSplitsIntoGroupAndCommand() {
        #expect(HCIOpcode.leSetExtendedScanEnable.ogf == 0x08)
        #expect(HCIOpcode.leSetExtendedScanEnable.ocf == 0x0042)
        #expect(HCIOpcode.leSetExtendedScanEnable.rawValue == 0x2042)
        #expect(HCIOpcode.reset.description == "0x0c03")
    }

    @Test func advertisingDataLongerThan31BytesIsCut() {
        let command = HCICommand.leSetAdvertisingData(Array(repeating: 0xAA, count: 40))
        #expect(command.parameters.count == 32)
        #expect(command.parameters[0] == 31)
    }
}
