import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A port on 127.0.0.1 where nothing listens, held until `release()` (or the value's end): a
/// socket is bound to it and never listens, so a connection there is refused, and no broker
/// another test starts meanwhile can take it (as one could take a port that `freePort()` found
/// free), nor can the kernel pick it as a client's own port (a client that retries a port nobody
/// listens on can otherwise connect to itself). Taken below the ephemeral range, as `freePort()`
/// takes its ports, so a test can release it and start its own broker there.
public final class RefusingPort: Sendable {
    public let port: Int
    private let fd: Mutex<Int32?>

    public init() throws {
        for _ in 0..<16 {
            let candidate = try freePort()
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            var addr = loopbackAddress(port: candidate)
            let bound = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } == 0
            if bound {
                self.fd = Mutex(fd)
                port = candidate
                return
            }
            close(fd)  // taken since `freePort()` looked: another
        }
        throw POSIXError(.EADDRINUSE)
    }

    /// Lets the port go, for a server the test starts on it.
    public func release() {
        fd.withLock { fd in
            if let held = fd { close(held) }
            fd = nil
        }
    }

    deinit { release() }
}
