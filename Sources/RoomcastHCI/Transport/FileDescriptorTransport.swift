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
public final class FileDescriptorTransport: HCITransport {
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

    /// Takes ownership of `fd` and starts the reader thread.
    /// - Parameters:
    ///   - recorder: every frame received and sent is also written there.
    ///   - capacity: frames buffered before the oldest are dropped.
    ///   - mapWriteError: turns a failed write into the error the caller sees
    ///     (the raw HCI socket maps EPERM to the missing-capability message).
    public init(fd: Int32, name: String, recorder: BTSnoopWriter? = nil, clock: any TimeSource = SystemTimeSource(),
                capacity: Int = 4096,
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
        (frames, producer) = BoundedStream<HCIFrame>.make(capacity: capacity, mode: .dropOldest)
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

    private func readLoop() {
        var framer = H4Framer()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var failure: RadioError?
        loop: while !closed.load(ordering: .acquiring) {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            do {
                try Syscall.call("poll") { poll(&fds, 2, -1) }
            } catch {
                failure = .system("poll \(name)", error)
                break
            }
            if fds[1].revents != 0 { break }
            guard fds[0].revents != 0 else { continue }
            let got: Int
            do {
                got = try Syscall.read(fd, into: &buffer)
            } catch {
                if error.errno == EAGAIN { continue }
                // ENODEV: the adapter was removed; ENETDOWN: it went down.
                failure = error.errno == ENODEV || error.errno == ENETDOWN
                    ? .transportClosed("\(name): \(error)") : .system("read \(name)", error)
                break
            }
            if got == 0 {
                failure = .transportClosed("\(name) closed by the other end")
                break
            }
            framer.append(buffer[0..<got])
            let now = clock.now()
            while true {
                let packet: (type: HCIPacketType, bytes: [UInt8])?
                do { packet = try framer.next() } catch {
                    failure = .protocolError(error)
                    break loop
                }
                guard let packet else { break }
                let frame = HCIFrame(type: packet.type, bytes: packet.bytes, timestamp: now, direction: .controllerToHost)
                try? recorder?.write(frame)
                if !producer.yield(frame) { break loop }
            }
        }
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
