#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one funnel for system calls: retries EINTR, captures errno, throws with the call's name.
/// `package`, for every module of Roomcast that makes system calls. Calls whose failure has
/// nothing to report (a `poll` that only waits, `clock_gettime`) may be made directly.
package enum Syscall {
    @discardableResult
    package static func call<T: BinaryInteger>(_ name: String, _ body: () -> T) throws(SystemCallError) -> T {
        while true {
            let r = body()
            if r >= 0 { return r }
            let e = errno
            if e == EINTR { continue }
            throw SystemCallError(call: name, errno: e)
        }
    }
}

extension Syscall {
    /// read(2) into `buffer[offset...]`, retrying EINTR; 0 means end of file.
    package static func read(_ fd: Int32, into buffer: inout [UInt8], at offset: Int = 0) throws(SystemCallError) -> Int {
        var err: Int32 = 0
        let n = buffer.withUnsafeMutableBytes { p -> Int in
            while true {
                let r = Glibc.read(fd, p.baseAddress! + offset, p.count - offset)
                if r >= 0 { return r }
                if errno == EINTR { continue }
                err = errno
                return -1
            }
        }
        if n < 0 { throw SystemCallError(call: "read", errno: err) }
        return n
    }

    /// Writes all of `bytes`, retrying EINTR and short writes. Sockets are
    /// written with MSG_NOSIGNAL: a peer that went away must be an EPIPE
    /// error, not a SIGPIPE that kills the process.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemCallError) {
        var err: Int32 = 0
        var isSocket = true
        let ok = bytes.withUnsafeBytes { p -> Bool in
            var done = 0
            while done < p.count {
                var r = isSocket ? Glibc.send(fd, p.baseAddress! + done, p.count - done, Int32(MSG_NOSIGNAL)) : -1
                if r < 0 && (!isSocket || errno == ENOTSOCK) {
                    isSocket = false
                    r = Glibc.write(fd, p.baseAddress! + done, p.count - done)
                }
                if r >= 0 { done += r; continue }
                if errno == EINTR { continue }
                if errno == EAGAIN {
                    var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&pfd, 1, 1000)
                    continue
                }
                err = errno
                return false
            }
            return true
        }
        if !ok { throw SystemCallError(call: "write", errno: err) }
    }

    /// A close-on-exec, non-blocking pipe (read end, write end).
    package static func pipe() throws(SystemCallError) -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        try call("pipe") { Glibc.pipe(&fds) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        return (fds[0], fds[1])
    }
}
