import Shared
import Testing
@testable import RoomcastAgent

@Suite struct BeaconTableTests {
    static func id(_ n: Int) -> BeaconID { BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-\(n / 65536)-\(n % 65536)")! }

    static func entry(_ n: Int, _ retention: BeaconTable.Retention = .ordinary, at t: Double = 0) -> BeaconTable.Entry {
        BeaconTable.Entry(id: id(n), retention: retention, name: nil, kind: .iBeacon, lastHeard: t,
                          ranger: BeaconRanger(id: id(n), config: RangingConfig()), published: nil)
    }

    /// Heard again: marks it most recently heard.
    static func hear(_ table: inout BeaconTable, _ n: Int, at t: Double) {
        let slot = table.slot(of: id(n))!
        table.touch(slot, retention: table[slot].retention)
        table[slot].lastHeard = t
    }

    /// `lookUp` finds what `slot(of:)` finds, whether the id is the entry's own string, another
    /// string of the same text, a small string, or an id whose beacon was evicted or forgotten.
    @Test func lookUpFindsWhatSlotOfFinds() {
        var table = BeaconTable(capacity: 8)
        var held: [BeaconID] = []  // the strings the entries hold, as the identifier hands them out
        for n in 0..<20 {
            let e = Self.entry(n, at: Double(n))
            held.append(e.id)
            _ = table.insert(e)
            if n % 5 == 4 { table.expire(now: Double(n), forgetAfter: 1.5) }
            let small = BeaconID("mac:0123456789ab")!
            if n == 10 { _ = table.insert(BeaconTable.Entry(id: small, retention: .known, name: nil, kind: .device, lastHeard: 10,
                                                              ranger: BeaconRanger(id: small, config: RangingConfig()), published: nil)) }
            for m in 0...n {
                let copy = BeaconID(String(decoding: Array(Self.id(m).rawValue.utf8), as: UTF8.self))!
                for id in [held[m], copy, Self.id(m)] {
                    #expect(table.lookUp(id) == table.slot(of: id), "\(m) after \(n)")
                }
                if m < 20 { #expect(table.lookUp(small) == table.slot(of: small)) }
            }
        }
    }

    @Test func fullTableEvictsTheLeastRecentlyHeard() {
        var table = BeaconTable(capacity: 3)
        for n in 0..<3 { #expect(table.insert(Self.entry(n))?.evicted == nil) }
        Self.hear(&table, 0, at: 1)
        #expect(table.insert(Self.entry(3))?.evicted?.id == Self.id(1), "1 is now the least recently heard")
        #expect(table.insert(Self.entry(4))?.evicted?.id == Self.id(2))
        #expect(table.insert(Self.entry(5))?.evicted?.id == Self.id(0))
        #expect(table.count == 3 && table.evictedTotal == 3)
        #expect(Set(table.entries.map(\.id)) == [Self.id(3), Self.id(4), Self.id(5)])
        #expect(table.entry(Self.id(0)) == nil && table.slot(of: Self.id(0)) == nil)
    }

    @Test func unlistedBeaconsGoBeforeRegionMembersBeforeKnownOnes() {
        var table = BeaconTable(capacity: 3)
        _ = table.insert(Self.entry(0, .known))
        _ = table.insert(Self.entry(1, .region))
        _ = table.insert(Self.entry(2, .ordinary))
        // A flood of unlisted beacons replaces unlisted ones only.
        for n in 3..<100 { #expect(table.insert(Self.entry(n))?.evicted?.retention == .ordinary) }
        #expect(table.entry(Self.id(0)) != nil && table.entry(Self.id(1)) != nil)
        // Region members take the unlisted slot, then each other's; the known beacon stays.
        #expect(table.insert(Self.entry(200, .region))?.evicted?.id == Self.id(99))
        #expect(table.insert(Self.entry(201, .region))?.evicted?.id == Self.id(1))
        #expect(table.insert(Self.entry(202))?.evicted?.id == Self.id(200), "no unlisted beacon left: the oldest region member")
        #expect(table.entry(Self.id(0))?.retention == .known)
        #expect(table.evicted == [0, 98, 2, 0])
    }

    /// A table with room for exactly the configured beacons (`max_tracked_beacons` may equal
    /// their number) filled with them: a stranger (a region member, a fingerprint match)
    /// evicted the oldest known beacon, whose filter started again at its next advertisement,
    /// when it evicted the stranger in turn. A stranger never takes a known beacon's place: it
    /// is not tracked.
    @Test func aStrangerNeverTakesAKnownBeaconsPlace() {
        var table = BeaconTable(capacity: 2)
        _ = table.insert(Self.entry(0, .known))
        _ = table.insert(Self.entry(1, .known))
        #expect(table.insert(Self.entry(2, .heardOnce)) == nil)
        #expect(table.insert(Self.entry(3, .region)) == nil)
        #expect(table.entry(Self.id(0)) != nil && table.entry(Self.id(1)) != nil && table.evictedTotal == 0)
        // A known beacon still takes another's place when the list is longer than the table.
        #expect(table.insert(Self.entry(4, .known))?.evicted?.id == Self.id(0))
    }

    @Test func expiryForgetsOnlyTheSilentAndTheirSlotsAreReused() {
        var table = BeaconTable(capacity: 4)
        for n in 0..<4 { _ = table.insert(Self.entry(n, at: Double(n))) }
        Self.hear(&table, 0, at: 10)
        #expect(table.expire(now: 12.5, forgetAfter: 10) == 2, "1 (heard at 1) and 2 (at 2) are past 10 s, 3 is not")
        #expect(Set(table.entries.map(\.id)) == [Self.id(0), Self.id(3)])
        #expect(table.insert(Self.entry(7, at: 12.5))?.evicted == nil && table.insert(Self.entry(8, at: 12.5))?.evicted == nil,
                "room again: nothing evicted")
        #expect(table.count == 4 && table.evictedTotal == 0)
        #expect(table.expire(now: 100, forgetAfter: 10) == 4 && table.count == 0)
        #expect(table.expire(now: .nan, forgetAfter: 10) == 0)
    }

    @Test func beaconsHeardOnceGoFirst() {
        var table = BeaconTable(capacity: 3)
        _ = table.insert(Self.entry(0, .heardOnce))
        _ = table.insert(Self.entry(1, .heardOnce))
        _ = table.insert(Self.entry(2, .heardOnce))
        table.touch(table.slot(of: Self.id(0))!, retention: .ordinary)
        for n in 3..<50 { #expect(table.insert(Self.entry(n, .heardOnce))?.evicted?.retention == .heardOnce) }
        #expect(table.entry(Self.id(0))?.retention == .ordinary, "heard twice: kept through a flood of one-off advertisers")
        #expect(table.evicted == [47, 0, 0, 0])
    }

    @Test func aBeaconWhoseClassChangesMovesList() {
        var table = BeaconTable(capacity: 2)
        _ = table.insert(Self.entry(0))
        _ = table.insert(Self.entry(1))
        table.touch(table.slot(of: Self.id(0))!, retention: .known)
        #expect(table.insert(Self.entry(2))?.evicted?.id == Self.id(1))
        #expect(table.insert(Self.entry(3))?.evicted?.id == Self.id(2))
        #expect(table.entry(Self.id(0))?.retention == .known)
    }
}
