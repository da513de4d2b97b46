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
/// a unix socket (btvirt), or a raw HCI socket (one packet per read, same
/// layout). Reads block on a dedicated thread, never the cooperative pool.
///
/// The thread reads in bursts: when the descriptor becomes readable it reads
/// until a read would block and hands every frame of the burst over in one
/// step, then rests `burstWindow` seconds before it looks again (a command
/// sent meanwhile ends the rest at once, so its answer is not held back).
/// Waking the consumer costs more than the frames it brings; at 2,000
/// advertisements a second this turns 2,000 hand-overs into about 20. Where
/// the kernel stamps packets on reception (the raw HCI socket's
/// `HCI_TIME_STAMP`, `SO_TIMESTAMPNS` on a datagram socket) frames keep that
/// time; elsewhere (a UART, a stream socket) they get the time of the read,
/// at most one window late.
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
    private let mapWriteError: @Sendable (SystemCallError) -> RadioError
    private let timestamps: ReceptionTimestamps
    private let burstWindow: Double
    private let isSocket: Bool

    /// Takes ownership of `fd` and starts the reader thread.
    /// - Parameters:
    ///   - recorder: every frame received and sent is also written there.
    ///   - capacity: frames buffered before the oldest are dropped (in bursts of up to `maxBurst`).
    ///   - timestamps: where reception times come from; kernel timestamps are used only with
    ///     the system clock (a test's manual clock keeps the read time).
    ///   - burstWindow: seconds to rest after each burst; 0 reads every packet as it comes.
    ///   - mapWriteError: turns a failed write into the error the caller sees
    ///     (the raw HCI socket maps EPERM to the missing-capability message).
    public init(fd: Int32, name: String, recorder: BTSnoopWriter? = nil, clock: any TimeSource = SystemTimeSource(),
                capacity: Int = 4096, timestamps: ReceptionTimestamps = .readTime, burstWindow: Double = 0,
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
        self.burstWindow = max(0, burstWindow)
        var st = stat()
        isSocket = fstat(fd, &st) == 0 && st.st_mode & S_IFMT == S_IFSOCK
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

    /// One read: the bytes and, where the kernel gives one, the packet's reception time.
    /// nil when nothing is waiting (EAGAIN).
    private func receive(into buffer: inout [UInt8], control: inout [UInt8]) throws(SystemCallError) -> (count: Int, time: Double?)? {
        guard isSocket, timestamps != .readTime else {
            do { return (try Syscall.read(fd, into: &buffer), nil) } catch {
                if error.errno == EAGAIN || error.errno == EWOULDBLOCK { return nil }
                throw error
            }
        }
        var err: Int32 = 0
        var time: Double?
        let n = buffer.withUnsafeMutableBytes { data -> Int in
            control.withUnsafeMutableBytes { ctl -> Int in
                var iov = iovec(iov_base: data.baseAddress, iov_len: data.count)
                return withUnsafeMutablePointer(to: &iov) { iovp -> Int in
                    var msg = msghdr()
                    msg.msg_iov = iovp
                    msg.msg_iovlen = 1
                    msg.msg_control = ctl.baseAddress
                    msg.msg_controllen = ctl.count
                    var r: Int
                    repeat { r = recvmsg(fd, &msg, 0) } while r < 0 && errno == EINTR
                    if r < 0 { err = errno; return -1 }
                    time = Self.receptionTime(&msg, kind: timestamps)
                    return r
                }
            }
        }
        if n < 0 {
            if err == EAGAIN || err == EWOULDBLOCK { return nil }
            throw SystemCallError(call: "recvmsg", errno: err)
        }
        return (n, time)
    }

    /// The reception time in a received message's control data: `SCM_TIMESTAMPNS` (a timespec)
    /// or `HCI_CMSG_TSTAMP` (a timeval of the platform's `long`s).
    private static func receptionTime(_ msg: inout msghdr, kind: ReceptionTimestamps) -> Double? {
        let (level, type): (Int32, Int32) = kind == .hci ? (0 /* SOL_HCI */, 2 /* HCI_CMSG_TSTAMP */)
            : (Int32(SOL_SOCKET), 35 /* SCM_TIMESTAMPNS */)
        let header = MemoryLayout<cmsghdr>.size
        guard let base = msg.msg_control, msg.msg_controllen >= header else { return nil }
        var offset = 0
        while offset + header <= Int(msg.msg_controllen) {
            let c = base.advanced(by: offset).loadUnaligned(as: cmsghdr.self)
            let length = Int(c.cmsg_len)
            guard length >= header, offset + length <= Int(msg.msg_controllen) else { return nil }
            let payload = base.advanced(by: offset + header)
            if c.cmsg_level == level && c.cmsg_type == type {
                let size = MemoryLayout<Int>.size
                guard length - header >= 2 * size else { return nil }
                let seconds = payload.loadUnaligned(as: Int.self)
                let fraction = payload.loadUnaligned(fromByteOffset: size, as: Int.self)
                return Double(seconds) + Double(fraction) / (kind == .hci ? 1e6 : 1e9)
            }
            offset += (length + cmsgAlignment - 1) & ~(cmsgAlignment - 1)
        }
        return nil
    }

    private static let cmsgAlignment = MemoryLayout<Int>.size

    private func readLoop() {
        var framer = H4Framer()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var control = [UInt8](repeating: 0, count: 128)
        var burst = [HCIFrame]()
        burst.reserveCapacity(Self.maxBurst)
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
            var drained = false
            var readAny = false
            while burst.count < Self.maxBurst {
                let got: (count: Int, time: Double?)?
                do {
                    got = try receive(into: &buffer, control: &control)
                } catch {
                    // ENODEV: the adapter was removed; ENETDOWN: it went down.
                    failure = error.errno == ENODEV || error.errno == ENETDOWN
                        ? .transportClosed("\(name): \(error)") : .system("read \(name)", error)
                    break loop
                }
                guard let got else { drained = true; break }
                readAny = true
                if got.count == 0 {
                    failure = .transportClosed("\(name) closed by the other end")
                    break loop
                }
                framer.append(buffer[0..<got.count])
                let now = got.time ?? clock.now()
                while true {
                    let packet: (type: HCIPacketType, bytes: [UInt8])?
                    do { packet = try framer.next() } catch {
                        failure = .protocolError(error)
                        break loop
                    }
                    guard let packet else { break }
                    let frame = HCIFrame(type: packet.type, bytes: packet.bytes, timestamp: now, direction: .controllerToHost)
                    try? recorder?.write(frame)
                    burst.append(frame)
                }
            }
            if !burst.isEmpty {
                let handed = burst
                burst.removeAll(keepingCapacity: true)
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
        if !burst.isEmpty { producer.yield(contentsOf: burst) }
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
