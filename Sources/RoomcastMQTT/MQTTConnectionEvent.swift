/// A change in the client's connection, in the order it happened.
public enum MQTTConnectionEvent: Sendable, Hashable {
    /// Connected and every remembered subscription acknowledged: messages flow.
    case connected
    /// A live connection ended; `reason` is `.shutDown` after `shutdown()`.
    case disconnected(reason: MQTTError)
    /// One connection attempt failed; the next starts after `retryIn` seconds.
    case connectFailed(MQTTError, retryIn: Double)
}
