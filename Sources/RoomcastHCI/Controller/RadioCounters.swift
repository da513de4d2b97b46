import Synchronization

/// Radio health counters for node telemetry; updated lock-free from any thread.
public final class RadioCounters: Sendable {
    /// A consistent-enough copy of the counters at one moment.
    public struct Snapshot: Sendable, Hashable {
        /// Advertising reports delivered (extended fragments joined count once).
        public var reports: UInt64
        /// Reports dropped because the consumer fell behind.
        public var dropped: UInt64
        /// Failed commands, command timeouts, hardware errors and undecodable packets.
        public var hciErrors: UInt64
        /// Adapter resets (HCI Reset and re-initialisation).
        public var resets: UInt64
        /// Scan restarts after a stall.
        public var scanRestarts: UInt64
        /// Transport reopen attempts after the adapter vanished.
        public var reopens: UInt64
        /// Extended advertisements dropped unfinished: a chain of fragments that lost its end,
        /// grew too long, or found no room (`ExtendedReportAssembler.discarded`).
        public var fragmentsDiscarded: UInt64
    }

    let reports = Atomic<UInt64>(0)
    let dropped = Atomic<UInt64>(0)
    let hciErrors = Atomic<UInt64>(0)
    let resets = Atomic<UInt64>(0)
    let scanRestarts = Atomic<UInt64>(0)
    let reopens = Atomic<UInt64>(0)
    let fragmentsDiscarded = Atomic<UInt64>(0)

    public init() {}

    /// The counters now, for telemetry (`NodeTelemetry.hciErrors`, `.hciResets`, `.dropped`).
    public var snapshot: Snapshot {
        Snapshot(reports: reports.load(ordering: .relaxed), dropped: dropped.load(ordering: .relaxed),
                 hciErrors: hciErrors.load(ordering: .relaxed), resets: resets.load(ordering: .relaxed),
                 scanRestarts: scanRestarts.load(ordering: .relaxed), reopens: reopens.load(ordering: .relaxed),
                 fragmentsDiscarded: fragmentsDiscarded.load(ordering: .relaxed))
    }
}
