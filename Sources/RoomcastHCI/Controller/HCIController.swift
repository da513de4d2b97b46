import Shared
import Synchronization
import RoomcastLogging

/// Drives one controller over a transport: sends commands one at a time and
/// checks each Command Complete, runs the init sequence, starts and stops
/// scanning and advertising, and turns advertising report events into
/// `AdvertisingReport`s on a bounded stream.
public actor HCIController {
    /// The transport the controller is driven over.
    public nonisolated let transport: any HCITransport
    /// Reports, drops, HCI errors and resets, shared with the owning source.
    public nonisolated let counters: RadioCounters
    /// What the last `initialize()` learned; nil before.
    public private(set) var info: ControllerInfo?
    /// The scan command set in use, once scanning.
    public private(set) var scanMode: ScanSettings.Mode?
    /// Whether `startAdvertising` succeeded and `stopAdvertising` has not been called since.
    public private(set) var isAdvertising = false

    private let reportSink: BoundedStream<AdvertisingReport>.Producer
    private let logger: Logger
    private let commandTimeout: Double
    private struct Pending {
        let opcode: HCIOpcode
        let token: Int
        let continuation: CheckedContinuation<Result<[UInt8], RadioError>, Never>
        let timer: Task<Void, Never>
    }

    private var pending: Pending?
    private var commandBusy = false
    private var commandWaiters: [CheckedContinuation<Void, Never>] = []
    private var nextToken = 0
    private var readerTask: Task<Void, Never>?
    private nonisolated let activity = ActivityBox()

    struct Activity {
        var lastReportAt: Double?
        var hardwareErrors = 0
        var ended = false
        /// Scan commands completed that this controller did not send (`isScanCommand`).
        var foreignScanChanges = 0
    }

    /// The scan commands, legacy and extended: parameters and enable. On a BlueZ adapter the
    /// kernel sees ours as its own scan state, and its next passive-scan update (a connection,
    /// `bluetoothctl scan`, a paired device added) may disable ours or set its own filter.
    static func isScanCommand(_ opcode: HCIOpcode) -> Bool {
        [0x200B, 0x200C, 0x2041, 0x2042].contains(opcode.rawValue)
    }

    final class ActivityBox: Sendable {
        private let state = Mutex(Activity())
        func withLock<T: Sendable>(_ body: (inout Activity) -> T) -> T { state.withLock { body(&$0) } }
    }

    /// A controller whose reports go to `reports`. Call `start()` before any command.
    public init(transport: any HCITransport, reports: BoundedStream<AdvertisingReport>.Producer,
                counters: RadioCounters = RadioCounters(), logger: Logger = .silent, commandTimeout: Double = 2) {
        self.transport = transport
        self.reportSink = reports
        self.counters = counters
        self.logger = logger
        self.commandTimeout = commandTimeout
    }

    /// Reports handed to the report stream in one step at most.
    public static let maxBatch = 128

    /// Starts consuming the transport's packets.
    public func start() {
        guard readerTask == nil else { return }
        let transport = self.transport, sink = reportSink, counters = self.counters, activity = self.activity
        let logger = self.logger
        // The route holds the frame stream, not the transport: the transport holds the route,
        // and a route holding the transport would keep both alive after shutdown (one of each
        // per radio recovery in a long-running agent).
        let frames = transport.frames
        let route = ReportRoute(sink: sink, counters: counters, activity: activity, framesDropped: { frames.dropped })
        // A descriptor's reader thread decodes report events itself and hands them straight over;
        // what reaches the task below is then the other events (commands' answers, errors).
        (transport as? FileDescriptorTransport)?.route(reports: route)
        readerTask = Task.detached { [weak self] in
            // An undervolted Pi or a flaky dongle reports a hardware error at every check: said
            // ever further apart, each counted (`hciErrors`).
            let hardwareErrorLog = RateLimitedLog(interval: 60)
            let started = ContinuousClock.now
            var frames = transport.frames.makeAsyncIterator()
            var complete = [AdvertisingReport]()
            while let burst = await frames.nextBatch() {
                for frame in burst {
                    guard frame.type == .event else { continue }
                    let event: HCIEvent
                    do { event = try frame.decode().eventValue } catch {
                        // Counted for telemetry; logged at debug only, a noisy radio must not flood the journal.
                        counters.hciErrors.add(1, ordering: .relaxed)
                        logger.debug("undecodable HCI event", metadata: ["hci.device": transport.name, "error": "\(error)"])
                        continue
                    }
                    switch event {
                    case let .leMeta(.advertisingReports(reports)), let .leMeta(.extendedAdvertisingReports(reports)):
                        route.collect(reports, into: &complete)
                    case let .commandComplete(cc):
                        let another = await self?.complete(opcode: cc.opcode, status: cc.status ?? 0, returned: Array(cc.returnParameters.dropFirst()))
                        if another == true, Self.isScanCommand(cc.opcode) { activity.withLock { $0.foreignScanChanges += 1 } }
                    case let .commandStatus(cs):
                        if cs.status != 0 { await self?.complete(opcode: cs.opcode, status: cs.status, returned: []) }
                    case let .hardwareError(code):
                        counters.hciErrors.add(1, ordering: .relaxed)
                        let (admit, suppressed) = hardwareErrorLog.admit("\(code)", now: (ContinuousClock.now - started) / .seconds(1))
                        if admit {
                            logger.warning("controller hardware error", metadata: [
                                "hci.device": transport.name, "hci.code": "\(code)", "suppressed": "\(suppressed)"])
                        }
                        activity.withLock { $0.hardwareErrors += 1 }
                        await self?.failPending(.hardwareError(code: code))
                    default:
                        break
                    }
                }
                route.handOver(&complete)
            }
            activity.withLock { $0.ended = true }
            await self?.failPending(transport.terminationError ?? .transportClosed(transport.name))
        }
    }

    /// Stops the reader and shuts the transport down.
    public func shutdown() {
        transport.shutdown()
        readerTask?.cancel()
        failPending(.transportClosed("\(transport.name) shut down"))
    }

    /// Time of the newest report (source clock), hardware errors seen, whether the transport
    /// has ended, and scan commands another program completed — what the supervisor polls.
    public nonisolated var health: (lastReportAt: Double?, hardwareErrors: Int, transportEnded: Bool, foreignScanChanges: Int) {
        activity.withLock { ($0.lastReportAt, $0.hardwareErrors, $0.ended, $0.foreignScanChanges) }
    }

    /// Sends `command` and waits for its Command Complete; returns the return
    /// parameters after the status byte. A non-zero status throws. Commands
    /// go one at a time, in call order (controllers typically accept one).
    @discardableResult
    public func send(_ command: HCICommand) async throws(RadioError) -> [UInt8] {
        await acquireCommandSlot()
        defer { releaseCommandSlot() }
        if health.transportEnded { throw transport.terminationError ?? .transportClosed(transport.name) }
        nextToken += 1
        let token = nextToken, opcode = command.opcode, timeout = commandTimeout
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<[UInt8], RadioError>, Never>) in
            let timer = Task { [weak self] in
                try? await Task.sleep(for: .seconds(timeout))
                await self?.timeOut(token: token)
            }
            pending = Pending(opcode: opcode, token: token, continuation: c, timer: timer)
            do throws(RadioError) { try transport.send(command) } catch { failPending(error) }
        }
        switch result {
        case let .success(bytes): return bytes
        case let .failure(error):
            counters.hciErrors.add(1, ordering: .relaxed)
            throw error
        }
    }

    private func acquireCommandSlot() async {
        guard commandBusy else {
            commandBusy = true
            return
        }
        await withCheckedContinuation { commandWaiters.append($0) }
    }

    private func releaseCommandSlot() {
        if commandWaiters.isEmpty { commandBusy = false } else { commandWaiters.removeFirst().resume() }
    }

    /// Hands a Command Complete to the command waiting for it; true when it is another
    /// program's (seen on an adapter the kernel shares): not ours, nor the late answer of one of
    /// ours that timed out.
    @discardableResult
    private func complete(opcode: HCIOpcode, status: UInt8, returned: [UInt8]) -> Bool {
        guard let p = pending, p.opcode == opcode else {
            guard let late = lateAnswers.firstIndex(of: opcode) else { return true }
            lateAnswers.remove(at: late)
            return false
        }
        pending = nil
        p.timer.cancel()
        p.continuation.resume(returning: status == 0 ? .success(returned) : .failure(.commandFailed(opcode: opcode, status: status)))
        return false
    }

    /// Opcodes of our commands that timed out, whose answers may still come (the latest 16).
    private var lateAnswers: [HCIOpcode] = []

    private func failPending(_ error: RadioError) {
        guard let p = pending else { return }
        pending = nil
        p.timer.cancel()
        p.continuation.resume(returning: .failure(error))
    }

    private func timeOut(token: Int) {
        guard let p = pending, p.token == token else { return }
        pending = nil
        lateAnswers.append(p.opcode)
        if lateAnswers.count > 16 { lateAnswers.removeFirst() }
        p.continuation.resume(returning: .failure(.commandTimeout(opcode: p.opcode)))
    }

    /// The init sequence: optional Reset, event masks, version, address and LE
    /// features, each checked. `reset` is for controllers the host owns (H4);
    /// on a BlueZ-managed adapter (`kernelManaged`) the kernel has already initialised it,
    /// event masks included: they enable advertising reports, and also the events BlueZ's own
    /// connections on that adapter wait for (LE Enhanced Connection Complete, Advertising Set
    /// Terminated, ...), which ours would switch off. Only after a reset are ours needed there.
    @discardableResult
    public func initialize(reset: Bool, kernelManaged: Bool = false) async throws(RadioError) -> ControllerInfo {
        isKernelManaged = kernelManaged
        if reset { try await send(.reset) }
        if reset || !kernelManaged {
            try await send(.setEventMask(HCICommand.defaultEventMask))
            try await send(.leSetEventMask(HCICommand.defaultLEEventMask))
        }
        let version = try await send(.readLocalVersionInformation)
        let address = try await send(.readBDAddr)
        let features = try await send(.leReadLocalSupportedFeatures)
        guard version.count >= 8, address.count >= 6, features.count >= 8 else {
            throw .protocolError(.invalid("short return parameters in the init sequence"))
        }
        var f: UInt64 = 0
        for i in 0..<8 { f |= UInt64(features[i]) << (8 * UInt64(i)) }
        let result = ControllerInfo(
            address: Array(address[0..<6].reversed()), hciVersion: version[0],
            hciRevision: UInt16(version[1]) | UInt16(version[2]) << 8, lmpVersion: version[3],
            manufacturer: UInt16(version[4]) | UInt16(version[5]) << 8, leFeatures: LEFeatures(rawValue: f))
        // The same controller initialised again (an adapter reset, every 4 minutes in a room that
        // hears nothing) is no news: "resetting the adapter" says so, paced.
        let level: Logger.Level = info == result ? .debug : .info
        info = result
        logger.log(level: level, "controller initialised", metadata: [
            "hci.device": transport.name, "hci.address": Hex.encode(result.address),
            "hci.version": "\(result.hciVersion)", "hci.extended": "\(result.leFeatures.extendedAdvertising)",
        ])
        return result
    }

    /// The scan command set `settings` leads to on this controller. Extended
    /// scanning is avoided while advertising with legacy commands, because a
    /// controller refuses legacy commands once extended ones were used
    /// (Core 5.4 Vol 4 Part E §3.1.1).
    public func resolvedMode(_ settings: ScanSettings) -> ScanSettings.Mode {
        switch settings.mode {
        case .legacy: .legacy
        case .extended: .extended
        case .auto: (info?.leFeatures.extendedAdvertising ?? false) && !isAdvertising ? .extended : .legacy
        }
    }

    /// (Re)starts scanning: disable (its failure ignored: not scanning), set parameters, enable.
    public func startScanning(_ settings: ScanSettings) async throws(RadioError) {
        let mode = resolvedMode(settings)
        if mode == .extended {
            _ = try? await send(.leSetExtendedScanEnable(enable: false, filterDuplicates: false, duration: 0, period: 0))
            try await send(.leSetExtendedScanParameters(settings.extendedParameters(coded: info?.leFeatures.codedPHY ?? false)))
            try await send(.leSetExtendedScanEnable(enable: true, filterDuplicates: settings.filterDuplicates, duration: 0, period: 0))
        } else {
            _ = try? await send(.leSetScanEnable(enable: false, filterDuplicates: false))
            try await send(.leSetScanParameters(settings.legacyParameters))
            try await send(.leSetScanEnable(enable: true, filterDuplicates: settings.filterDuplicates))
        }
        scanMode = mode
    }

    /// Stops scanning with the command set that started it.
    public func stopScanning() async throws(RadioError) {
        guard let mode = scanMode else { return }
        if mode == .extended {
            try await send(.leSetExtendedScanEnable(enable: false, filterDuplicates: false, duration: 0, period: 0))
        } else {
            try await send(.leSetScanEnable(enable: false, filterDuplicates: false))
        }
        scanMode = nil
    }

    /// Starts legacy advertising of `settings.data` (e.g. RoomcastAdvertising's `IBeaconAdvertisement.encode`),
    /// non-connectable by default; may run while scanning.
    public func startAdvertising(_ settings: AdvertisingSettings) async throws(RadioError) {
        if let problem = settings.validate().first { throw .invalidSettings(problem) }
        _ = try? await send(.leSetAdvertisingEnable(false))
        try await send(.leSetAdvertisingParameters(settings.parameters))
        try await send(.leSetAdvertisingData(settings.data))
        if let response = settings.scanResponse { try await send(.leSetScanResponseData(response)) }
        try await send(.leSetAdvertisingEnable(true))
        isAdvertising = true
    }

    /// Convenience: advertise the AD bytes `data` every `interval` seconds, non-connectable.
    public func startAdvertising(data: [UInt8], interval: Double = 0.1) async throws(RadioError) {
        try await startAdvertising(AdvertisingSettings(data: data, interval: interval))
    }

    /// Stops advertising.
    public func stopAdvertising() async throws(RadioError) {
        try await send(.leSetAdvertisingEnable(false))
        isAdvertising = false
    }

    /// Whether the kernel manages this adapter (BlueZ's `hci:`), as the last `initialize` said.
    private var isKernelManaged = false

    /// Resets the controller (HCI Reset) and runs the init sequence again; scanning
    /// and advertising must be restarted by the caller. An adapter the kernel manages is not
    /// reset: HCI Reset under BlueZ would wipe what the kernel set up (accept and resolving
    /// lists, its event masks, live connections, which vanish without a disconnection) and
    /// race the kernel's own reset after a hardware error; the init sequence runs again
    /// without it, and the caller's scan and advertising commands start afresh.
    public func resetAndInitialize() async throws(RadioError) {
        counters.resets.add(1, ordering: .relaxed)
        scanMode = nil
        isAdvertising = false
        try await initialize(reset: !isKernelManaged, kernelManaged: isKernelManaged)
    }
}

extension HCIPacket {
    /// The event, or `.unknown(0, [])` for other packet types.
    var eventValue: HCIEvent {
        if case let .event(e) = self { return e }
        return .unknown(code: 0, parameters: [])
    }
}
