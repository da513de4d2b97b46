#if canImport(Glibc)
import Glibc
#endif
internal import CBlueZ
import Shared

/// Reads a burst of datagrams (one HCI packet each: the raw HCI socket, a unix
/// `SOCK_SEQPACKET` socket) in one `recvmmsg(2)` per `slots` packets instead of one
/// `recvmsg` each, with each packet's control data, so each keeps its kernel reception
/// time. Owns its buffers (allocated once); used by one thread only.
final class DatagramBatchReceiver {
    /// Packets read in one system call at most.
    let slots: Int
    /// Bytes per packet: an HCI event is at most 1 + 2 + 255 bytes; a longer datagram is truncated.
    let slotSize: Int
    private static let controlSize = 64
    private let data: UnsafeMutableRawPointer
    private let control: UnsafeMutableRawPointer
    private let iovecs: UnsafeMutablePointer<iovec>
    private let headers: UnsafeMutablePointer<roomcast_mmsghdr>

    init(slots: Int = 64, slotSize: Int = 1024) {
        self.slots = slots
        self.slotSize = slotSize
        data = .allocate(byteCount: slots * slotSize, alignment: 16)
        control = .allocate(byteCount: slots * Self.controlSize, alignment: 16)
        iovecs = .allocate(capacity: slots)
        headers = .allocate(capacity: slots)
        for i in 0..<slots {
            iovecs[i] = iovec(iov_base: data + i * slotSize, iov_len: slotSize)
        }
    }

    deinit {
        data.deallocate()
        control.deallocate()
        iovecs.deallocate()
        headers.deallocate()
    }

    /// Receives what is waiting without blocking, up to `limit` (at most `slots`) packets; 0 when
    /// nothing is (EAGAIN). A packet of length 0 is the peer's end of the stream.
    func receive(fd: Int32, limit: Int) throws(SystemCallError) -> Int {
        let count = max(1, min(limit, slots))
        for i in 0..<count {
            var h = roomcast_mmsghdr()
            h.msg_hdr.msg_iov = iovecs + i
            h.msg_hdr.msg_iovlen = 1
            h.msg_hdr.msg_control = control + i * Self.controlSize
            h.msg_hdr.msg_controllen = Self.controlSize
            headers[i] = h
        }
        do {
            return Int(try Syscall.call("recvmmsg") { roomcast_recvmmsg(fd, headers, UInt32(count), Int32(MSG_DONTWAIT), nil) })
        } catch {
            if error.errno == EAGAIN || error.errno == EWOULDBLOCK { return 0 }
            throw error
        }
    }

    /// Packet `i` of the last `receive`: its bytes (valid until the next `receive`) and
    /// whether the kernel cut it to `slotSize`.
    func packet(_ i: Int) -> (bytes: UnsafeRawBufferPointer, truncated: Bool) {
        let h = headers[i]
        let length = min(Int(h.msg_len), slotSize)
        return (UnsafeRawBufferPointer(start: data + i * slotSize, count: length), h.msg_hdr.msg_flags & Int32(MSG_TRUNC) != 0)
    }

    /// The reception time in packet `i`'s control data: the control message of `level` and
    /// `type` read as seconds and a fraction of `1 / fractionsPerSecond` (a timeval or timespec).
    func receptionTime(_ i: Int, level: Int32, type: Int32, fractionsPerSecond: Double) -> Double? {
        var seconds = 0, fraction = 0
        guard roomcast_cmsg_time(&headers[i].msg_hdr, level, type, &seconds, &fraction) == 1 else { return nil }
        return Double(seconds) + Double(fraction) / fractionsPerSecond
    }
}
