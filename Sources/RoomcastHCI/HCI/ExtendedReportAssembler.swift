/// Joins extended advertising report fragments: a controller may split one
/// advertisement's data over several reports with data status "incomplete,
/// more to come" (Core 5.4 Vol 4 Part E §7.7.65.13 and Vol 6 Part B §4.4.2.3).
/// Fragments of one advertiser are matched by address, address type and SID.
/// Bounded: at most `maxPending` advertisers in flight and `maxDataLength`
/// bytes each (the spec's 1650), the oldest dropped first; and timed: a chain's
/// next fragment comes within `maxFragmentGap` seconds, so an older partial
/// advertisement (its end lost) is dropped rather than put before new data.
public struct ExtendedReportAssembler: Sendable {
    private struct Key: Hashable {
        var address: [UInt8]
        var addressType: UInt8
        var sid: UInt8?
    }

    /// A partial advertisement; `overflowed` once it outgrew `maxDataLength`: its data is
    /// dropped, and so are its further fragments, up to and including its end.
    private struct Partial {
        var report: AdvertisingReport
        var overflowed = false
    }

    private var pending: [Key: Partial] = [:]
    private var order: [Key] = []
    public let maxPending: Int
    public let maxDataLength: Int
    /// Seconds between one fragment and the next of a chain: an auxiliary packet's offset
    /// reaches at most 8191 × 300 µs ≈ 2.46 s ahead (Core 5.4 Vol 6 Part B §2.3.4.5).
    public static var maxFragmentGap: Double { 3 }
    /// Partial advertisements discarded because the table was full, they grew too long or
    /// their end never came.
    public private(set) var discarded: UInt64 = 0

    public init(maxPending: Int = 32, maxDataLength: Int = 1650) {
        self.maxPending = maxPending
        self.maxDataLength = maxDataLength
    }

    /// Feeds one report; returns the complete advertisement when `report`
    /// finishes one (a legacy or complete report is returned as is). A
    /// truncated ending is returned with what arrived and status truncated.
    public mutating func add(_ report: AdvertisingReport) -> AdvertisingReport? {
        guard report.extended != nil else { return report }
        let key = Key(address: report.address, addressType: report.addressType.rawValue, sid: report.extended?.sid)
        let status = report.eventType.dataStatus
        if status == .complete && pending.isEmpty { return report }
        var joined = Partial(report: report)
        if let earlier = pending.removeValue(forKey: key) {
            order.removeAll { $0 == key }
            if !(report.timestamp - earlier.report.timestamp <= Self.maxFragmentGap) {
                if !earlier.overflowed { discarded += 1 }  // its end was lost: this report starts afresh
            } else if earlier.overflowed {
                joined = earlier
                joined.report.timestamp = report.timestamp
                if status != .incompleteMoreToCome { return nil }
            } else {
                joined = earlier
                joined.report.data.append(contentsOf: report.data)
                // The last fragment's RSSI and time are the freshest (an RSSI an earlier fragment
                // had beats none).
                if let rssi = report.rssi { joined.report.rssi = rssi }
                joined.report.timestamp = report.timestamp
                joined.report.eventType = joined.report.eventType.with(dataStatus: status)
            }
        }
        if !joined.overflowed, joined.report.data.count > maxDataLength {
            discarded += 1
            guard status == .incompleteMoreToCome else { return nil }
            joined.overflowed = true
            joined.report.data = []
        }
        if status != .incompleteMoreToCome { return joined.report }
        if pending.count >= maxPending, let oldest = order.first {
            order.removeFirst()
            pending.removeValue(forKey: oldest)
            discarded += 1
        }
        pending[key] = joined
        order.append(key)
        return nil
    }

    /// Advertisers with fragments waiting for their end.
    public var pendingCount: Int { pending.count }
}
