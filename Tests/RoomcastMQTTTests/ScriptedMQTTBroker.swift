import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Just enough of an MQTT broker on a loopback socket to script what a real one does: with many
/// retained messages (CONNACK, the first SUBACK, `PUBLISH` after `PUBLISH`, then the second
/// SUBACK), or closing a session with an MQTT 5 reason code.
final class ScriptedMQTTBroker: @unchecked Sendable {
    let port: Int
    private let listener: Int32

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        _ = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard listen(listener, 8) == 0 else {
            Glibc.close(listener)
            throw POSIXError(.EADDRINUSE)
        }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &len) }
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: addr.sin_port))
    }

    func close() { shutdown(listener, Int32(SHUT_RDWR)); Glibc.close(listener) }

    /// Serves one client: acknowledges its CONNECT and first SUBSCRIBE, publishes on
    /// `retained/x` every 50 ms for `seconds`, then acknowledges its second SUBSCRIBE.
    func serveSlowSubscriptions(messagesFor seconds: Double) {
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { return }
        defer { Glibc.close(fd) }
        guard readPacket(fd) != nil else { return }  // CONNECT
        send(fd, [0x20, 0x02, 0x00, 0x00])
        guard let first = readPacket(fd), let second = readPacket(fd) else { return }
        send(fd, [0x90, 0x03] + first.prefix(2) + [0x01])
        let topic = Array("retained/x".utf8)
        let publish: [UInt8] = [0x30, UInt8(2 + topic.count + 1), 0x00, UInt8(topic.count)] + topic + [0x31]
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            send(fd, publish)
            usleep(50_000)
        }
        send(fd, [0x90, 0x03] + second.prefix(2) + [0x01])
        // Hold the connection until the client goes.
        var byte: UInt8 = 0
        while recv(fd, &byte, 1, 0) > 0 {}
    }

    /// Serves one MQTT 5 client: acknowledges its CONNECT, then closes the connection with a
    /// DISCONNECT carrying `reason`, as a broker does for a session taken over; then accepts the
    /// client's next connection.
    func serveThenDisconnect(reason: UInt8) {
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else { return }
        defer { Glibc.close(fd) }
        guard readPacket(fd) != nil else { return }  // CONNECT
        send(fd, [0x20, 0x03, 0x00, 0x00, 0x00])  // CONNACK: no session, success, no properties
        usleep(100_000)
        send(fd, [0xE0, 0x02, reason, 0x00])  // DISCONNECT: reason, no properties
        usleep(200_000)
        // The client's next connection is accepted and held until the client closes it.
        let again = accept(listener, nil, nil)
        guard again >= 0 else { return }
        defer { Glibc.close(again) }
        guard readPacket(again) != nil else { return }
        send(again, [0x20, 0x03, 0x00, 0x00, 0x00])
        while readPacket(again) != nil {}
    }

    /// The variable header and payload of the next packet.
    private func readPacket(_ fd: Int32) -> [UInt8]? {
        guard readExactly(fd, 1) != nil else { return nil }
        var length = 0, shift = 0
        while true {
            guard let b = readExactly(fd, 1)?.first else { return nil }
            length |= Int(b & 0x7F) << shift
            shift += 7
            if b & 0x80 == 0 { break }
        }
        return readExactly(fd, length)
    }

    private func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = out.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, count - got, 0) }
            guard n > 0 else { return nil }
            got += n
        }
        return out
    }

    private func send(_ fd: Int32, _ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }
}
