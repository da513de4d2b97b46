import Foundation
import Synchronization

/// Advertising reports replayed from a btsnoop capture (datalink 1002 H4 or
/// 2001 monitor), decoded on a dedicated thread straight from the file
/// buffer. Timestamps are the capture's, so a replay is deterministic at any
/// speed; the stream is lossless and ends cleanly at the end of the file.
public final class ReplayRadioSource: RadioSource {
    public let spec: RadioSourceSpec
    public let reports: BoundedStream<AdvertisingReport>
    public let counters = RadioCounters()
    private let producer: BoundedStream<AdvertisingReport>.Producer
    private let path: String
    private let speed: ReplaySpeed
    private let state = Mutex<(started: Bool, error: RadioError?, notice: String?)>((false, nil, nil))

    /// A replay of `path` at `speed`; nothing is read before `start()`.
    public init(path: String, speed: ReplaySpeed, bufferCapacity: Int = 4096) {
        self.path = path
        self.speed = speed
        spec = .btsnoop(path: path, speed: speed)
        // At max speed reports travel in batches of `maxSpeedBatch`: bound the batches, not the reports.
        let batches = speed == .max ? Swift.max(2, bufferCapacity / Self.maxSpeedBatch) : bufferCapacity
        (reports, producer) = BoundedStream<AdvertisingReport>.make(capacity: batches, mode: .lossless)
    }

    static let maxSpeedBatch = 256

    public var terminationError: RadioError? { state.withLock { $0.error } }

    public var notice: String? { state.withLock { $0.notice } }

    /// What to say about a capture: one of more than one adapter, replayed as the first of them;
    /// one that ends inside a record (a recording cut off while it was written: a power cut, a
    /// full disk), whose replay stops short of where the file ends.
    static func notice(_ reader: BTSnoopReader) -> String? {
        var said: [String] = []
        if reader.otherAdapterRecords > 0, let adapter = reader.followedAdapter {
            said.append("the capture holds more than one adapter's records: replayed hci\(adapter)'s, the first heard, and skipped "
                        + "\(reader.otherAdapterRecords) of the others (one node is one adapter; capture one with btmon -i)")
        }
        if reader.endedInsideRecord {
            said.append("the capture ends inside a record (cut off while it was written?): replayed the records before it")
        }
        return said.isEmpty ? nil : said.joined(separator: "; ")
    }

    public func start() async throws(RadioError) {
        guard !state.withLock({ s in defer { s.started = true }; return s.started }) else { return }
        let reader: BTSnoopReader
        // 64 KB reads: the default 1 MB buffer would be a twentieth of the agent's memory.
        do { reader = try BTSnoopReader(path: path, chunkSize: 64 * 1024) } catch {
            producer.finish()
            throw .capture(error)
        }
        let box = UncheckedBox(reader)
        let producer = self.producer, counters = self.counters, speed = self.speed
        let thread = Thread { [weak self] in
            let error = Self.run(reader: box.value, speed: speed, producer: producer, counters: counters)
            let notice = Self.notice(box.value)
            self?.state.withLock { s in
                s.error = error
                s.notice = notice
            }
            producer.finish()
        }
        thread.name = "btsnoop-replay"
        thread.start()
    }

    public func shutdown() async { producer.finish() }

    /// The replay loop; returns the error that ended it early, if any.
    static func run(reader: BTSnoopReader, speed: ReplaySpeed, producer: BoundedStream<AdvertisingReport>.Producer,
                    counters: RadioCounters) -> RadioError? {
        defer { reader.shutdown() }
        var pacer = ReplayPacer(speed: speed)
        var assembler = ExtendedReportAssembler()
        // Reports go over in batches: at max speed as they fill; when paced, one batch per
        // `window` seconds of wall time, handed over when its last record is due: never early,
        // at most `window` late, as a radio read in bursts would deliver them. Waking a thread
        // costs more than handling the reports it brings (measured: 50 ms windows halve the
        // agent's CPU against 20 ms ones on a VM); in real time 50 ms stays below the 100 ms
        // interval of a fast beacon, so one beacon still appears at most once per batch.
        let batchSize = maxSpeedBatch
        let window = 0.05
        var handOver: Double?  // paced: when the pending batch goes over (monotonic wall time)
        var pending = [AdvertisingReport]()
        pending.reserveCapacity(batchSize)
        var finishedCleanly = false
        defer {
            // End of the capture: the last batch is not handed over before it is due either.
            if finishedCleanly, let handOver { _ = ReplayPacer.sleep(until: handOver, stopped: { producer.isStopped }) }
            if !pending.isEmpty { producer.yield(contentsOf: pending) }
        }
        do throws(BTSnoopError) {
            while let record = try reader.next() {
                guard record.type == .event, record.direction == .controllerToHost else { continue }
                if pacer.factor != nil {
                    // A jump in the capture's clock ends the batch too, and the pacer starts its
                    // clock again from it (`ReplayPacer.wait`): a record stepped back is due at
                    // once by the old clock, and so would every record after it be, until the
                    // capture's clock had made the step up again.
                    if let end = handOver, pacer.isJump(to: record.timestamp) || pacer.dueTime(record.timestamp) > end {
                        guard ReplayPacer.sleep(until: end, stopped: { producer.isStopped }) else { return nil }
                        handOver = nil
                        if !pending.isEmpty {
                            let due = pending
                            pending.removeAll(keepingCapacity: true)
                            if !producer.yield(contentsOf: due) { return nil }
                        }
                    }
                    if handOver == nil {
                        // The first record of a batch: wait until it is due (the first of all starts the clock).
                        guard pacer.wait(until: record.timestamp, stopped: { producer.isStopped }) else { return nil }
                        handOver = pacer.dueTime(record.timestamp) + window
                    }
                }
                let before = pending.count
                do throws(HCIDecodeError) {
                    // Legacy report events straight into the batch (they need no joining); others decoded whole.
                    if try !LEMetaEvent.appendReports(ofEvent: record.reader, timestamp: record.timestamp, into: &pending) {
                        var r = record.reader
                        guard case let .leMeta(meta) = try HCIEvent.decode(from: &r, timestamp: record.timestamp) else { continue }
                        let batch: [AdvertisingReport]
                        switch meta {
                        case let .advertisingReports(b), let .extendedAdvertisingReports(b): batch = b
                        case .unknown: continue
                        }
                        for report in batch {
                            guard let complete = assembler.add(report) else { continue }
                            pending.append(complete)
                        }
                    }
                } catch {
                    counters.hciErrors.add(1, ordering: .relaxed)
                    continue
                }
                if pending.count > before { counters.reports.add(UInt64(pending.count - before), ordering: .relaxed) }
                if pending.count >= batchSize {
                    if pacer.factor != nil {
                        guard ReplayPacer.sleep(until: pacer.dueTime(record.timestamp), stopped: { producer.isStopped }) else {
                            return nil
                        }
                    }
                    let full = pending
                    pending.removeAll(keepingCapacity: true)
                    if !producer.yield(contentsOf: full) { return nil }
                }
            }
        } catch {
            return .capture(error)
        }
        finishedCleanly = true
        return nil
    }
}
