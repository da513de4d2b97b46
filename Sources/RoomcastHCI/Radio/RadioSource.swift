/// A stream of advertising reports from one radio source: a live controller
/// (raw HCI socket or H4) or a capture replay. Create one with `RadioSourceFactory.make`.
public protocol RadioSource: AnyObject, Sendable {
    var spec: RadioSourceSpec { get }
    /// Every advertising report, legacy or extended (fragments already joined).
    /// Ends when a replay reaches the end of its file, on `shutdown()`, or when
    /// the source gives up (see `terminationError`).
    var reports: BoundedStream<AdvertisingReport> { get }
    /// Counters for node telemetry (reports, drops, HCI errors, resets, scan restarts).
    var counters: RadioCounters { get }
    /// Opens the source and starts delivering; throws what stops it from starting
    /// (adapter absent or down, permission, busy), with a message that says how to fix it.
    func start() async throws(RadioError)
    /// Stops scanning and advertising and releases the adapter (idempotent).
    func shutdown() async
    /// Why `reports` ended early, if it did.
    var terminationError: RadioError? { get }
    /// What the user should know about what was read, once `reports` has ended (a capture of two
    /// adapters replayed as one of them); nil when nothing.
    var notice: String? { get }
    /// True while the source delivers what the radio hears: a live adapter open and scanning, not
    /// absent at boot nor being reopened. A replay always is.
    var isListening: Bool { get }
}

extension RadioSource {
    public var notice: String? { nil }
    public var isListening: Bool { true }
}
