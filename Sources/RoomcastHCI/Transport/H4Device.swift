import Shared
#if canImport(Glibc)
import Glibc
#endif

/// Opens the descriptor behind an `h4:` source: a unix stream socket (BlueZ's
/// btvirt, a controller proxy), a unix datagram socket (`SOCK_SEQPACKET`: one H4
/// packet per message, stamped by the kernel on reception, as the raw HCI socket
/// delivers them) or a serial device put in raw mode.
enum H4Device {
    static func open(path: String, baud: Int?) throws(RadioError) -> (fd: Int32, timestamps: FileDescriptorTransport.ReceptionTimestamps) {
        var st = stat()
        if stat(path, &st) < 0 {
            throw .adapterNotFound(device: path, detail: "no such socket or serial device")
        }
        if st.st_mode & S_IFMT == S_IFSOCK {
            do throws(RadioError) {
                return (try connectUnix(path: path, type: SOCK_STREAM), .readTime)
            } catch {
                // A listener of another socket type refuses a stream connection with EPROTOTYPE.
                guard case let .system(_, e) = error, e.errno == EPROTOTYPE else { throw error }
            }
            let fd = try connectUnix(path: path, type: SOCK_SEQPACKET)
            var on: Int32 = 1
            let stamped = setsockopt(fd, SOL_SOCKET, 35 /* SO_TIMESTAMPNS */, &on, socklen_t(MemoryLayout<Int32>.size)) == 0
            return (fd, stamped ? .socket : .readTime)
        }
        return (try openSerial(path: path, baud: baud ?? 115_200), .readTime)
    }

    private static func connectUnix(path: String, type: __socket_type) throws(RadioError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(type.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        if fd < 0 { throw .system("socket(AF_UNIX)", SystemCallError(call: "socket", errno: errno)) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw .invalidSource("h4:\(path) (path too long for a unix socket)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { p in
            for (i, b) in bytes.enumerated() { p[i] = b }
        }
        let r = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if r < 0 {
            let e = errno
            close(fd)
            switch e {
            case ECONNREFUSED, ENOENT:
                throw .adapterNotFound(device: path, detail: "nothing is listening on the socket")
            case EACCES, EPERM:
                throw .permissionDenied(device: path, call: "connect")
            default:
                throw .system("connect \(path)", SystemCallError(call: "connect", errno: e))
            }
        }
        return fd
    }

    private static func openSerial(path: String, baud: Int) throws(RadioError) -> Int32 {
        let fd = Glibc.open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        if fd < 0 {
            let e = errno
            if e == EACCES || e == EPERM { throw .permissionDenied(device: path, call: "open") }
            if e == EBUSY { throw .adapterBusy(device: path) }
            throw .system("open \(path)", SystemCallError(call: "open", errno: e))
        }
        var tio = termios()
        if tcgetattr(fd, &tio) == 0 {
            cfmakeraw(&tio)
            let speed = speedConstant(baud)
            cfsetispeed(&tio, speed)
            cfsetospeed(&tio, speed)
            tio.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD) | tcflag_t(CRTSCTS)
            _ = tcsetattr(fd, TCSANOW, &tio)
            _ = tcflush(fd, TCIOFLUSH)
        }
        return fd
    }

    /// The speed constant for `baud` (`supportedBauds`); 115200 for a spec made elsewhere.
    private static func speedConstant(_ baud: Int) -> speed_t {
        speeds[baud] ?? speed_t(B115200)
    }

    /// The speeds a serial controller may be opened at (`h4:<path>@<baud>`).
    static var supportedBauds: [Int] { speeds.keys.sorted() }

    private static let speeds: [Int: speed_t] = [
        9600: speed_t(B9600), 19200: speed_t(B19200), 38400: speed_t(B38400), 57600: speed_t(B57600),
        115_200: speed_t(B115200), 230_400: speed_t(B230400), 460_800: speed_t(B460800), 921_600: speed_t(B921600),
        1_000_000: speed_t(B1000000), 1_500_000: speed_t(B1500000), 2_000_000: speed_t(B2000000), 3_000_000: speed_t(B3000000),
    ]
}
