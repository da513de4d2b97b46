#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A fake Bluetooth controller speaking H4 on a unix socket, for tests that
/// need what BlueZ's emulator cannot give: RSSI values of our choosing, a
/// controller that goes silent, refuses commands, or vanishes. It answers
/// every command with Command Complete (status 0 unless told otherwise),
/// reports LE features with or without LE Extended Advertising, and when
/// scanning is enabled sends the scripted reports in the format that matches
/// the enable command (legacy or extended). Independent of RoomcastHCI on purpose.
public final class ScriptedH4Controller: Sendable {
    /// One advertising report to send.
    public struct Report: Sendable, Hashable {
        /// Display order (most significant byte first).
        public var address: [UInt8]
        public var rssi: Int8
        public var data: [UInt8]

        public init(address: [UInt8], rssi: Int8, data: [UInt8]) {
            self.address = address
            self.rssi = rssi
            self.data = data
        }
    }

    /// A command the controller received: opcode and parameters.
    public struct Command: Sendable, Hashable {
        public var opcode: UInt16
        public var parameters: [UInt8]
    }

    public struct Configuration: Sendable {
        /// Sets LE feature bit 12 (LE Extended Advertising).
        public var extended: Bool
        /// Reports sent after each scan enable; each enable sends the next batch (cycling).
        public var scanBatches: [[Report]]
        /// Opcodes answered with this non-zero status.
        public var failingOpcodes: [UInt16: UInt8]
        /// Opcodes never answered (to test timeouts).
        public var silentOpcodes: Set<UInt16>
        /// Split extended reports' data into fragments of this size ("more to come").
        public var extendedFragmentSize: Int?

        public init(extended: Bool = false, scanBatches: [[Report]] = [], failingOpcodes: [UInt16: UInt8] = [:],
                    silentOpcodes: Set<UInt16> = [], extendedFragmentSize: Int? = nil) {
            self.extended = extended
            self.scanBatches = scanBatches
            self.failingOpcodes = failingOpcodes
            self.silentOpcodes = silentOpcodes
            self.extendedFragmentSize = extendedFragmentSize
        }
    }

    public let path: String
    private let listenFD: Int32
    private let state: Mutex<State>
    private let (commandStream, commandContinuation) = AsyncStream<Command>.makeStream()

    private struct State {
        var configuration: Configuration
        var client: Int32 = -1
        var commands: [Command] = []
        var batchIndex = 0
        var stopped = false
        var connections = 0
    }

    /// Listens on a fresh unix socket path in the temp directory.
    public init(configuration: Configuration = Configuration()) throws {
        let path = NSTemporaryDirectory() + "roomcast-h4-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        unlink(path)
        let listenFD = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard listenFD >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { p in
            for (i, b) in path.utf8.enumerated() { p[i] = b }
        }
        let r = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listenFD, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard r == 0, listen(listenFD, 4) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        self.path = path
        self.listenFD = listenFD
        state = Mutex(State(configuration: configuration))
        let thread = Thread { [self] in self.acceptLoop() }
        thread.name = "scripted-h4"
        thread.start()
    }

    deinit { stop() }

    /// Every command received so far, in order.
    public var commands: [Command] { state.withLock { $0.commands } }

    /// Commands as they arrive (for awaiting a particular one).
    public var commandUpdates: AsyncStream<Command> { commandStream }

    /// Clients that have connected so far.
    public var connections: Int { state.withLock { $0.connections } }

    /// Changes the behaviour from now on.
    public func configure(_ change: (inout Configuration) -> Void) {
        state.withLock { change(&$0.configuration) }
    }

    /// Sends reports now (legacy format) to the connected client.
    public func emit(_ reports: [Report], extended: Bool = false) {
        for packet in Self.reportPackets(reports, extended: extended, fragment: nil) { emitRaw(packet) }
    }

    /// Sends raw H4 bytes (e.g. a Hardware Error event) to the connected client. Under the lock
    /// the accept loop closes the client with, so the bytes never go to a number reused since.
    public func emitRaw(_ bytes: [UInt8]) {
        state.withLock { s in
            if s.client >= 0 { Self.writeAll(s.client, bytes) }
        }
    }

    /// Drops the client connection (the adapter "vanishes"); new connections are still accepted.
    public func disconnectClient() {
        // Under the lock, as in `stop()`: the accept loop closes the client's fd with it held.
        state.withLock { s in
            if s.client >= 0 { shutdown(s.client, Int32(SHUT_RDWR)) }
        }
    }

    /// Stops listening and closes everything.
    public func stop() {
        // Under the lock the accept loop closes the client with: a number already closed may be
        // another test's socket by now, and shutting that down breaks its connection.
        let already = state.withLock { s -> Bool in
            defer { s.stopped = true }
            if !s.stopped, s.client >= 0 { shutdown(s.client, Int32(SHUT_RDWR)) }
            return s.stopped
        }
        guard !already else { return }
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
        unlink(path)
        commandContinuation.finish()
    }

    private func acceptLoop() {
        while !state.withLock({ $0.stopped }) {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            state.withLock { $0.client = fd; $0.connections += 1 }
            serve(fd)
            state.withLock { s in
                s.client = -1
                close(fd)
            }
        }
    }

    private func serve(_ fd: Int32) {
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            buffer.append(contentsOf: chunk[0..<n])
            while buffer.count >= 4 {
                guard buffer[0] == 0x01 else { return }
                let length = Int(buffer[3])
                guard buffer.count >= 4 + length else { break }
                let command = Command(opcode: UInt16(buffer[1]) | UInt16(buffer[2]) << 8,
                                      parameters: Array(buffer[4..<4 + length]))
                buffer.removeFirst(4 + length)
                handle(command, fd: fd)
            }
        }
    }

    private func handle(_ command: Command, fd: Int32) {
        let (config, batch): (Configuration, [Report]?) = state.withLock { s in
            s.commands.append(command)
            var batch: [Report]?
            let enabling = (command.opcode == 0x200C || command.opcode == 0x2042) && command.parameters.first == 1
            if enabling && !s.configuration.scanBatches.isEmpty && s.configuration.failingOpcodes[command.opcode] == nil {
                batch = s.configuration.scanBatches[s.batchIndex % s.configuration.scanBatches.count]
                s.batchIndex += 1
            }
            return (s.configuration, batch)
        }
        commandContinuation.yield(command)
        if config.silentOpcodes.contains(command.opcode) { return }
        let status = config.failingOpcodes[command.opcode] ?? 0
        var returned: [UInt8] = [status]
        if status == 0 {
            switch command.opcode {
            case 0x1001: returned += [0x0D, 0x00, 0x00, 0x0D, 0xF1, 0x05, 0x00, 0x00]  // 5.4, company 0x05F1
            case 0x1009: returned += [0x66, 0x55, 0x44, 0x33, 0x22, 0x11]  // 11:22:33:44:55:66
            case 0x2003: returned += [config.extended ? 0x00 : 0x00, config.extended ? 0x10 : 0x00, 0, 0, 0, 0, 0, 0]
            default: break
            }
        }
        Self.writeAll(fd, [0x04, 0x0E, UInt8(3 + returned.count), 0x01,
                           UInt8(command.opcode & 0xFF), UInt8(command.opcode >> 8)] + returned)
        if let batch {
            let extended = command.opcode == 0x2042
            for packet in Self.reportPackets(batch, extended: extended, fragment: config.extendedFragmentSize) {
                Self.writeAll(fd, packet)
            }
        }
    }

    /// LE Meta events carrying `reports`: one legacy event with all of them, or
    /// one extended event per report (split into fragments when asked).
    static func reportPackets(_ reports: [Report], extended: Bool, fragment: Int?) -> [[UInt8]] {
        guard !reports.isEmpty else { return [] }
        if !extended {
            var p: [UInt8] = [0x02, UInt8(reports.count)]
            for r in reports {
                p += [0x03, 0x01] + r.address.reversed() + [UInt8(r.data.count)] + r.data + [UInt8(bitPattern: r.rssi)]
            }
            return [[0x04, 0x3E, UInt8(p.count)] + p]
        }
        var packets = [[UInt8]]()
        for r in reports {
            let size = max(1, fragment ?? max(1, r.data.count))
            var pieces = stride(from: 0, to: max(r.data.count, 1), by: size).map { Array(r.data[$0..<min($0 + size, r.data.count)]) }
            if r.data.isEmpty { pieces = [[]] }
            for (i, piece) in pieces.enumerated() {
                let more = i < pieces.count - 1
                let eventType: UInt16 = 0x0000 | (more ? 0x0020 : 0)  // non-connectable extended PDU
                var p: [UInt8] = [0x0D, 0x01, UInt8(eventType & 0xFF), UInt8(eventType >> 8), 0x01]
                p += r.address.reversed()
                p += [0x01, 0x02, 0x03, 0x7F, UInt8(bitPattern: r.rssi), 0x00, 0x00, 0x00]
                p += [0, 0, 0, 0, 0, 0]
                p += [UInt8(piece.count)] + piece
                packets.append([0x04, 0x3E, UInt8(p.count)] + p)
            }
        }
        return packets
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        var done = 0
        while done < bytes.count {
            let n = bytes[done...].withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            done += n
        }
    }
}
