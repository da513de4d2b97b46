/// How a live radio source scans, advertises, records and recovers.
public struct RadioOptions: Sendable, Hashable {
    public var scan: ScanSettings
    /// Transmit this while scanning (e.g. an iBeacon), or nothing.
    public var advertise: AdvertisingSettings?
    /// A controller that refuses to advertise fails the start (`edge-agent advertise`, whose
    /// only job it is); otherwise the node goes on as a scanner and says why.
    public var advertisingRequired = false
    public var recovery: RecoveryPolicy
    /// Write everything received and sent to this btsnoop file (`btmon -r` reads it).
    public var recordPath: String?
    /// Past this many bytes the capture at `recordPath` becomes `recordPath.1` and a new one
    /// begins (`BTSnoopWriter.fileLimit`): a capture left running does not fill the card.
    public var recordFileLimit: UInt64?
    /// Send HCI Reset when opening; nil = only for H4 controllers (a BlueZ-managed
    /// adapter is already initialised by the kernel).
    public var resetOnOpen: Bool?
    /// Reports buffered before the oldest are dropped (and counted).
    public var bufferCapacity: Int
    /// Seconds to wait for each command's Command Complete.
    public var commandTimeout: Double
    /// How often the supervisor checks for a stalled scan, in seconds.
    public var checkInterval: Double
    /// When the adapter is absent or down at `start()`, keep retrying with backoff
    /// instead of throwing (permission and configuration errors still throw).
    public var waitForAdapter: Bool
    /// Seconds the reader rests after each burst of packets (0: hand every packet over as it
    /// comes); nil: as long as how the link stamps its reports allows
    /// (`FileDescriptorTransport.defaultBurstWindow(for:)`).
    public var burstWindow: Double?

    public init(scan: ScanSettings = ScanSettings(), advertise: AdvertisingSettings? = nil,
                recovery: RecoveryPolicy = RecoveryPolicy(), recordPath: String? = nil, recordFileLimit: UInt64? = nil, resetOnOpen: Bool? = nil,
                bufferCapacity: Int = 4096, commandTimeout: Double = 2, checkInterval: Double = 0.5,
                waitForAdapter: Bool = false, burstWindow: Double? = nil) {
        self.scan = scan
        self.advertise = advertise
        self.recovery = recovery
        self.recordPath = recordPath
        self.recordFileLimit = recordFileLimit
        self.resetOnOpen = resetOnOpen
        self.bufferCapacity = bufferCapacity
        self.commandTimeout = commandTimeout
        self.checkInterval = checkInterval
        self.waitForAdapter = waitForAdapter
        self.burstWindow = burstWindow
    }
}
