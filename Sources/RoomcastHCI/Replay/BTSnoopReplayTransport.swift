import Foundation
import Synchronization

/// A read-only transport replaying the packets of a btsnoop capture, in
/// order, with their capture timestamps. Lossless: the reader thread waits
/// for the consumer. End of file is a clean end of the stream.
public final class BTSnoopReplayTransport: HCITransport {
    public let name: String
    public let frames: BoundedStream<HCIFrame>
    private let producer: BoundedStream<HCIFrame>.Producer
    private let termination = Mutex<RadioError?>(nil)

    /// Opens `path` (the header is checked here) and starts replaying at `speed`.
    public init(path: String, speed: ReplaySpeed, capacity: Int = 1024) throws(RadioError) {
        name = path
        let reader: BTSnoopReader
        do { reader = try BTSnoopReader(path: path) } catch { throw .capture(error) }
        (frames, producer) = BoundedStream<HCIFrame>.make(capacity: capacity, mode: .lossless)
        let producer = self.producer
        let box = UncheckedBox(reader)
        let thread = Thread { [weak self] in
            var pacer = ReplayPacer(speed: speed)
            let reader = box.value
            do throws(BTSnoopError) {
                while let record = try reader.next() {
                    guard pacer.wait(until: record.timestamp, stopped: { producer.isStopped }) else { break }
                    if !producer.yield(record.frame) { break }
                }
            } catch {
                self?.termination.withLock { $0 = .capture(error) }
            }
            reader.shutdown()
            producer.finish()
        }
        thread.name = "btsnoop-replay"
        thread.start()
    }

    public var terminationError: RadioError? { termination.withLock { $0 } }

    public func send(_ command: HCICommand) throws(RadioError) { throw .readOnly(name) }

    public func shutdown() { producer.finish() }
}

/// Hands a non-Sendable value to the one thread that will own it from then on.
struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
