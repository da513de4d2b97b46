import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A port on 127.0.0.1 where nothing listens, held for as long as the value lives: a socket is
/// bound to it and never listens, so a connection there is refused, and no broker another test
/// starts meanwhile can take it (as one could take a port that `freePort()` found free), nor can
/// the kernel pick it as a client's own port (a client that retries a port nobody listens on can
/// otherwise connect to itself).
public final class RefusingPort: Sendable {
    public let port: Int
    private let fd: Int32

    public init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var addr = loopbackAddress(port: 0)
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { a in
            a.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 && getsockname(fd, $0, &len) == 0
            }
        }
        guard bound else {
            let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            close(fd)
            throw error
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: addr.sin_port))
    }

    deinit { close(fd) }
}
