import Shared
import Synchronization

/// The way from advertising report events to a controller's report stream: joins extended
/// fragments, counts, notes the newest report for the supervisor and hands bursts over in
/// steps of at most `HCIController.maxBatch`. The controller's task uses it for the events it
/// decodes; a `FileDescriptorTransport` given one decodes report events on its reader thread and
/// hands them straight over, so a burst reaches the agent in one thread hand-over (as a replay's
/// does) instead of two, and report events are decoded in place, not copied into frames first.
final class ReportRoute: Sendable {
    private let sink: BoundedStream<AdvertisingReport>.Producer
    private let counters: RadioCounters
    private let activity: HCIController.ActivityBox
    private let framesDropped: @Sendable () -> UInt64
    /// Taken once per event by whichever thread decodes it (uncontended: one reader at a time).
    private let assembler = Mutex(ExtendedReportAssembler())

    init(sink: BoundedStream<AdvertisingReport>.Producer, counters: RadioCounters, activity: HCIController.ActivityBox,
         framesDropped: @escaping @Sendable () -> UInt64) {
        self.sink = sink
        self.counters = counters
        self.activity = activity
        self.framesDropped = framesDropped
    }

    /// Adds an event's reports to `complete` (fragments joined); hands them over when `complete` is full.
    func collect(_ reports: [AdvertisingReport], into complete: inout [AdvertisingReport]) {
        let discarded = assembler.withLock { a -> UInt64 in
            let before = a.discarded
            for report in reports {
                if let done = a.add(report) { complete.append(done) }
            }
            return a.discarded - before
        }
        if discarded > 0 { counters.fragmentsDiscarded.add(discarded, ordering: .relaxed) }
        if complete.count >= HCIController.maxBatch { handOver(&complete) }
    }

    /// Decodes the event in `reader` and collects its reports when it is an advertising report
    /// event; false (nothing consumed) for any other event or one that does not decode, which
    /// goes to the controller as a frame.
    func collect(event reader: ByteReader, timestamp: Double, into complete: inout [AdvertisingReport]) -> Bool {
        // Legacy reports need no joining: decoded straight into `complete`, without an array per event.
        do throws(HCIDecodeError) {
            if try LEMetaEvent.appendReports(ofEvent: reader, timestamp: timestamp, into: &complete) {
                if complete.count >= HCIController.maxBatch { handOver(&complete) }
                return true
            }
        } catch { return false }
        var r = reader
        // Event code and subevent first: only LE advertising reports are decoded here.
        guard r.remaining >= 3, r.bytes[r.offset] == 0x3E else { return false }
        let subevent = r.bytes[r.offset + 2]
        guard subevent == 0x02 || subevent == 0x0D else { return false }
        guard let event = try? HCIEvent.decode(from: &r, timestamp: timestamp) else { return false }
        switch event {
        case let .leMeta(.advertisingReports(reports)), let .leMeta(.extendedAdvertisingReports(reports)):
            collect(reports, into: &complete)
            return true
        default:
            return false
        }
    }

    /// Hands `complete` over in one step and empties it.
    func handOver(_ complete: inout [AdvertisingReport]) {
        guard let last = complete.last else { return }
        counters.reports.add(UInt64(complete.count), ordering: .relaxed)
        activity.withLock { $0.lastReportAt = last.timestamp }
        sink.yield(contentsOf: complete)
        complete.removeAll(keepingCapacity: true)
        counters.dropped.store(sink.dropped + framesDropped(), ordering: .relaxed)
    }
}
