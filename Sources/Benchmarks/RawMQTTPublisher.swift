import Foundation

/// A load generator that speaks just enough MQTT 3.1.1 (CONNECT, then QoS 0
/// PUBLISH) over a plain loopback socket, writing many pre-encoded packets per
/// `write`. libmosquitto costs several syscalls per publish (a wake-up through
/// its socket pair, a select, a write); on a two-core machine the publishers
/// then took the CPU the aggregator under test needed. A blocking socket gives
/// honest back-pressure: when the broker cannot keep up, `send` takes longer
/// and the offered rate (counted by the caller) drops.
final class RawMQTTPublisher: Sendable {
    private let fd: Int32

    /// Connects and completes the MQTT handshake (CONNACK accepted) or throws.
    init(port: Int, clientID: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw AggregatorBenchmark.BenchError.setup("socket: \(String(cString: strerror(errno)))") }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw AggregatorBenchmark.BenchError.setup("connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))")
        }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        self.fd = fd
        // CONNECT: protocol "MQTT" level 4, clean session, keep-alive 120 s (publishes keep it alive).
        var body: [UInt8] = [0x00, 0x04] + Array("MQTT".utf8) + [0x04, 0x02, 0x00, 120]
        body += Self.string(clientID)
        try send(Self.packet(0x10, body))
        var connack = [UInt8](repeating: 0, count: 4)
        var got = 0
        while got < 4 {
            let n = connack.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, 4 - got) }
            guard n > 0 else { close(fd); throw AggregatorBenchmark.BenchError.setup("broker closed the connection before CONNACK") }
            got += n
        }
        guard connack[0] == 0x20, connack[3] == 0 else {
            close(fd)
            throw AggregatorBenchmark.BenchError.setup("broker refused CONNECT (CONNACK \(connack))")
        }
    }

    deinit { close(fd) }

    /// One QoS 0 PUBLISH packet, to be concatenated with others and sent in one write.
    static func publishPacket(topic: String, payload: [UInt8]) -> [UInt8] {
        packet(0x30, string(topic) + payload)
    }

    /// Writes all of `bytes` (blocking); throws when the connection is gone.
    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + sent, bytes.count - sent) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw AggregatorBenchmark.BenchError.setup("publish write: \(String(cString: strerror(errno)))") }
            sent += n
        }
    }

    /// Sends DISCONNECT, so the broker treats the end as clean.
    func disconnect() { try? send([0xE0, 0x00]) }

    private static func string(_ s: String) -> [UInt8] {
        let b = Array(s.utf8)
        return [UInt8(b.count >> 8), UInt8(b.count & 0xFF)] + b
    }

    /// Fixed header (type and flags, then the remaining length as a variable-length integer) plus body.
    private static func packet(_ first: UInt8, _ body: [UInt8]) -> [UInt8] {
        var out = [first]
        var n = body.count
        repeat {
            var byte = UInt8(n % 128)
            n /= 128
            if n > 0 { byte |= 0x80 }
            out.append(byte)
        } while n > 0
        return out + body
    }
}
