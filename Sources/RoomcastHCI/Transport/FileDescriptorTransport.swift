#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import Shared
import Synchronization

/// An HCI transport over a file descriptor that carries H4 framing: a UART,
/// a unix socket (btvirt), or a raw HCI socket (one packet per datagram, same
/// layout). Reads block on a dedicated thread, never the cooperative pool.
///
/// The thread reads in bursts: when the descriptor becomes readable it reads
/// until a read would block and hands every frame of the burst over in one
/// step, then rests `burstWindow` seconds before it looks again (a command
/// sent meanwhile ends the rest at once, so its answer is not held back).
/// Waking the consumer costs more than the frames it brings; at 2,000
/// advertisements a second this turns 2,000 hand-overs into about 20. A byte
/// stream is read 64 KB at a time and cut into packets; a socket that keeps
/// packet boundaries (the raw HCI socket, `SOCK_SEQPACKET`) is read with
/// `recvmmsg`, up to 64 packets per system call. Where the kernel stamps
/// packets on reception (the raw HCI socket's `HCI_TIME_STAMP`,
/// `SO_TIMESTAMPNS` on a datagram socket) frames keep that time; elsewhere
/// (a UART, a stream socket) they get the time of the read, at most one
/// window late.
public final class FileDescriptorTransport: HCITransport {
    /// Where a frame's reception time comes from.
    public enum ReceptionTimestamps: Sendable, Hashable {
        /// The time of the read (the transport's clock).
        case readTime
        /// `SO_TIMESTAMPNS` control messages (a datagram unix socket), when the clock is the system clock.
        case socket
        /// `HCI_CMSG_TSTAMP` control messages (a raw HCI socket with `HCI_TIME_STAMP` on).
        case hci
    }

    /// The rest after a burst where none is configured. It bounds how late a report reaches its
    /// reader, and, where reports get the time of the read, how far off that time is: there it
    /// stays under a fast beacon's 100 ms interval (50 ms), so two advertisements of one beacon are
    /// not stamped alike. Where the kernel stamps reception only the delay is left, which readers
    /// publishing about once a second do not feel (100 ms).
    public static func defaultBurstWindow(for timestamps: ReceptionTimestamps) -> Double {
        timestamps == .readTime ? 0.05 : 0.1
    }

    /// Frames handed over in one step at most; bounds what one element of the stream holds.
    static let maxBurst = 128

    public let name: String
    public let frames: BoundedStream<HCIFrame>

    private let fd: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let producer: BoundedStream<HCIFrame>.Producer
    private let recorder: BTSnoopWriter?
    private let clock: any TimeSource
    /// Guards the descriptors: sends, the wake-up and the final close never
    /// race, so a closed descriptor number (maybe reused) is never written.
    private let io = Mutex(IOState())
    private let closed = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)
    private let termination = Mutex<RadioError?>(nil)
    private let reportRoute = Mutex<ReportRoute?>(nil)
    private let mapWriteError: @Sendable (SystemCallError) -> RadioError
    private let timestamps: ReceptionTimestamps
    /// Seconds the reader rests after each burst.
    public let burstWindow: Double
    /// A socket that keeps packet boundaries (the raw HCI socket, `SOCK_SEQPACKET`): read a
    /// burst with `recvmmsg`, many packets and their timestamps per system call.
    private let isDatagram: Bool

    /// Takes ownership of `fd` and starts the reader thread.
    /// - Parameters:
    ///   - recorder: every frame received and sent is also written there.
    ///   - capacity: frames buffered before the oldest are dropped (in bursts of up to `maxBurst`).
    ///   - timestamps: where reception times come from; kernel timestamps are used only with
    ///     the system clock (a test's manual clock keeps the read time).
    ///   - burstWindow: seconds to rest after each burst; 0 reads every packet as it comes; nil,
    ///     as long as how the reports are stamped allows (`defaultBurstWindow(for:)`).
    ///   - mapWriteError: turns a failed write into the error the caller sees
    ///     (the raw HCI socket maps EPERM to the missing-capability message).
    public init(fd: Int32, name: String, recorder: BTSnoopWriter? = nil, clock: any TimeSource = SystemTimeSource(),
                capacity: Int = 4096, timestamps: ReceptionTimestamps = .readTime, burstWindow: Double? = 0,
                mapWriteError: @escaping @Sendable (SystemCallError) -> RadioError = { .system("write", $0) }) throws(RadioError) {
        let pipeFds: (Int32, Int32)
        do {
            pipeFds = try Syscall.pipe()
        } catch {
            close(fd)
            throw .system("pipe", error)
        }
        self.fd = fd
        self.name = name
        self.recorder = recorder
        self.clock = clock
        self.wakeRead = pipeFds.0
        self.wakeWrite = pipeFds.1
        self.mapWriteError = mapWriteError
        self.timestamps = clock is SystemTimeSource ? timestamps : .readTime
        self.burstWindow = max(0, burstWindow ?? Self.defaultBurstWindow(for: self.timestamps))
        var st = stat()
        let isSocket = fstat(fd, &st) == 0 && st.st_mode & S_IFMT == S_IFSOCK
        var type: Int32 = 0
        var typeSize = socklen_t(MemoryLayout<Int32>.size)
        isDatagram = isSocket && getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &typeSize) == 0
            && (type == Int32(SOCK_SEQPACKET.rawValue) || type == Int32(SOCK_RAW.rawValue) || type == Int32(SOCK_DGRAM.rawValue))
        // Non-blocking, so a burst reads until the kernel has nothing more (EAGAIN).
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
        // The stream holds bursts: bound the bursts so the frames held stay within `capacity`.
        (frames, producer) = BoundedStream<HCIFrame>.make(capacity: max(4, capacity / Self.maxBurst), mode: .dropOldest)
        let thread = Thread { [self] in self.readLoop() }
        thread.name = "hci-read \(name)"
        thread.start()
    }

    private struct IOState {
        var shutdownRequested = false
        var threadExited = false
    }

    deinit { shutdown() }

    public var terminationError: RadioError? { termination.withLock { $0 } }

    public func send(_ command: HCICommand) throws(RadioError) {
        try sendRaw(type: .command, bytes: command.encoded)
    }

    /// Sends any packet given as the bytes after the H4 indicator.
    public func sendRaw(type: HCIPacketType, bytes: [UInt8]) throws(RadioError) {
        let packet = [type.rawValue] + bytes
        let fd = self.fd
        let result: SystemCallError?? = io.withLock { s in
            if s.shutdownRequested || s.threadExited { return .some(nil) }
            do throws(SystemCallError) { try Syscall.writeAll(fd, packet) } catch { return error }
            return nil
        }
        switch result {
        case .some(.some(let error)): throw mapWriteError(error)
        case .some(.none): throw .transportClosed("\(name) is closed")
        case .none: break
        }
        try? recorder?.write(type: type, bytes: bytes, timestamp: clock.now(), direction: .hostToController)
        // The controller answers a command at once: end the reader's rest so the answer is not held back.
        io.withLock { s in
            guard !s.shutdownRequested, !s.threadExited else { return }
            var kick: UInt8 = 2
            _ = write(wakeWrite, &kick, 1)
        }
    }

    /// From the next burst on, advertising report events are decoded on the reader thread and
    /// handed to `route`, not passed on as frames.
    func route(reports route: ReportRoute) {
        reportRoute.withLock { $0 = route }
    }

    /// Wakes the reader thread, waits for it to close the descriptor, ends `frames` (idempotent).
    public func shutdown() {
        let running = io.withLock { s -> Bool in
            if s.shutdownRequested { return false }
            s.shutdownRequested = true
            closed.store(true, ordering: .releasing)
            guard !s.threadExited else { return false }
            var one: UInt8 = 1
            _ = write(wakeWrite, &one, 1)
            return true
        }
        // The reader thread closes the descriptors once it has left poll().
        if running { _ = exited.wait(timeout: .now() + .seconds(2)) }
        producer.finish()
    }

    /// Waits until `fd` is readable (or only for the wake pipe when `fd` is -1, for at most
    /// `timeoutMs`); false when shutdown was asked for. A kick (a command sent) ends the wait.
    private func waitReadable(timeoutMs: Int32) throws(SystemCallError) -> Bool {
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        if timeoutMs >= 0 { fds[0].fd = -1 }  // resting: only the wake pipe
        try Syscall.call("poll") { poll(&fds, 2, timeoutMs) }
        if fds[1].revents != 0 {
            var drain = [UInt8](repeating: 0, count: 64)
            _ = read(wakeRead, &drain, drain.count)
        }
        return !closed.load(ordering: .acquiring)
    }

    /// One read of a byte stream (a UART, a stream socket); nil when nothing is waiting (EAGAIN).
    private func readStream(into buffer: inout [UInt8]) throws(SystemCallError) -> Int? {
        do { return try Syscall.read(fd, into: &buffer) } catch {
            if error.errno == EAGAIN || error.errno == EWOULDBLOCK { return nil }
            throw error
        }
    }

    /// Where kernel reception times are in a packet's control data: level, type and the
    /// fraction's unit (`HCI_CMSG_TSTAMP` is a timeval, `SCM_TIMESTAMPNS` a timespec).
    private var timestampControl: (level: Int32, type: Int32, fractionsPerSecond: Double)? {
        switch timestamps {
        case .readTime: nil
        case .hci: (0 /* SOL_HCI */, 2 /* HCI_CMSG_TSTAMP */, 1e6)
        case .socket: (Int32(SOL_SOCKET), 35 /* SCM_TIMESTAMPNS */, 1e9)
        }
    }

    /// What one burst collects: frames for the controller and, with a route, reports for the agent.
    private struct Burst {
        var frames: [HCIFrame] = []
        var reports: [AdvertisingReport] = []
        var route: ReportRoute?
    }

    /// One read into `burst`: a batch of datagrams (each with its reception time where the
    /// kernel stamps them) or a piece of a byte stream; the packets it completed, nil when
    /// nothing was waiting. Throws what ends the transport (the peer closed, the adapter went,
    /// a stream that cannot be framed).
    private func readOnce(framer: inout H4Framer, buffer: inout [UInt8], datagrams: DatagramBatchReceiver?,
                          limit: Int, burst: inout Burst) throws(RadioError) -> Int? {
        if let datagrams {
            let n: Int
            do { n = try datagrams.receive(fd: fd, limit: limit) } catch { throw readFailure(error) }
            guard n > 0 else { return nil }
            let readTime = clock.now()
            let stamps = timestampControl
            var packets = 0
            for i in 0..<n {
                let packet = datagrams.packet(i)
                guard packet.bytes.count > 0 else { throw .transportClosed("\(name) closed by the other end") }
                // Longer than any event (the raw socket passes events only): dropped whole, so the
                // framer stays on packet boundaries.
                guard !packet.truncated else { continue }
                framer.append(packet.bytes)
                let time = stamps.flatMap {
                    datagrams.receptionTime(i, level: $0.level, type: $0.type, fractionsPerSecond: $0.fractionsPerSecond)
                }
                packets += try takePackets(from: &framer, at: time ?? readTime, into: &burst)
                // One datagram, one packet: what it left incomplete ends with it.
                framer.discardPending()
            }
            return packets
        }
        let count: Int?
        do { count = try readStream(into: &buffer) } catch { throw readFailure(error) }
        guard let count else { return nil }
        guard count > 0 else { throw .transportClosed("\(name) closed by the other end") }
        framer.append(buffer[0..<count])
        return try takePackets(from: &framer, at: clock.now(), into: &burst)
    }

    /// ENODEV: the adapter was removed; ENETDOWN: it went down; anything else as it is.
    private func readFailure(_ error: SystemCallError) -> RadioError {
        error.errno == ENODEV || error.errno == ENETDOWN ? .transportClosed("\(name): \(error)") : .system("read \(name)", error)
    }

    /// Moves the framer's complete packets, stamped `time`, into `burst`: advertising report
    /// events to the route's reports (decoded in place), everything else as frames. Returns how many.
    private func takePackets(from framer: inout H4Framer, at time: Double, into burst: inout Burst) throws(RadioError) -> Int {
        var count = 0
        while true {
            let packet: (type: HCIPacketType, reader: ByteReader)?
            do { packet = try framer.nextInPlace() } catch { throw .protocolError(error) }
            guard let (type, reader) = packet else { return count }
            count += 1
            if let recorder {
                try? recorder.write(type: type, bytes: Array(reader.bytes[reader.offset ..< reader.offset + reader.remaining]),
                                    timestamp: time, direction: .controllerToHost)
            }
            if type == .event, let route = burst.route, route.collect(event: reader, timestamp: time, into: &burst.reports) {
                continue
            }
            let bytes = Array(reader.bytes[reader.offset ..< reader.offset + reader.remaining])
            burst.frames.append(HCIFrame(type: type, bytes: bytes, timestamp: time, direction: .controllerToHost))
        }
    }

    private func readLoop() {
        var framer = H4Framer()
        var buffer = [UInt8](repeating: 0, count: isDatagram ? 0 : 65_536)
        let datagrams = isDatagram ? DatagramBatchReceiver() : nil
        var burst = Burst()
        burst.frames.reserveCapacity(Self.maxBurst)
        burst.reports.reserveCapacity(HCIController.maxBatch)
        let restMs = Int32((burstWindow * 1000).rounded())
        var failure: RadioError?
        loop: while !closed.load(ordering: .acquiring) {
            do {
                guard try waitReadable(timeoutMs: -1) else { break }
            } catch {
                failure = .system("poll \(name)", error)
                break
            }
            // The burst: read until the kernel has nothing more, or until a burst is full.
            burst.route = reportRoute.withLock { $0 }
            var drained = false
            var readAny = false
            var packets = 0
            while packets < Self.maxBurst {
                do throws(RadioError) {
                    guard let n = try readOnce(framer: &framer, buffer: &buffer, datagrams: datagrams,
                                               limit: Self.maxBurst - packets, burst: &burst) else {
                        drained = true
                        break
                    }
                    packets += n
                    readAny = true
                } catch {
                    failure = error
                    break loop
                }
            }
            burst.route?.handOver(&burst.reports)
            if !burst.frames.isEmpty {
                let handed = burst.frames
                burst.frames.removeAll(keepingCapacity: true)
                if !producer.yield(contentsOf: handed) { break loop }
            }
            // Rest only after a burst that emptied the descriptor (a full one means more is
            // waiting), and not after a kick that found nothing to read.
            if drained && readAny && restMs > 0 {
                do {
                    guard try waitReadable(timeoutMs: restMs) else { break }
                } catch {
                    failure = .system("poll \(name)", error)
                    break
                }
            }
        }
        burst.route?.handOver(&burst.reports)
        if !burst.frames.isEmpty { producer.yield(contentsOf: burst.frames) }
        if !closed.load(ordering: .acquiring) { termination.withLock { $0 = failure } }
        io.withLock { s in
            s.threadExited = true
            close(fd)
            close(wakeRead)
            close(wakeWrite)
        }
        try? recorder?.flush()
        exited.signal()
        producer.finish()
    }
}
