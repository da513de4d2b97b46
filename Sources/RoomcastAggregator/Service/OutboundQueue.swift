import Shared
import Synchronization

/// Everything the aggregator publishes, in the order it was decided. The timer's output (a
/// refresh of a big site is thousands of QoS 1 messages, more than the MQTT client keeps
/// unacknowledged) and what inbound messages cause both go through this one queue to the
/// client. Sent on two paths, a refresh that waited for acknowledgements between its chunks went
/// out after changes decided later and put the old rooms back on the retained topics until the
/// next refresh, and a change that found the client's queue full was dropped.
///
/// Control messages (the lease, the instance's liveness, the drain marker) wait in a lane of
/// their own that the sender empties first, between the chunks of a batch too: behind a big
/// site's refresh a lease renewal would reach the broker only once tens of thousands of
/// messages had been acknowledged, and a standby would take over from a live active instance.
final class OutboundQueue: Sendable {
    /// Messages held at most. Beyond it new ones are dropped and counted: a broker that stays
    /// connected but stops acknowledging must not take the aggregator's memory with it.
    let capacity: Int

    private struct State {
        var pending: [OutboundMessage] = []
        var control: [OutboundMessage] = []
        var waiter: CheckedContinuation<[OutboundMessage]?, Never>?
        var finished = false
        var dropped: UInt64 = 0
    }

    private let state = Mutex(State())

    init(capacity: Int = 200_000) {
        self.capacity = capacity
    }

    /// Control messages kept at most; beyond it the oldest go (each kind is sent again soon).
    static let controlCapacity = 64

    /// Queues control `messages` in their own lane, ahead of everything else.
    func appendControl(_ messages: [OutboundMessage]) {
        guard !messages.isEmpty else { return }
        let waiter: CheckedContinuation<[OutboundMessage]?, Never>? = state.withLock { s in
            guard !s.finished else { return nil }
            s.control += messages
            if s.control.count > Self.controlCapacity { s.control.removeFirst(s.control.count - Self.controlCapacity) }
            defer { s.waiter = nil }
            return s.waiter
        }
        // Woken with no batch: the sender takes the control lane first.
        waiter?.resume(returning: [])
    }

    /// The control messages waiting, oldest first.
    func takeControl() -> [OutboundMessage] {
        state.withLock { s in
            defer { s.control.removeAll() }
            return s.control
        }
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

    /// Everything queued, in order, waiting while nothing is (an empty batch: only control
    /// messages wait, for `takeControl()`); nil once `finish()` was called and the queue is
    /// empty. One consumer at a time.
    func next() async -> [OutboundMessage]? {
        await withCheckedContinuation { (c: CheckedContinuation<[OutboundMessage]?, Never>) in
            let ready: [OutboundMessage]?? = state.withLock { s in
                if !s.pending.isEmpty {
                    defer { s.pending.removeAll(keepingCapacity: true) }
                    return .some(s.pending)
                }
                if !s.control.isEmpty { return .some([]) }
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
