import Shared

/// Empty retained payloads held back until Home Assistant has removed the entities that read
/// those topics. Home Assistant removes an entity some time after its discovery config is
/// cleared; a state topic cleared with it could still reach the entity's templates, which fail
/// on an empty payload and log an error. Nothing tells when the entity has gone, so the clears
/// wait `delay` seconds: a generous margin over the milliseconds it takes.
struct DeferredClears: Sendable {
    /// Seconds between a discovery config's removal and the clearing of its state topics.
    static var delay: Double { 30 }
    /// Clears held at most; beyond it they go at once (a flood of evicted strangers).
    static var maximum: Int { 65_536 }

    private var queue: [(due: Double, message: OutboundMessage)] = []
    private var head = 0
    /// The latest due time of each topic held. A clear held again (its config removed again,
    /// because the first removal went with a lost link) waits from the newest removal; the
    /// earlier one is dropped when it falls due.
    private var latestDue: [String: Double] = [:]

    /// Holds `messages` until `delay` seconds after `now`; returns those that do not fit, to be
    /// sent at once.
    mutating func add(_ messages: [OutboundMessage], now: Double) -> [OutboundMessage] {
        // A topic already held to the same time is held once: both would fall due together.
        let fresh = messages.filter { latestDue[$0.topic] != now + Self.delay }
        let room = max(0, Self.maximum - (queue.count - head))
        for m in fresh.prefix(room) {
            queue.append((now + Self.delay, m))
            latestDue[m.topic] = now + Self.delay
        }
        return Array(fresh.dropFirst(room))
    }

    /// The clears due at `now`, in the order they were held.
    mutating func due(now: Double) -> [OutboundMessage] {
        var out: [OutboundMessage] = []
        while head < queue.count, queue[head].due <= now {
            let (due, message) = queue[head]
            head += 1
            guard due >= latestDue[message.topic] ?? due else { continue }
            latestDue[message.topic] = nil
            out.append(message)
        }
        if head > 1024 && head * 2 > queue.count {
            queue.removeFirst(head)
            head = 0
        }
        return out
    }

    /// The wall clock stepped back by `seconds`: the waits keep their length.
    mutating func clockSteppedBack(by seconds: Double) {
        for i in head..<queue.count { queue[i].due -= seconds }
        for topic in latestDue.keys { latestDue[topic]! -= seconds }
    }
}
