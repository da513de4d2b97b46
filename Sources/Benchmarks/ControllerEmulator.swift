#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Shared
import Synchronization

/// A Bluetooth controller played by the benchmark, for the agent's live radio path: it
/// answers every HCI command with Command Complete and, once scanning is enabled, sends
/// advertising report events paced in real time (checked every millisecond, each event
/// written on its own as a controller sends them). Three links to the agent:
///
/// - `stream`: a unix stream socket (`h4:PATH`), as BlueZ's btvirt gives one;
/// - `seqpacket`: a unix `SOCK_SEQPACKET` socket (`h4:PATH`): one packet per read with a
///   kernel reception timestamp, what the raw HCI socket (`hci:`) delivers;
/// - `pty`: a pseudo-terminal (`h4:/dev/pts/N`), as a UART controller.
final class ControllerEmulator: @unchecked Sendable {
    enum Link: String, CaseIterable {
        case stream, seqpacket, pty
    }

    /// What the agent's `--source` should say.
    let source: String
    private let link: Link
    private let listenFD: Int32
    private let masterFD: Int32
    private let socketPath: String?
    private let events: [[UInt8]]
    private let rate: Double
    private let state = Mutex(State())

    struct State {
        var scanningSince: Double?
        var sent = 0
        var stopped = false
        var commands = 0
    }

    /// `events`: LE Meta advertising report events (H4 event bytes after the indicator), sent
    /// in turn at `rate` a second with the RSSI (last byte) varying.
    init(link: Link, events: [[UInt8]], rate: Double) throws {
        self.link = link
        self.events = events
        self.rate = rate
        switch link {
        case .stream, .seqpacket:
            let path = NSTemporaryDirectory() + "roomcast-live-bench-\(getpid())-\(link.rawValue).sock"
            unlink(path)
            let type = link == .stream ? SOCK_STREAM : SOCK_SEQPACKET
            let fd = socket(AF_UNIX, Int32(type.rawValue), 0)
            guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { p in
                for (i, b) in path.utf8.enumerated() { p[i] = b }
            }
            let r = withUnsafePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard r == 0, listen(fd, 4) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            listenFD = fd
            masterFD = -1
            socketPath = path
            source = "h4:\(path)"
        case .pty:
            // posix_openpt/unlockpt/ptsname by hand (Glibc's module leaves them out): the
            // multiplexer, then TIOCSPTLCK (unlock) and TIOCGPTN (the slave's number).
            let m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
            var unlock: Int32 = 0
            var number: UInt32 = 0
            guard m >= 0, ioctl(m, 0x4004_5431, &unlock) == 0, ioctl(m, 0x8004_5430, &number) == 0 else {
                throw POSIXError(.init(rawValue: errno) ?? .EIO)
            }
            let name = "/dev/pts/\(number)"
            var tio = termios()
            if tcgetattr(m, &tio) == 0 {
                cfmakeraw(&tio)
                _ = tcsetattr(m, TCSANOW, &tio)
            }
            listenFD = -1
            masterFD = m
            socketPath = nil
            source = "h4:\(name)"
        }
        let thread = Thread { [self] in self.run() }
        thread.name = "controller-emulator"
        thread.start()
    }

    /// When the agent enabled scanning (monotonic seconds), and reports sent since.
    var progress: (scanningSince: Double?, sent: Int) { state.withLock { ($0.scanningSince, $0.sent) } }

    func stop() {
        state.withLock { $0.stopped = true }
        if listenFD >= 0 { shutdown(listenFD, Int32(SHUT_RDWR)) }
    }

    deinit {
        if listenFD >= 0 { close(listenFD) }
        if masterFD >= 0 { close(masterFD) }
        if let socketPath { unlink(socketPath) }
    }

    private func run() {
        let fd: Int32
        if link == .pty {
            fd = masterFD
        } else {
            var a: Int32
            repeat { a = accept(listenFD, nil, nil) } while a < 0 && errno == EINTR
            guard a >= 0 else { return }
            fd = a
        }
        defer { if link != .pty { close(fd) } }
        var pending = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        var next = 0
        while !state.withLock({ $0.stopped }) {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 1)
            if p.revents & Int16(POLLIN) != 0 {
                let n = read(fd, &chunk, chunk.count)
                if n <= 0 {
                    if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
                    return  // the agent closed its end
                }
                pending += chunk[0..<n]
                while let command = Self.takeCommand(&pending) {
                    answer(command, fd: fd)
                }
            } else if p.revents & Int16(POLLHUP) != 0 && link != .pty {
                return
            }
            guard let since = state.withLock({ $0.scanningSince }) else { continue }
            let due = Int((Syscall.monotonicSeconds() - since) * rate)
            var sent = state.withLock { $0.sent }
            while sent < due {
                var e = events[next % events.count]
                e[e.count - 1] = UInt8(bitPattern: Int8(-50 - (next * 7) % 30))
                next += 1
                if !write(fd, [0x04] + e) { return }
                sent += 1
            }
            state.withLock { $0.sent = sent }
        }
    }

    /// One H4 command packet (indicator 0x01, opcode, length, parameters) off the front of `buffer`.
    private static func takeCommand(_ buffer: inout [UInt8]) -> (opcode: UInt16, parameters: [UInt8])? {
        guard buffer.count >= 4, buffer[0] == 0x01 else {
            if !buffer.isEmpty && buffer[0] != 0x01 { buffer.removeAll() }
            return nil
        }
        let length = Int(buffer[3])
        guard buffer.count >= 4 + length else { return nil }
        let command = (UInt16(buffer[1]) | UInt16(buffer[2]) << 8, Array(buffer[4..<4 + length]))
        buffer.removeFirst(4 + length)
        return command
    }

    private func answer(_ command: (opcode: UInt16, parameters: [UInt8]), fd: Int32) {
        var returned: [UInt8] = [0]
        switch command.opcode {
        case 0x1001: returned += [0x0D, 0x00, 0x00, 0x0D, 0xF1, 0x05, 0x00, 0x00]  // version 5.4, company 0x05F1
        case 0x1009: returned += [0x66, 0x55, 0x44, 0x33, 0x22, 0x11]  // 11:22:33:44:55:66
        case 0x2003: returned += [0, 0, 0, 0, 0, 0, 0, 0]  // LE features: legacy advertising only
        default: break
        }
        state.withLock { s in
            s.commands += 1
            if command.opcode == 0x200C {  // LE Set Scan Enable
                s.scanningSince = command.parameters.first == 1 ? (s.scanningSince ?? Syscall.monotonicSeconds()) : nil
            }
        }
        _ = write(fd, [0x04, 0x0E, UInt8(3 + returned.count), 0x01, UInt8(command.opcode & 0xFF), UInt8(command.opcode >> 8)] + returned)
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { p in
                link == .pty ? Glibc.write(fd, p.baseAddress!, p.count) : send(fd, p.baseAddress!, p.count, Int32(MSG_NOSIGNAL))
            }
            if n < 0 && (errno == EINTR || errno == EAGAIN) {
                if errno == EAGAIN { usleep(100) }
                continue
            }
            if n <= 0 { return false }
            done += n
        }
        return true
    }
}
