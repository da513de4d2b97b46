import RoomcastHCI
import Testing

@Suite struct ExtendedReportAssemblerTests {
    /// An extended report event: non-connectable, data status `status`, SID 3, RSSI `rssi`.
    static func fragment(_ data: [UInt8], status: UInt16, rssi: Int8, address: UInt8 = 0x01, sid: UInt8 = 3) -> [UInt8] {
        let type = status << 5
        var p: [UInt8] = [0x0D, 0x01, UInt8(type & 0xFF), UInt8(type >> 8), 0x01, address, 0, 0, 0, 0, 0xC0]
        p += [0x01, 0x02, sid, 0x7F, UInt8(bitPattern: rssi), 0, 0, 0, 0, 0, 0, 0, 0, 0]
        p += [UInt8(data.count)] + data
        return [0x04, 0x3E, UInt8(p.count)] + p
    }

    func reports(_ packets: [[UInt8]]) throws -> [AdvertisingReport] {
        var assembler = ExtendedReportAssembler()
        var out = [AdvertisingReport]()
        for p in packets {
            for r in try HCIPacket.decode(h4: p).eventReports {
                if let done = assembler.add(r) { out.append(done) }
            }
        }
        return out
    }

    @Test func dataSplitOverSeveralEventsIsJoined() throws {
        let out = try reports([
            Self.fragment([1, 2, 3], status: 1, rssi: -60),
            Self.fragment([4, 5], status: 1, rssi: -61),
            Self.fragment([6], status: 0, rssi: -62),
        ])
        try #require(out.count == 1)
        #expect(out[0].data == [1, 2, 3, 4, 5, 6])
        #expect(out[0].rssi == -62)
        #expect(out[0].eventType.dataStatus == .complete)
        #expect(out[0].extended?.sid == 3)
        #expect(out[0].extended?.primaryPHY == .le1M)
        #expect(out[0].extended?.secondaryPHY == .le2M)
        #expect(out[0].extended?.txPower == nil)
        #expect(out[0].address == [0xC0, 0, 0, 0, 0, 0x01])
    }

    /// The last fragment without an RSSI (127): the earlier fragment's stands.
    @Test func aFragmentWithoutRSSIKeepsTheEarlierOne() throws {
        let out = try reports([Self.fragment([1, 2], status: 1, rssi: -60), Self.fragment([3], status: 0, rssi: 127)])
        try #require(out.count == 1)
        #expect(out[0].data == [1, 2, 3] && out[0].rssi == -60)
    }

    @Test func interleavedAdvertisersStayApart() throws {
        let out = try reports([
            Self.fragment([1], status: 1, rssi: -50, address: 1),
            Self.fragment([9], status: 1, rssi: -70, address: 2),
            Self.fragment([2], status: 0, rssi: -51, address: 1),
            Self.fragment([8], status: 0, rssi: -71, address: 2),
        ])
        #expect(out.map(\.data) == [[1, 2], [9, 8]])
    }

    @Test func aTruncatedEndKeepsWhatArrived() throws {
        let out = try reports([Self.fragment([1, 2], status: 1, rssi: -50), Self.fragment([3], status: 2, rssi: -50)])
        #expect(out.map(\.data) == [[1, 2, 3]])
        #expect(out.first?.eventType.dataStatus == .incompleteTruncated)
    }

    /// A partial advertisement whose end was lost (a scan restarted mid-chain) is not put before
    /// the same advertiser's next advertisement a minute later.
    @Test func aFragmentWhoseEndWasLostIsDroppedInTime() throws {
        var assembler = ExtendedReportAssembler()
        func add(_ packet: [UInt8], at t: Double) throws -> AdvertisingReport? {
            var r = try #require(try HCIPacket.decode(h4: packet).eventReports.first)
            r.timestamp = t
            return assembler.add(r)
        }
        #expect(try add(Self.fragment([1, 2], status: 1, rssi: -60), at: 0) == nil)
        #expect(try add(Self.fragment([3], status: 0, rssi: -60), at: 60)?.data == [3])
        #expect(assembler.discarded == 1 && assembler.pendingCount == 0)
        // Within the gap a chain still joins.
        #expect(try add(Self.fragment([4], status: 1, rssi: -60), at: 61) == nil)
        #expect(try add(Self.fragment([5], status: 0, rssi: -60), at: 62)?.data == [4, 5])
    }

    /// An advertisement that outgrows the limit is dropped whole: its last fragment is not
    /// handed on as an advertisement of its own.
    @Test func anAdvertisementTooLongIsDroppedUpToItsEnd() throws {
        var assembler = ExtendedReportAssembler(maxDataLength: 4)
        var out: [[UInt8]] = []
        for p in [Self.fragment([1, 2, 3], status: 1, rssi: -50), Self.fragment([4, 5], status: 1, rssi: -50),
                  Self.fragment([6], status: 1, rssi: -50), Self.fragment([7], status: 0, rssi: -50),
                  Self.fragment([8], status: 0, rssi: -50)] {
            for r in try HCIPacket.decode(h4: p).eventReports { if let done = assembler.add(r) { out.append(done.data) } }
        }
        #expect(out == [[8]] && assembler.discarded == 1 && assembler.pendingCount == 0)
        // One whose last fragment takes it past the limit is dropped too.
        out = []
        for p in [Self.fragment([1, 2, 3], status: 1, rssi: -50), Self.fragment([4, 5], status: 0, rssi: -50)] {
            for r in try HCIPacket.decode(h4: p).eventReports { if let done = assembler.add(r) { out.append(done.data) } }
        }
        #expect(out.isEmpty && assembler.discarded == 2 && assembler.pendingCount == 0)
    }

    /// RSSI −127…+20 dBm is a measurement; 127 (not available) and the reserved 21…126 are not.
    @Test func aReservedRSSIIsNoMeasurement() throws {
        func legacy(rssi: UInt8) throws -> Int? {
            let p: [UInt8] = [0x02, 0x01, 0x03, 0x01, 1, 2, 3, 4, 5, 6, 0x00, rssi]
            return try #require(try HCIPacket.decode(h4: [0x04, 0x3E, UInt8(p.count)] + p).eventReports.first).rssi
        }
        #expect(try legacy(rssi: 0x14) == 20 && legacy(rssi: 0xB0) == -80)
        #expect(try legacy(rssi: 0x64) == nil && legacy(rssi: 0x15) == nil && legacy(rssi: 0x7F) == nil)
        let extended = try #require(try HCIPacket.decode(h4: Self.fragment([1], status: 0, rssi: 100)).eventReports.first)
        #expect(extended.rssi == nil)
    }

    @Test func pendingAdvertisersAreBounded() throws {
        var assembler = ExtendedReportAssembler(maxPending: 4)
        for a in 0..<10 {
            for r in try HCIPacket.decode(h4: Self.fragment([1], status: 1, rssi: -50, address: UInt8(a))).eventReports {
                #expect(assembler.add(r) == nil)
            }
        }
        #expect(assembler.pendingCount == 4)
        #expect(assembler.discarded == 6)
    }
}
