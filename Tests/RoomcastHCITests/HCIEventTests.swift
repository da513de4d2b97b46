import RoomcastHCI
import Shared
import Testing

func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex)! }

@Suite struct HCIEventTests {
    // Command Complete for HCI_Reset: 1 packet allowed, opcode 0x0c03, status 0.
    static let resetComplete = "040e0401030c00"
    // Command Complete for LE Read Local Supported Features: bit 12 (extended advertising) set.
    static let featuresComplete = "040e0c01032000ff1f000000000000"
    // Command Status: success, opcode LE Create Connection (0x200d).
    static let commandStatus = "040f0400010d20"
    // Hardware Error 0x05.
    static let hardwareError = "04100105"
    // LE Advertising Report with two reports: ADV_IND from public 11:22:33:44:55:66,
    // flags, RSSI -59; ADV_NONCONN_IND from random c0:00:00:00:00:01, no data, RSSI 127 (not available).
    static let twoReports = "043e190202" + "0000665544332211" + "03020106" + "c5" + "03010100000000c0" + "00" + "7f"
    // One LE Extended Advertising Report from PureSwift/Bluetooth HCITests (Apple PacketLogger,
    // without the H4 byte in the peer; MIT): A4:C1:38:2D:7A:27, RSSI -37, SID and TX power not available.
    static let extendedReport = "043e390d0113a600277a2d38c1a48100ff7fdb0000000000000000001f0d09475648353037325f37413237030388ec02010509ff88ec000394906400"
    // Disconnection Complete (0x05), which this library does not interpret.
    static let disconnection = "0405040040001 3"
    // LE Meta with subevent 0x01 (Connection Complete), kept as unknown.
    static let leConnectionComplete = "043e13010000400000112233445566 38000000c80000"

    static var valid: [String] {
        [resetComplete, featuresComplete, commandStatus, hardwareError, twoReports, extendedReport, disconnection,
         leConnectionComplete]
    }

    @Test func commandComplete() throws {
        let packet = try HCIPacket.decode(h4: bytes(Self.resetComplete))
        guard case let .event(.commandComplete(cc)) = packet else { Issue.record("\(packet)"); return }
        #expect(cc.opcode == .reset)
        #expect(cc.numHCICommandPackets == 1)
        #expect(cc.status == 0)
        #expect(cc.returnParameters == [0])
    }

    @Test func commandStatus() throws {
        let event = try HCIEvent.decode(Array(bytes(Self.commandStatus).dropFirst()))
        #expect(event == .commandStatus(CommandStatus(status: 0, numHCICommandPackets: 1, opcode: HCIOpcode(rawValue: 0x200D))))
    }

    @Test func hardwareError() throws {
        #expect(try HCIPacket.decode(h4: bytes(Self.hardwareError)) == .event(.hardwareError(code: 5)))
    }

    @Test func severalReportsInOneEvent() throws {
        let event = try HCIEvent.decode(Array(bytes(Self.twoReports).dropFirst()), timestamp: 1700000000.5)
        let reports = event.advertisingReports
        try #require(reports.count == 2)
        #expect(reports[0].address == [0x11, 0x22, 0x33, 0x44, 0x55, 0x66])
        #expect(reports[0].addressString == "11:22:33:44:55:66")
        #expect(reports[0].addressType == .public)
        #expect(reports[0].eventType.legacyCode == 0)
        #expect(reports[0].eventType.isConnectable && reports[0].eventType.isScannable)
        #expect(reports[0].rssi == -59)
        #expect(reports[0].data == [0x02, 0x01, 0x06])
        #expect(reports[0].timestamp == 1700000000.5)
        #expect(reports[0].extended == nil)
        #expect(reports[1].address == [0xC0, 0, 0, 0, 0, 0x01])
        #expect(reports[1].addressType == .random)
        #expect(reports[1].eventType.description == "ADV_NONCONN_IND")
        #expect(!reports[1].eventType.isConnectable)
        #expect(reports[1].data.isEmpty)
        #expect(reports[1].rssi == nil, "RSSI 127 means not available")
    }

    @Test func extendedReport() throws {
        let reports = try HCIPacket.decode(h4: bytes(Self.extendedReport)).eventReports
        try #require(reports.count == 1)
        let r = reports[0]
        #expect(r.addressString == "a4:c1:38:2d:7a:27")
        #expect(r.addressType == .public)
        #expect(r.rssi == -37)
        #expect(r.eventType.isLegacyPDU && r.eventType.isConnectable && r.eventType.isScannable)
        #expect(r.eventType.dataStatus == .complete)
        let ext = try #require(r.extended)
        #expect(ext.primaryPHY == .other(0x81))
        #expect(ext.secondaryPHY == nil)
        #expect(ext.sid == nil)
        #expect(ext.txPower == nil)
        #expect(ext.periodicAdvertisingInterval == 0)
        #expect(r.data == bytes("0d09475648353037325f37413237030388ec02010509ff88ec000394906400"))
    }

    @Test func unknownEventsAreKept() throws {
        #expect(try HCIPacket.decode(h4: bytes(Self.disconnection)) == .event(.unknown(code: 0x05, parameters: [0x00, 0x40, 0x00, 0x13])))
        let meta = try HCIPacket.decode(h4: bytes(Self.leConnectionComplete))
        guard case let .event(.leMeta(.unknown(subevent, parameters))) = meta else { Issue.record("\(meta)"); return }
        #expect(subevent == 0x01)
        #expect(parameters.count == 18)
    }

    @Test(arguments: valid)
    func everyTruncatedPrefixThrows(hex: String) throws {
        let full = bytes(hex)
        _ = try HCIPacket.decode(h4: full)
        for n in 0..<full.count {
            #expect(throws: HCIDecodeError.self, "prefix of \(n) bytes") { try HCIPacket.decode(h4: Array(full[0..<n])) }
        }
    }

    @Test func trailingBytesAfterTheDeclaredLengthThrow() {
        #expect(throws: HCIDecodeError.self) { try HCIPacket.decode(h4: bytes(Self.resetComplete) + [0]) }
    }

    @Test func unknownPacketTypeThrows() {
        #expect(throws: HCIDecodeError.unknownPacketType(0x41)) { try HCIPacket.decode(h4: bytes("413e0102")) }
    }

    @Test func reportCountLargerThanThePayloadThrows() {
        // Num_Reports 3, but only one report present.
        let hex = "043e0f0203" + "0000665544332211" + "00" + "c5" + "000000"
        #expect(throws: HCIDecodeError.self) { try HCIPacket.decode(h4: bytes(hex)) }
    }

    @Test func randomBytesNeverTrap() {
        var generator = SeededRandom(seed: 42)
        for _ in 0..<20_000 {
            let n = Int(generator.next() % 64)
            var packet: [UInt8] = [0x04, [0x3E, 0x0E, 0x0F, 0x10, 0x05][Int(generator.next() % 5)], UInt8(max(0, n - 3))]
            packet += (0..<max(0, n - 3)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            if n > 3 { packet[3] = [0x02, 0x0D, 0x01][Int(generator.next() % 3)] }
            _ = try? HCIPacket.decode(h4: packet)
        }
    }
}


extension HCIPacket {
    var eventReports: [AdvertisingReport] {
        if case let .event(e) = self { return e.advertisingReports }
        return []
    }
}
