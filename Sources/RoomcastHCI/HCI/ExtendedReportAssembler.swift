/// Joins extended advertising report fragments: a controller may split one
/// advertisement's data over several reports with data status "incomplete,
/// more to come" (Core 5.4 Vol 4 Part E §7.7.65.13 and Vol 6 Part B §4.4.2.3).
/// Fragments of one advertiser are matched by address, address type and SID.
/// Bounded: at most `maxPending` advertisers in flight and `maxDataLength`
/// bytes each (the spec's 1650), the oldest dropped first.
public struct ExtendedReportAssembler: Sendable {
    private struct Key: Hashable {
        var address: [UInt8]
        var addressType: UInt8
        var sid: UInt8?
    }

    private var pending: [Key: AdvertisingReport] = [:]
    private var order: [Key] = []
    public let maxPending: Int
    public let maxDataLength: Int
    /// Partial advertisements discarded because the table was full or they grew too long.
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
        var joined: AdvertisingReport
        if var earlier = pending.removeValue(forKey: key) {
            order.removeAll { $0 == key }
            earlier.data.append(contentsOf: report.data)
            // The last fragment's RSSI and time are the freshest (an RSSI an earlier fragment
            // had beats none).
            if let rssi = report.rssi { earlier.rssi = rssi }
            earlier.timestamp = report.timestamp
            earlier.eventType = earlier.eventType.with(dataStatus: status)
            joined = earlier
        } else {
            joined = report
        }
        if status != .incompleteMoreToCome { return joined }
        if joined.data.count > maxDataLength {
            discarded += 1
            return nil
        }
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
