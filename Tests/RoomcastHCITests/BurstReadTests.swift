#if canImport(Glibc)
import Glibc
#endif
import Foundation
import RoomcastHCI
import Shared
import Testing
import TestSupport

/// The live read loop on a real descriptor: a `SOCK_SEQPACKET` socket pair, which delivers one
/// packet per read with a kernel reception timestamp, as the raw HCI socket does.
@Suite struct BurstReadTests {
    /// An LE Advertising Report event (H4) with one report of `rssi`.
    static func report(rssi: Int8) -> [UInt8] {
        let p: [UInt8] = [0x02, 0x01, 0x03, 0x01, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x03, 0x02, 0x01, 0x06, UInt8(bitPattern: rssi)]
        return [0x04, 0x3E, UInt8(p.count)] + p
    }

    static func pair() throws -> (Int32, Int32) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0 else { throw POSIXError(.EIO) }
        var on: Int32 = 1
        _ = setsockopt(fds[1], SOL_SOCKET, 35 /* SO_TIMESTAMPNS */, &on, socklen_t(MemoryLayout<Int32>.size))
        return (fds[0], fds[1])
    }

    @Test func aBurstIsHandedOverInOneStepWithKernelTimestamps() async throws {
        let (controller, host) = try Self.pair()
        defer { close(controller) }
        let before = Date().timeIntervalSince1970
        for i in 0..<10 { #expect(send(controller, Self.report(rssi: Int8(-40 - i)), 18, 0) == 18) }
        let after = Date().timeIntervalSince1970
        // Everything is queued before the reader starts: its first burst reads all of it.
        let transport = try FileDescriptorTransport(fd: host, name: "seqpacket", timestamps: .socket, burstWindow: 0.05)
        defer { transport.shutdown() }
        var frames = transport.frames.makeAsyncIterator()
        let burst = try #require(await frames.nextBatch())
        #expect(burst.count == 10)
        #expect(burst.map { $0.bytes.last.map { Int8(bitPattern: $0) } } == (0..<10).map { Int8(-40 - $0) })
        // Reception times from the kernel: within the sends, in order.
        let times = burst.map(\.timestamp)
        #expect(times.allSatisfy { $0 >= before - 0.001 && $0 <= after + 0.001 })
        #expect(times == times.sorted())
    }

    @Test func aManualClockKeepsTheReadTime() async throws {
        let (controller, host) = try Self.pair()
        defer { close(controller) }
        #expect(send(controller, Self.report(rssi: -50), 18, 0) == 18)
        let clock = ManualTimeSource(1234)
        let transport = try FileDescriptorTransport(fd: host, name: "seqpacket", clock: clock, timestamps: .socket, burstWindow: 0.05)
        defer { transport.shutdown() }
        var frames = transport.frames.makeAsyncIterator()
        let burst = try #require(await frames.nextBatch())
        #expect(burst.map(\.timestamp) == [1234])
    }

    @Test func aCommandEndsTheRestSoItsAnswerIsNotHeldBack() async throws {
        let (controller, host) = try Self.pair()
        defer { close(controller) }
        #expect(send(controller, Self.report(rssi: -50), 18, 0) == 18)
        // A window far longer than the guard below: only the kick can make the answer arrive in time.
        let transport = try FileDescriptorTransport(fd: host, name: "seqpacket", timestamps: .socket, burstWindow: 3600)
        defer { transport.shutdown() }
        let complete: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00]
        let answer = try await withTimeout(.seconds(60), "the command's answer") { () -> [UInt8]? in
            var frames = transport.frames.makeAsyncIterator()
            _ = await frames.nextBatch()  // the reader now rests
            try transport.send(.reset)
            var command = [UInt8](repeating: 0, count: 16)
            #expect(recv(controller, &command, command.count, 0) == 4)
            #expect(send(controller, complete, complete.count, 0) == complete.count)
            return await frames.nextBatch()?.first?.bytes
        }
        #expect(answer == Array(complete.dropFirst()))
    }

    @Test func manyPacketsAreReadInBatchesAndReachTheReportStreamWithKernelTimestamps() async throws {
        let (controller, host) = try Self.pair()
        defer { close(controller) }
        let transport = try FileDescriptorTransport(fd: host, name: "seqpacket", timestamps: .socket, burstWindow: 0.05)
        let (reports, producer) = BoundedStream<AdvertisingReport>.make(capacity: 64, mode: .dropOldest)
        let hci = HCIController(transport: transport, reports: producer)
        await hci.start()
        // More than one recvmmsg call holds (64) and more than one hand-over (128).
        let count = 200
        let before = Date().timeIntervalSince1970
        for i in 0..<count { #expect(send(controller, Self.report(rssi: Int8(-20 - i % 80)), 18, 0) == 18) }
        let after = Date().timeIntervalSince1970
        let got = try await withTimeout(.seconds(60), "\(count) reports") { try await first(count, of: reports) }
        #expect(got.map(\.rssi) == (0..<count).map { -20 - $0 % 80 })
        let times = got.map(\.timestamp)
        #expect(times.allSatisfy { $0 >= before - 0.001 && $0 <= after + 0.001 })
        #expect(times == times.sorted())
        #expect(hci.counters.snapshot.reports == UInt64(count))
        await hci.shutdown()
    }

    @Test func aDatagramLongerThanAnyEventIsDroppedAndThePacketsAfterItStillArrive() async throws {
        let (controller, host) = try Self.pair()
        defer { close(controller) }
        // An ACL packet of 2,000 bytes: more than a datagram slot holds.
        let long: [UInt8] = [0x02, 0x01, 0x00, 0xCC, 0x07] + [UInt8](repeating: 0xAB, count: 1996)
        #expect(send(controller, long, long.count, 0) == long.count)
        #expect(send(controller, Self.report(rssi: -42), 18, 0) == 18)
        let transport = try FileDescriptorTransport(fd: host, name: "seqpacket", timestamps: .socket, burstWindow: 0.05)
        defer { transport.shutdown() }
        var frames = transport.frames.makeAsyncIterator()
        let burst = try #require(await frames.nextBatch())
        #expect(burst.map(\.bytes) == [Array(Self.report(rssi: -42).dropFirst())])
    }

    /// A datagram shorter than its packet's header says ends with it: the packets after it
    /// arrive as they are. Joined to the next datagram, it took that report's bytes as its own
    /// and the rest of the stream was framed wrong.
    @Test func aShortDatagramIsNotJoinedToTheNext() async throws {
        let (controller, host) = try Self.pair()
        defer { close(controller) }
        let short = Array(Self.report(rssi: -41).prefix(10))
        #expect(send(controller, short, short.count, 0) == short.count)
        for rssi in [-42, -43] as [Int8] { #expect(send(controller, Self.report(rssi: rssi), 18, 0) == 18) }
        let transport = try FileDescriptorTransport(fd: host, name: "seqpacket", timestamps: .socket, burstWindow: 0.05)
        defer { transport.shutdown() }
        var frames = transport.frames.makeAsyncIterator()
        let burst = try #require(await frames.nextBatch())
        #expect(burst.map(\.bytes) == [Array(Self.report(rssi: -42).dropFirst()), Array(Self.report(rssi: -43).dropFirst())])
    }
}

/// The rest after a burst where none is configured follows how the link stamps its reports.
@Suite struct DefaultBurstWindowTests {
    /// A unix listener of `type` at a fresh path (the controller's end; never accepted).
    static func listener(_ type: __socket_type) throws -> (fd: Int32, path: String) {
        let path = NSTemporaryDirectory() + "roomcast-window-\(getpid())-\(type.rawValue)-\(UInt32.random(in: 0...UInt32.max)).sock"
        let fd = socket(AF_UNIX, Int32(type.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 4) == 0 else { close(fd); throw POSIXError(.EIO) }
        return (fd, path)
    }

    @Test(arguments: [(SOCK_SEQPACKET, 0.1), (SOCK_STREAM, 0.05)])
    func theWindowFollowsTheStamping(type: __socket_type, window: Double) throws {
        let (fd, path) = try Self.listener(type)
        defer { close(fd); unlink(path) }
        // Kernel-stamped (seqpacket, as the raw HCI socket): the rest only delays a report, so it is
        // longer; stamped at the read (a byte stream): it stays under a fast beacon's interval.
        let transport = try #require(try RadioSourceFactory.openTransport(.h4(path: path, baud: nil), burstWindow: nil) as? FileDescriptorTransport)
        defer { transport.shutdown() }
        #expect(transport.burstWindow == window)
        let configured = try #require(try RadioSourceFactory.openTransport(.h4(path: path, baud: nil), burstWindow: 0.02) as? FileDescriptorTransport)
        defer { configured.shutdown() }
        #expect(configured.burstWindow == 0.02)
    }
}
