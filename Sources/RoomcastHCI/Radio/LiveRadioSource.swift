import Shared
import Synchronization
import RoomcastLogging

/// Advertising reports from a live controller (raw HCI socket or H4), with
/// recovery: a supervisor task feeds `RecoveryMachine` and performs what it
/// decides — restart a stalled scan, reset the adapter, reopen it with
/// backoff when it vanished — while `reports` keeps flowing across reopens.
public final class LiveRadioSource: RadioSource {
    public let spec: RadioSourceSpec
    public let reports: BoundedStream<AdvertisingReport>
    public let counters = RadioCounters()
    public let options: RadioOptions
    private let producer: BoundedStream<AdvertisingReport>.Producer
    private let logger: Logger
    /// Recoveries that can go on all day, each line by its kind: a node in a room that hears no
    /// BLE at all restarts its scan every `restart_after_s` and resets the adapter every few
    /// restarts; another program may keep taking the scan. Said once a minute at first, then
    /// ever further apart (the counters on /metrics count every one).
    private let recoveryLog = RateLimitedLog(interval: 60)
    private let clock: any TimeSource
    /// The supervisor's clock (`RecoveryMachine`): the stall watchdog and the reopen backoff
    /// measure waits, which a wall clock stepped back would stretch by the step.
    private let deadlines: any TimeSource
    private let recorder: Mutex<BTSnoopWriter?> = Mutex(nil)
    private let state = Mutex(State())

    private struct State {
        var controller: HCIController?
        var supervisor: Task<Void, Never>?
        var error: RadioError?
        var shutDown = false
    }

    /// The monotonic clock for the wall clock (tests drive both on one manual clock).
    static func deadlineClock(for clock: any TimeSource) -> any TimeSource {
        clock is SystemTimeSource ? MonotonicTimeSource() : clock
    }

    /// A source for an `hci` or `h4` spec; nothing is opened before `start()`.
    /// Call `shutdown()` when done: the supervisor keeps the source alive until then.
    public init(spec: RadioSourceSpec, options: RadioOptions = RadioOptions(), logger: Logger = .silent,
                clock: any TimeSource = SystemTimeSource()) {
        self.spec = spec
        self.options = options
        self.logger = logger
        self.clock = clock
        self.deadlines = Self.deadlineClock(for: clock)
        // Reports travel in bursts of up to `HCIController.maxBatch`: bound the bursts so the
        // reports held stay within `bufferCapacity`.
        (reports, producer) = BoundedStream<AdvertisingReport>.make(
            capacity: max(4, options.bufferCapacity / HCIController.maxBatch), mode: .dropOldest)
    }

    public var terminationError: RadioError? { state.withLock { $0.error } }

    /// An adapter is open and scanning (nil controller: waited for at boot, or being reopened).
    public var isListening: Bool { controller != nil }

    /// The controller in use now (nil while reopening), e.g. to start advertising later.
    public var controller: HCIController? { state.withLock { $0.controller } }

    public func start() async throws(RadioError) {
        if let problem = options.scan.validate().first ?? options.advertise?.validate().first {
            throw .invalidSettings(problem)
        }
        if let path = options.recordPath {
            do throws(BTSnoopError) {
                let writer = try BTSnoopWriter(path: path, fileLimit: options.recordFileLimit, mode: BTSnoopWriter.privateMode)
                recorder.withLock { $0 = writer }
            } catch {
                throw .capture(error)
            }
        }
        var opened = true
        do throws(RadioError) { try await open() } catch {
            // With waitForAdapter, an adapter that is absent or down at boot is
            // waited for like one that vanished later; other errors still throw.
            guard options.waitForAdapter, error.isTransient else { throw error }
            logger.warning("radio not available yet; retrying", metadata: ["hci.device": spec.description, "error": "\(error)"])
            // Said now: the first retry's failing alike is held back with the rest.
            _ = recoveryLog.admit("reopen/\(error)", now: deadlines.now())
            opened = false
        }
        let task = Task { [weak self, opened] in
            guard let self else { return }
            await self.supervise(opened: opened)
        }
        state.withLock { $0.supervisor = task }
    }

    public func shutdown() async {
        let (controller, task) = state.withLock { s -> (HCIController?, Task<Void, Never>?) in
            s.shutDown = true
            defer { s.controller = nil; s.supervisor = nil }
            return (s.controller, s.supervisor)
        }
        task?.cancel()
        if let controller {
            _ = try? await controller.stopScanning()
            if await controller.isAdvertising { _ = try? await controller.stopAdvertising() }
            await controller.shutdown()
        }
        recorder.withLock { $0?.shutdown() }
        producer.finish()
    }

    /// Opens the transport, initialises the controller, starts scanning (and advertising).
    private func open() async throws(RadioError) {
        let transport = try RadioSourceFactory.openTransport(spec, recorder: recorder.withLock { $0 }, clock: clock,
                                                      capacity: options.bufferCapacity, burstWindow: options.burstWindow)
        let controller = HCIController(transport: transport, reports: producer, counters: counters, logger: logger,
                                       commandTimeout: options.commandTimeout)
        await controller.start()
        do throws(RadioError) {
            try await controller.initialize(reset: options.resetOnOpen ?? !isKernelManaged, kernelManaged: isKernelManaged)
            try await startRadio(controller)
        } catch {
            await controller.shutdown()
            throw error
        }
        let stale = state.withLock { s -> Bool in
            if s.shutDown { return true }
            s.controller = controller
            return false
        }
        if stale { await controller.shutdown() }
        let mode = await controller.scanMode?.rawValue ?? "?"
        logger.info("radio scanning", metadata: ["hci.device": transport.name, "hci.scan": mode])
    }

    private var isKernelManaged: Bool {
        if case .hci = spec { return true }
        return false
    }

    private func startRadio(_ controller: HCIController) async throws(RadioError) {
        if let advertise = options.advertise {
            do throws(RadioError) {
                try await controller.startAdvertising(advertise)
            } catch .commandFailed(let opcode, let status) where !options.advertisingRequired {
                // A refusal is the controller's answer to these settings: retrying cannot help,
                // and the node's job is scanning, so it stays a scanner. Asked again at every
                // adapter reset (every 4 minutes in a room that hears nothing): said paced.
                let (said, held) = recoveryLog.admit("advertise/\(status)", now: deadlines.now())
                if said { logAdvertisingRefused(opcode: opcode, status: status, suppressed: held) }
            }
        }
        try await controller.startScanning(options.scan)
    }

    private func logAdvertisingRefused(opcode: HCIOpcode, status: UInt8, suppressed: Int) {
        if status == RadioError.commandDisallowed {
            // BlueZ drives an adapter that has extended advertising with the extended commands
            // from its start, and the controller then refuses the legacy ones (Core 5.4 Vol 4
            // Part E §3.1.1).
            logger.error("the adapter refused legacy advertising (Command Disallowed): BlueZ uses extended advertising on it; scanning without advertising. Advertise from another adapter, or an H4 controller the agent resets",
                         metadata: ["hci.device": "\(spec)", "hci.opcode": "\(opcode)", "suppressed": "\(suppressed)"])
        } else {
            // E.g. Invalid HCI Command Parameters (0x12) from a controller older than Bluetooth 5,
            // where a non-connectable advertisement needs 100 ms or more.
            logger.error("the adapter refused to advertise; scanning without advertising. Check advertise.interval_ms (controllers before Bluetooth 5 need at least 100 ms)",
                         metadata: ["hci.device": "\(spec)", "error": "\(RadioError.commandFailed(opcode: opcode, status: status))",
                                    "suppressed": "\(suppressed)"])
        }
    }

    /// Seconds between two restarts of the scan after another program changed it.
    static var scanReassertInterval: Double { 5 }

    private func supervise(opened: Bool) async {
        var machine = RecoveryMachine(policy: options.recovery)
        _ = machine.start(now: deadlines.now())
        var action = machine.handle(opened ? .opened : .openFailed(transient: true), now: deadlines.now())
        var lastReport: Double? = nil
        var hardwareErrors = 0
        var foreignScanChanges = 0
        var scanReassertedAt = -Double.infinity
        var scanReasserts = 0
        var tracked: ObjectIdentifier?
        var recordingFailed = false
        while !Task.isCancelled {
            if let a = action {
                action = await perform(a, machine: &machine)
                if a == .giveUp { return }
                continue
            }
            try? await Task.sleep(for: .seconds(options.checkInterval))
            if Task.isCancelled { return }
            let now = deadlines.now()
            if !recordingFailed, let failure = recorder.withLock({ $0?.failure }) {
                // The radio goes on; only the capture ends (`BTSnoopWriter` keeps nothing more).
                recordingFailed = true
                logger.error("recording stopped: the capture file could not be written; scanning goes on",
                             metadata: ["hci.device": spec.description, "error": "\(failure)"])
            }
            if let controller = state.withLock({ $0.controller }) {
                if tracked != ObjectIdentifier(controller) {
                    // A reopened adapter has its own, fresh health record.
                    tracked = ObjectIdentifier(controller)
                    lastReport = nil
                    hardwareErrors = 0
                    foreignScanChanges = 0
                }
                let health = controller.health
                if health.transportEnded {
                    logger.warning("radio transport lost", metadata: ["hci.device": spec.description])
                    action = machine.handle(.transportLost, now: now)
                    continue
                }
                if let t = health.lastReportAt, t != lastReport {
                    lastReport = t
                    _ = machine.handle(.reportReceived, now: now)
                }
                if health.hardwareErrors > hardwareErrors {
                    hardwareErrors = health.hardwareErrors
                    action = .resetAdapter
                    continue
                }
                // Another program (the kernel's passive scan, bluetoothd) disabled or set the
                // scan: ours would stay off, or see only its accept list, until a stall showed.
                // Started again at once, at most every `scanReassertInterval` seconds, so two
                // programs that each want the scan do not take turns at the supervisor's pace.
                if health.foreignScanChanges > foreignScanChanges, now - scanReassertedAt >= Self.scanReassertInterval {
                    foreignScanChanges = health.foreignScanChanges
                    scanReassertedAt = now
                    scanReasserts += 1
                    // Paced with the other recoveries: a program that keeps changing it (Home
                    // Assistant's bluetooth, a discovery another app runs) may do so all day; the
                    // count on each line says how often.
                    if recoveryLog.admit("foreign-scan", now: now).admit {
                        logger.notice("another program changed the scan (the kernel or bluetoothd); starting ours again",
                                      metadata: ["hci.device": spec.description, "times": "\(scanReasserts)"])
                    }
                    do throws(RadioError) { try await controller.startScanning(options.scan) } catch {
                        action = machine.handle(.scanRestartFailed, now: now)
                        continue
                    }
                }
            }
            action = machine.handle(.tick, now: now)
        }
    }

    private func perform(_ action: RecoveryMachine.Action, machine: inout RecoveryMachine) async -> RecoveryMachine.Action? {
        let controller = state.withLock { $0.controller }
        switch action {
        case .open:
            counters.reopens.add(1, ordering: .relaxed)
            do throws(RadioError) {
                try await open()
                logger.notice("radio reopened", metadata: ["hci.device": spec.description])
                return machine.handle(.opened, now: deadlines.now())
            } catch {
                // An adapter unplugged for good is retried every minute: said ever further apart.
                let (said, held) = recoveryLog.admit("reopen/\(error)", now: deadlines.now())
                if said {
                    logger.warning("radio reopen failed", metadata: ["hci.device": spec.description, "error": "\(error)", "suppressed": "\(held)"])
                }
                if !error.isTransient { state.withLock { $0.error = error } }
                return machine.handle(.openFailed(transient: error.isTransient), now: deadlines.now())
            }
        case .restartScan:
            counters.scanRestarts.add(1, ordering: .relaxed)
            let (said, held) = recoveryLog.admit("restart", now: deadlines.now())
            if said {
                logger.notice("no advertising report; restarting the scan",
                              metadata: ["hci.device": spec.description, "suppressed": "\(held)"])
            }
            guard let controller else { return machine.handle(.transportLost, now: deadlines.now()) }
            do throws(RadioError) { try await controller.startScanning(options.scan) } catch {
                return machine.handle(.scanRestartFailed, now: deadlines.now())
            }
            return nil
        case .resetAdapter:
            let (said, held) = recoveryLog.admit("reset", now: deadlines.now())
            if said { logger.warning("resetting the adapter", metadata: ["hci.device": spec.description, "suppressed": "\(held)"]) }
            guard let controller else { return machine.handle(.transportLost, now: deadlines.now()) }
            do throws(RadioError) {
                try await controller.resetAndInitialize()
                try await startRadio(controller)
                return machine.handle(.resetSucceeded, now: deadlines.now())
            } catch {
                return machine.handle(.resetFailed, now: deadlines.now())
            }
        case .close:
            state.withLock { $0.controller = nil }
            await controller?.shutdown()
            return nil
        case .giveUp:
            logger.error("radio stopped", metadata: ["hci.device": spec.description, "error": "\(terminationError.map { "\($0)" } ?? "?")"])
            await controller?.shutdown()
            producer.finish()
            return nil
        }
    }
}
