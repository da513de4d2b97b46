#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Shared

/// Reads a btsnoop capture record by record through a fixed-size buffer, so
/// memory stays flat whatever the file size. Not thread-safe: one reader per thread.
public final class BTSnoopReader {
    /// One HCI record, valid until the next call into the reader.
    public struct Record {
        public let type: HCIPacketType
        public let direction: HCIFrame.Direction
        /// Unix seconds (the capture's clock).
        public let timestamp: Double
        /// A reader over the packet bytes after the H4 indicator (no copy).
        public let reader: ByteReader

        /// A copy of the record as a frame.
        public var frame: HCIFrame {
            HCIFrame(type: type, bytes: Array(reader.bytes[reader.offset ..< reader.offset + reader.remaining]),
                     timestamp: timestamp, direction: direction)
        }
    }

    public let path: String
    /// The capture's encapsulation (H4, monitor or un-encapsulated HCI).
    public let datalink: BTSnoopFormat.Datalink
    /// True when the file ended inside a record (a capture cut off while written);
    /// the records before it were delivered and the end is treated as end of stream.
    public private(set) var endedInsideRecord = false
    /// Records skipped because they are not HCI packets (monitor notes, index events, bad H4 types).
    public private(set) var skippedRecords = 0
    /// A monitor (btmon) capture records every adapter of the machine, each record with its
    /// controller index. One node is one adapter: from the first LE Meta event on, the reader
    /// follows that event's adapter, and skips and counts the others' records (read as one, two
    /// adapters' reports of one beacon would be one node hearing it twice, at two levels).
    public private(set) var followedAdapter: UInt16?
    /// Records of other adapters than `followedAdapter`, skipped.
    public private(set) var otherAdapterRecords = 0

    private let fd: Int32
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var fileOffset: UInt64 = 0
    private var eof = false
    private var closed = false

    /// Opens `path` and checks its header. `chunkSize` bounds the buffer (grown only for a larger record).
    public init(path: String, chunkSize: Int = 1 << 20) throws(BTSnoopError) {
        self.path = path
        do {
            fd = try Syscall.call("open") { open(path, O_RDONLY | O_CLOEXEC) }
        } catch { throw .io(path: path, error) }
        var header = [UInt8](repeating: 0, count: BTSnoopFormat.headerLength)
        let fd = self.fd
        do {
            let got = try header.withUnsafeMutableBytes { p throws(SystemCallError) in
                try Syscall.call("read") { read(fd, p.baseAddress!, p.count) }
            }
            guard got == BTSnoopFormat.headerLength, Array(header[0..<8]) == BTSnoopFormat.magic else {
                throw BTSnoopError.notBTSnoop(path: path)
            }
            let version = Self.u32(header, 8)
            guard version == 1 else { throw BTSnoopError.unsupportedVersion(version) }
            let link = Self.u32(header, 12)
            guard let dl = BTSnoopFormat.Datalink(rawValue: link) else { throw BTSnoopError.unsupportedDatalink(link) }
            datalink = dl
        } catch let e as BTSnoopError {
            close(fd)
            throw e
        } catch {
            close(fd)
            throw .io(path: path, error as! SystemCallError)
        }
        buffer = [UInt8](repeating: 0, count: max(chunkSize, 4096))
        fileOffset = UInt64(BTSnoopFormat.headerLength)
    }

    deinit { if !closed { close(fd) } }

    /// Closes the file (idempotent).
    public func shutdown() {
        if !closed { closed = true; close(fd) }
    }

    /// Bytes a record may hold at most: the longest HCI packet, with room to spare.
    static var longestRecord: Int { 1 << 17 }

    /// The next HCI record, or nil at the end of the file.
    public func next() throws(BTSnoopError) -> Record? {
        while true {
            try fill(need: BTSnoopFormat.recordHeaderLength)
            guard end - start >= BTSnoopFormat.recordHeaderLength else {
                if end > start { endedInsideRecord = true }
                return nil
            }
            let included = Int(Self.u32(buffer, start + 4))
            let flags = Self.u32(buffer, start + 8)
            let ts = Self.u64(buffer, start + 16)
            // No HCI packet is longer than an ACL packet's 4-byte header and 65,535 bytes (plus
            // H4's indicator); a longer record is a corrupt length that would swallow the records
            // after it, and the replay would end early without a word.
            guard included <= Self.longestRecord else {
                throw .corruptRecord(offset: fileOffset, why: "included length \(included)")
            }
            let total = BTSnoopFormat.recordHeaderLength + included
            try fill(need: total)
            guard end - start >= total else {
                endedInsideRecord = true
                return nil
            }
            let dataStart = start + BTSnoopFormat.recordHeaderLength
            start += total
            fileOffset += UInt64(total)
            let first: UInt8? = included > 0 ? buffer[dataStart] : nil
            guard let kind = BTSnoopFormat.classify(datalink: datalink, flags: flags, firstByte: first),
                  included >= kind.skip else {
                skippedRecords += 1
                continue
            }
            if datalink == .monitor {
                let adapter = UInt16(flags >> 16)
                if let followed = followedAdapter {
                    guard adapter == followed else {
                        otherAdapterRecords += 1
                        continue
                    }
                } else if kind.type == .event, first == HCIEvent.leMetaCode {
                    // The first adapter to report (an LE Meta event), not the first to be talked
                    // to: bluetoothd commands every adapter at start, an idle one included.
                    followedAdapter = adapter
                }
            }
            return Record(type: kind.type, direction: kind.direction, timestamp: BTSnoopFormat.unixTime(ts),
                          reader: ByteReader(buffer, range: dataStart + kind.skip ..< dataStart + included))
        }
    }

    /// Makes at least `need` bytes available from `start` unless the file ends first.
    private func fill(need: Int) throws(BTSnoopError) {
        if end - start >= need || eof { return }
        if start > 0 {
            // Move the partial record to the front; the buffer is unshared here
            // because the previous record's reader has been dropped by the caller.
            let n = end - start
            buffer.withUnsafeMutableBufferPointer { p in
                _ = memmove(p.baseAddress!, p.baseAddress! + start, n)
            }
            start = 0
            end = n
        }
        if need > buffer.count {
            buffer.append(contentsOf: repeatElement(0, count: need - buffer.count))
        }
        while end < need {
            let got: Int
            do {
                got = try buffer.withUnsafeMutableBufferPointer { p throws(SystemCallError) in
                    try Syscall.call("read") { read(fd, p.baseAddress! + end, p.count - end) }
                }
            } catch { throw .io(path: path, error) }
            if got == 0 { eof = true; return }
            end += got
        }
    }

    @inline(__always)
    static func u32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    @inline(__always)
    static func u64(_ b: [UInt8], _ i: Int) -> UInt64 {
        UInt64(u32(b, i)) << 32 | UInt64(u32(b, i + 4))
    }
}
