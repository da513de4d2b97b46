import Shared
import Testing
@testable import RoomcastHCI

/// The reader thread's route decodes legacy report events straight into the burst; what it takes,
/// and what it leaves to the controller as a frame, is what `HCIEvent.decode` makes of the event.
@Suite struct ReportRouteTests {
    static let sentinel = AdvertisingReport(address: [1, 2, 3, 4, 5, 6], addressType: .random, eventType: AdvertisingEventType(legacy: 0x03),
                                            rssi: -40, data: [2, 1, 6], timestamp: 1)

    /// Events from their event code on: the two-report fixture of HCIEventTests, every prefix of it
    /// with its length byte made to agree (so each reaches the report decoder), the same with the
    /// length byte lying, and two events that are not advertising reports.
    static var events: [[UInt8]] {
        let full = Array(bytes(HCIEventTests.twoReports).dropFirst())
        var out: [[UInt8]] = [full]
        for n in 0..<full.count {
            var p = Array(full[0..<n])
            out.append(p)
            if n >= 2 { p[1] = UInt8(n - 2); out.append(p) }
        }
        out.append(Array(bytes(HCIEventTests.resetComplete).dropFirst()))
        out.append(Array(bytes(HCIEventTests.extendedReport).dropFirst()))
        return out
    }

    @Test func takesWhatTheEventDecoderDecodes() {
        let (_, producer) = BoundedStream<AdvertisingReport>.make(capacity: 16, mode: .dropOldest)
        let route = ReportRoute(sink: producer, counters: RadioCounters(), activity: HCIController.ActivityBox(),
                                framesDropped: { 0 })
        for event in Self.events {
            var expected: [AdvertisingReport]?
            if case let .leMeta(meta)? = try? HCIEvent.decode(event, timestamp: 5) {
                switch meta {
                case let .advertisingReports(r), let .extendedAdvertisingReports(r): expected = r
                case .unknown: break
                }
            }
            var complete = [Self.sentinel]
            let taken = route.collect(event: ByteReader(event), timestamp: 5, into: &complete)
            #expect(taken == (expected != nil), "\(Hex.encode(event))")
            #expect(complete == [Self.sentinel] + (expected ?? []), "\(Hex.encode(event))")
        }
    }

    /// An extended advertisement dropped unfinished (its end lost) is counted where the node's
    /// metrics read it, not only inside the assembler.
    @Test func aChainThatLostItsEndIsCountedInTheRadioCounters() throws {
        let (_, producer) = BoundedStream<AdvertisingReport>.make(capacity: 16, mode: .dropOldest)
        let counters = RadioCounters()
        let route = ReportRoute(sink: producer, counters: counters, activity: HCIController.ActivityBox(), framesDropped: { 0 })
        func reports(_ packet: [UInt8], at t: Double) throws -> [AdvertisingReport] {
            try HCIPacket.decode(h4: packet).eventReports.map { var r = $0; r.timestamp = t; return r }
        }
        var complete: [AdvertisingReport] = []
        route.collect(try reports(ExtendedReportAssemblerTests.fragment([1, 2], status: 1, rssi: -60), at: 0), into: &complete)
        route.collect(try reports(ExtendedReportAssemblerTests.fragment([3], status: 0, rssi: -60), at: 60), into: &complete)
        #expect(complete.map(\.data) == [[3]])
        #expect(counters.snapshot.fragmentsDiscarded == 1)
    }
}
