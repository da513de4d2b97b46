import Shared
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Writes HCI frames as a btsnoop capture (datalink 1002, H4) that `btmon -r`
/// and Wireshark read. Thread-safe; buffered, flushed every `flushEvery`
/// bytes and on `flush()` / `shutdown()`. After a failed write (a full disk, a
/// stick pulled out) nothing more is kept: every write throws that failure.
///
/// With a `fileLimit`, a capture left running for days keeps only its newest
/// part: once `path` has grown past the limit it is renamed `path.1` (replacing
/// the one before) and a new `path` begins, each a capture of its own. The disk
/// holds at most about twice the limit, as with `tcpdump -C … -W 2`.
public final class BTSnoopWriter: Sendable {
    private struct State {
        var fd: Int32
        var pending: [UInt8] = []
        var written: UInt64 = 0
        /// Bytes in the file at `path` now (its header included).
        var fileBytes: UInt64 = 0
        var rotations = 0
        var closed = false
        var failure: SystemCallError?
    }

    public let path: String
    /// Past this many bytes `path` becomes `path.1` and a new file begins; nil: one file without end.
    public let fileLimit: UInt64?
    /// The permissions a file is created with.
    public let mode: mode_t
    private let state: Mutex<State>
    private let flushEvery: Int

    /// Where the older part of a rotated capture is kept.
    public var previousPath: String { path + ".1" }

    /// Readable by its owner only: a capture of a live radio says which devices were near the
    /// node, and when (`--record`). A simulated one holds nobody's and is 0644.
    public static let privateMode: mode_t = 0o600

    /// Creates (truncates) `path` and writes the file header.
    public init(path: String, flushEvery: Int = 64 * 1024, fileLimit: UInt64? = nil, mode: mode_t = 0o644) throws(BTSnoopError) {
        self.path = path
        self.flushEvery = flushEvery
        self.fileLimit = fileLimit
        self.mode = mode
        let fd: Int32
        do { fd = try Self.create(path, mode: mode) } catch { throw .io(path: path, error) }
        state = Mutex(State(fd: fd, pending: Self.header))
    }

    private static var header: [UInt8] {
        var header = BTSnoopFormat.magic
        header.appendBE(UInt32(1))
        header.appendBE(BTSnoopFormat.Datalink.h4.rawValue)
        return header
    }

    private static func create(_ path: String, mode: mode_t) throws(SystemCallError) -> Int32 {
        try Syscall.call("open") { open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode) }
    }

    deinit { shutdown() }

    /// Frames written so far.
    public var recordCount: UInt64 { state.withLock { $0.written } }

    /// Bytes held for the next write to the file.
    public var bufferedByteCount: Int { state.withLock { $0.pending.count } }

    /// How many times the capture began a new file.
    public var rotationCount: Int { state.withLock { $0.rotations } }

    /// The write that failed, after which the capture stopped.
    public var failure: BTSnoopError? { state.withLock { s in s.failure.map { .io(path: path, $0) } } }

    /// Appends one frame (its timestamp is the record's time).
    public func write(_ frame: HCIFrame) throws(BTSnoopError) {
        try write(type: frame.type, bytes: frame.bytes, timestamp: frame.timestamp, direction: frame.direction)
    }

    /// Appends one packet given as the bytes after the H4 indicator.
    public func write(type: HCIPacketType, bytes: [UInt8], timestamp: Double,
                      direction: HCIFrame.Direction) throws(BTSnoopError) {
        let length = UInt32(bytes.count + 1)
        var flags: UInt32 = direction == .controllerToHost ? 1 : 0
        if type == .command || type == .event { flags |= 2 }
        guard let ts = BTSnoopFormat.timestamp(unix: timestamp) else { throw .unwritableTime(timestamp) }
        let result: SystemCallError? = state.withLock { s in
            guard !s.closed, s.failure == nil else { return s.failure }
            s.pending.appendBE(length)
            s.pending.appendBE(length)
            s.pending.appendBE(flags)
            s.pending.appendBE(UInt32(0))
            s.pending.appendBE(UInt32(ts >> 32))
            s.pending.appendBE(UInt32(ts & 0xFFFF_FFFF))
            s.pending.append(type.rawValue)
            s.pending.append(contentsOf: bytes)
            s.written += 1
            if s.pending.count >= flushEvery { drain(&s) }
            return s.failure
        }
        if let result { throw .io(path: path, result) }
    }

    /// Writes buffered records to the file.
    public func flush() throws(BTSnoopError) {
        let failure = state.withLock { s in
            drain(&s)
            return s.failure
        }
        if let failure { throw .io(path: path, failure) }
    }

    /// Flushes and closes (idempotent).
    public func shutdown() {
        state.withLock { s in
            guard !s.closed else { return }
            drain(&s)
            if s.fd >= 0 { close(s.fd) }
            s.closed = true
        }
    }

    private func drain(_ s: inout State) {
        guard !s.pending.isEmpty, s.failure == nil else { return }
        do throws(SystemCallError) {
            try Syscall.writeAll(s.fd, s.pending)
            s.fileBytes += UInt64(s.pending.count)
            s.pending.removeAll(keepingCapacity: true)
            if let fileLimit, s.fileBytes >= fileLimit { try rotate(&s) }
        } catch {
            s.failure = error
            s.pending = []
        }
    }

    /// `path` becomes `path.1`; a new `path` begins with its own header, written at once, so the
    /// file is a capture (one without records) should the writer stop or the agent die now.
    private func rotate(_ s: inout State) throws(SystemCallError) {
        close(s.fd)
        s.fd = -1
        try Syscall.call("rename") { rename(path, previousPath) }
        s.fd = try Self.create(path, mode: mode)
        let header = Self.header
        try Syscall.writeAll(s.fd, header)
        s.fileBytes = UInt64(header.count)
        s.rotations += 1
    }
}

extension [UInt8] {
    @inline(__always)
    mutating func appendBE(_ v: UInt32) {
        append(UInt8(v >> 24)); append(UInt8(v >> 16 & 0xFF)); append(UInt8(v >> 8 & 0xFF)); append(UInt8(v & 0xFF))
    }
}
