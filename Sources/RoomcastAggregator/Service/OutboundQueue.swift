import Shared
import Synchronization

/// Everything the aggregator publishes, in the order it was decided. The timer's output (a
/// refresh of a big site is thousands of QoS 1 messages, more than the MQTT client keeps
/// unacknowledged) and what inbound messages cause both go through this one queue to the
/// client. Sent on two paths, a refresh that waited for acknowledgements between its chunks went
/// out after changes decided later and put the old rooms back on the retained topics until the
/// next refresh, and a change that found the client's queue full was dropped.
final class OutboundQueue: Sendable {
    /// Messages held at most. Beyond it new ones are dropped and counted: a broker that stays
    /// connected but stops acknowledging must not take the aggregator's memory with it.
    let capacity: Int

    private struct State {
        var pending: [OutboundMessage] = []
        var waiter: CheckedContinuation<[OutboundMessage]?, Never>?
        var finished = false
        var dropped: UInt64 = 0
    }

    private let state = Mutex(State())

    init(capacity: Int = 200_000) {
        self.capacity = capacity
    }

    /// Queues `messages` behind everything queued before; returns how many did not fit.
    @discardableResult
    func append(_ messages: [OutboundMessage]) -> Int {
        guard !messages.isEmpty else { return 0 }
        let (waiter, batch, dropped): (CheckedContinuation<[OutboundMessage]?, Never>?, [OutboundMessage], Int) = state.withLock { s in
            guard !s.finished else { return (nil, [], messages.count) }
            let room = max(0, capacity - s.pending.count)
            let fits = messages.prefix(room)
            let dropped = messages.count - fits.count
            s.dropped &+= UInt64(dropped)
            guard let waiter = s.waiter else {
                s.pending += fits
                return (nil, [], dropped)
            }
            s.waiter = nil
            return (waiter, Array(fits), dropped)
        }
        waiter?.resume(returning: batch)
        return dropped
    }

    /// Everything queued, in order, waiting while nothing is; nil once `finish()` was called and
    /// the queue is empty. One consumer at a time.
    func next() async -> [OutboundMessage]? {
        await withCheckedContinuation { (c: CheckedContinuation<[OutboundMessage]?, Never>) in
            let ready: [OutboundMessage]?? = state.withLock { s in
                if !s.pending.isEmpty {
                    defer { s.pending.removeAll(keepingCapacity: true) }
                    return .some(s.pending)
                }
                if s.finished { return .some(nil) }
                s.waiter = c
                return nil
            }
            if let ready { c.resume(returning: ready) }
        }
    }

    /// No more messages: `next()` returns what is left, then nil.
    func finish() {
        let waiter = state.withLock { s in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Messages dropped because the queue was full.
    var dropped: UInt64 { state.withLock { $0.dropped } }

    /// Messages waiting.
    var count: Int { state.withLock { $0.pending.count } }
}
