#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Syscall {
    /// Sends all of `bytes` on a socket with MSG_NOSIGNAL (a peer that went away is EPIPE, not a
    /// SIGPIPE that kills the process), retrying EINTR and short writes. Unlike `writeAll` it
    /// gives up on EAGAIN: with SO_SNDTIMEO set that is a client that stopped reading, and a
    /// bounded server must drop it rather than wait for it.
    package static func send(_ fd: Int32, _ bytes: [UInt8]) throws(SystemCallError) {
        var err: Int32 = 0
        let ok = bytes.withUnsafeBytes { p -> Bool in
            var done = 0
            while done < p.count {
                let r = Glibc.send(fd, p.baseAddress! + done, p.count - done, Int32(MSG_NOSIGNAL))
                if r >= 0 { done += r; continue }
                if errno == EINTR { continue }
                err = errno
                return false
            }
            return true
        }
        if !ok { throw SystemCallError(call: "send", errno: err) }
    }

    /// Sends all of `bytes` by `deadline` (`monotonicSeconds`), or throws ETIMEDOUT: each send
    /// may block only for the time left. A client that reads a little at a time would otherwise
    /// make every partial send a fresh wait, and hold the connection for as long as it liked.
    package static func send(_ fd: Int32, _ bytes: [UInt8], by deadline: Double) throws(SystemCallError) {
        var sent = 0
        while sent < bytes.count {
            let left = deadline - monotonicSeconds()
            guard left > 0 else { throw SystemCallError(call: "send", errno: ETIMEDOUT) }
            try setTimeout(fd, option: SO_SNDTIMEO, seconds: max(0.001, left))
            let r = bytes.withUnsafeBytes { p in Glibc.send(fd, p.baseAddress! + sent, p.count - sent, Int32(MSG_NOSIGNAL)) }
            if r >= 0 { sent += r; continue }
            if errno == EINTR { continue }
            throw SystemCallError(call: "send", errno: errno == EAGAIN || errno == EWOULDBLOCK ? ETIMEDOUT : errno)
        }
    }

    /// Sets a `timeval` socket option (SO_RCVTIMEO, SO_SNDTIMEO) to `seconds`.
    package static func setTimeout(_ fd: Int32, option: Int32, seconds: Double) throws(SystemCallError) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        try call("setsockopt") { setsockopt(fd, SOL_SOCKET, option, &tv, socklen_t(MemoryLayout<timeval>.size)) }
    }
}
