import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Shared
import TestSupport
import Testing

/// The controller side against our scripted H4 controller: init sequence,
/// legacy versus extended scanning, errors, RSSI values of our choosing.
@Suite struct ControllerTests {
    static let beacon = IBeaconAdvertisement.encode(uuid: Array(0..<16), major: 7, minor: 9, power: -59)

    static func script(_ rssi: [Int8]) -> [ScriptedH4Controller.Report] {
        rssi.enumerated().map { i, r in
            .init(address: [0xC0, 0, 0, 0, 0, UInt8(i + 1)], rssi: r, data: beacon)
        }
    }

    func makeController(_ fake: ScriptedH4Controller) throws -> (HCIController, BoundedStream<AdvertisingReport>) {
        let transport = try RadioSourceFactory.openTransport(.h4(path: fake.path, baud: nil))
        let (stream, producer) = BoundedStream<AdvertisingReport>.make(capacity: 64, mode: .dropOldest)
        return (HCIController(transport: transport, reports: producer, commandTimeout: 1), stream)
    }

    @Test func initSequenceChecksEachCommand() async throws {
        let fake = try ScriptedH4Controller(configuration: .init(extended: false))
        defer { fake.stop() }
        let (controller, _) = try makeController(fake)
        await controller.start()
        let info = try await withTimeout(.seconds(60), "init") { try await controller.initialize(reset: true) }
        #expect(fake.commands.map(\.opcode) == [0x0C03, 0x0C01, 0x2001, 0x1001, 0x1009, 0x2003])
        #expect(info.address == [0x11, 0x22, 0x33, 0x44, 0x55, 0x66])
        #expect(info.hciVersion == 0x0D)
        #expect(info.manufacturer == 0x05F1)
        #expect(!info.leFeatures.extendedAdvertising)
        await controller.shutdown()
    }

    /// On an adapter the kernel manages, its event masks stay: they also enable the events
    /// BlueZ's own connections wait for. After a reset asked for there, ours are needed.
    @Test func aKernelManagedAdapterKeepsTheKernelsEventMasks() async throws {
        for (reset, expected) in [(false, [0x1001, 0x1009, 0x2003]), (true, [0x0C03, 0x0C01, 0x2001, 0x1001, 0x1009, 0x2003])] as [(Bool, [UInt16])] {
            let fake = try ScriptedH4Controller(configuration: .init(extended: true))
            defer { fake.stop() }
            let (controller, _) = try makeController(fake)
            await controller.start()
            try await withTimeout(.seconds(60), "init") { try await controller.initialize(reset: reset, kernelManaged: true) }
            #expect(fake.commands.map(\.opcode) == expected, "reset: \(reset)")
            await controller.shutdown()
        }
    }

    /// A scan command's Command Complete that no command of ours waits for is another
    /// program's; the late answer of one of ours that timed out is not.
    @Test func onlyAnotherProgramsScanCommandCountsAsForeign() async throws {
        let fake = try ScriptedH4Controller(configuration: .init(silentOpcodes: [0x200C]))
        defer { fake.stop() }
        let (controller, _) = try makeController(fake)
        await controller.start()
        try await withTimeout(.seconds(60), "init") { try await controller.initialize(reset: false) }
        await #expect(throws: RadioError.commandTimeout(opcode: HCIOpcode(rawValue: 0x200C))) {
            try await controller.send(.leSetScanEnable(enable: false, filterDuplicates: false))
        }
        let complete: [UInt8] = [0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]
        fake.emitRaw(complete)  // the late answer of ours
        fake.emitRaw(complete)  // another program's
        fake.emitRaw([0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])  // another's HCI Reset: not a scan command
        fake.emitRaw(complete)  // another program's
        // Events are read in order: once a command sent after them is answered, all are counted.
        _ = try await withTimeout(.seconds(60), "a command after them") { try await controller.send(.readBDAddr) }
        #expect(controller.health.foreignScanChanges == 2)
        await controller.shutdown()
    }

    /// The supervisor's reset of an adapter the kernel manages sends no HCI Reset and none of
    /// our event masks (they would wipe BlueZ's state); of an H4 controller, both.
    @Test func aRecoveryResetLeavesAKernelManagedAdapterToTheKernel() async throws {
        for kernelManaged in [true, false] {
            let fake = try ScriptedH4Controller()
            defer { fake.stop() }
            let (controller, _) = try makeController(fake)
            await controller.start()
            try await withTimeout(.seconds(60), "init") { try await controller.initialize(reset: !kernelManaged, kernelManaged: kernelManaged) }
            let before = fake.commands.count
            try await withTimeout(.seconds(60), "reset") { try await controller.resetAndInitialize() }
            let sent = fake.commands.dropFirst(before).map(\.opcode)
            #expect(sent == (kernelManaged ? [0x1001, 0x1009, 0x2003] : [0x0C03, 0x0C01, 0x2001, 0x1001, 0x1009, 0x2003]),
                    "kernel managed: \(kernelManaged)")
            #expect(controller.counters.snapshot.resets == 1)
            await controller.shutdown()
        }
    }

    @Test(arguments: [false, true])
    func scanCommandsFollowTheLEFeatures(extended: Bool) async throws {
        let rssi: [Int8] = [-40, -55, -70, -85, 127]
        let fake = try ScriptedH4Controller(configuration: .init(extended: extended, scanBatches: [Self.script(rssi)]))
        defer { fake.stop() }
        let (controller, reports) = try makeController(fake)
        await controller.start()
        try await withTimeout(.seconds(60), "init") { try await controller.initialize(reset: true) }
        try await withTimeout(.seconds(60), "scan") { try await controller.startScanning(ScanSettings(type: .active, interval: 0.06, window: 0.03)) }
        let got = try await withTimeout(.seconds(60), "reports") { try await first(5, of: reports) }
        #expect(got.map(\.rssi) == [-40, -55, -70, -85, nil])
        #expect(got.allSatisfy { $0.data == Self.beacon })
        #expect(got.allSatisfy { ($0.extended != nil) == extended })
        #expect(await controller.scanMode == (extended ? .extended : .legacy))
        let opcodes = fake.commands.map(\.opcode)
        if extended {
            #expect(Array(opcodes.suffix(3)) == [0x2042, 0x2041, 0x2042])
            let parameters = try #require(fake.commands.last { $0.opcode == 0x2041 }).parameters
            // 1M PHY only, active, interval 0x0060 (60 ms), window 0x0030 (30 ms).
            #expect(parameters == [0x00, 0x00, 0x01, 0x01, 0x60, 0x00, 0x30, 0x00])
            #expect(fake.commands.last?.parameters == [1, 0, 0, 0, 0, 0], "enabled, duplicates not filtered")
        } else {
            #expect(Array(opcodes.suffix(3)) == [0x200C, 0x200B, 0x200C])
            #expect(fake.commands.last?.parameters == [1, 0], "enabled, duplicates not filtered")
            #expect(!opcodes.contains(0x2041))
        }
        await controller.shutdown()
    }

    @Test func forcedLegacyModeIgnoresTheFeatures() async throws {
        let fake = try ScriptedH4Controller(configuration: .init(extended: true))
        defer { fake.stop() }
        let (controller, _) = try makeController(fake)
        await controller.start()
        try await withTimeout(.seconds(60), "init") { try await controller.initialize(reset: false) }
        try await withTimeout(.seconds(60), "scan") { try await controller.startScanning(ScanSettings(mode: .legacy)) }
        #expect(fake.commands.map(\.opcode).first == 0x0C01, "no reset when not asked")
        #expect(!fake.commands.map(\.opcode).contains(0x2042))
        await controller.shutdown()
    }

    @Test func extendedFragmentsArriveJoined() async throws {
        let fake = try ScriptedH4Controller(configuration: .init(extended: true, scanBatches: [Self.script([-48])],
                                                                 extendedFragmentSize: 8))
        defer { fake.stop() }
        let (controller, reports) = try makeController(fake)
        await controller.start()
        try await withTimeout(.seconds(60), "init") { try await controller.initialize(reset: true) }
        try await withTimeout(.seconds(60), "scan") { try await controller.startScanning(ScanSettings()) }
        let got = try await withTimeout(.seconds(60), "report") { try await first(1, of: reports) }
        #expect(got.first?.data == Self.beacon)
        #expect(got.first?.rssi == -48)
        await controller.shutdown()
    }

    @Test func aRefusedCommandFailsTheInitWithItsStatus() async throws {
        let fake = try ScriptedH4Controller(configuration: .init(failingOpcodes: [0x0C01: 0x12]))
        defer { fake.stop() }
        let (controller, _) = try makeController(fake)
        await controller.start()
        await #expect(throws: RadioError.commandFailed(opcode: .setEventMask, status: 0x12)) {
            try await withTimeout(.seconds(60), "init") { try await controller.initialize(reset: true) }
        }
        #expect(controller.counters.snapshot.hciErrors == 1)
        await controller.shutdown()
    }

    @Test func anUnansweredCommandTimesOut() async throws {
        let fake = try ScriptedH4Controller(configuration: .init(silentOpcodes: [0x1009]))
        defer { fake.stop() }
        let (controller, _) = try makeController(fake)
        await controller.start()
        await #expect(throws: RadioError.commandTimeout(opcode: .readBDAddr)) {
            try await withTimeout(.seconds(60), "init") { try await controller.initialize(reset: false) }
        }
        await controller.shutdown()
    }

    @Test func advertisingCommandsCarryTheBeacon() async throws {
        let fake = try ScriptedH4Controller()
        defer { fake.stop() }
        let (controller, _) = try makeController(fake)
        await controller.start()
        try await withTimeout(.seconds(60), "init") { try await controller.initialize(reset: true) }
        try await withTimeout(.seconds(60), "advertise") { try await controller.startAdvertising(data: Self.beacon, interval: 0.2) }
        let tail = fake.commands.suffix(4)
        #expect(tail.map(\.opcode) == [0x200A, 0x2006, 0x2008, 0x200A], "disable, parameters, data, enable")
        let parameters = try #require(fake.commands.first { $0.opcode == 0x2006 }).parameters
        #expect(Array(parameters[0..<5]) == [0x40, 0x01, 0x40, 0x01, 0x03], "200 ms = 0x0140, ADV_NONCONN_IND")
        let data = try #require(fake.commands.first { $0.opcode == 0x2008 }).parameters
        #expect(data[0] == 30)
        #expect(Array(data[1...30]) == Self.beacon)
        #expect(fake.commands.last?.parameters == [1])
        #expect(await controller.isAdvertising)
        await controller.shutdown()
    }

    /// A radio recovery opens a new transport and controller; the old ones must go with their
    /// shutdown, or a long-running agent on a flaky radio grows by one of each per recovery.
    @Test func aControllerShutDownLetsItsTransportGo() async throws {
        let fake = try ScriptedH4Controller(configuration: .init(extended: false))
        defer { fake.stop() }
        weak var released: AnyObject?
        do {
            let (controller, _) = try makeController(fake)
            await controller.start()
            _ = try await withTimeout(.seconds(60), "init") { try await controller.initialize(reset: true) }
            released = controller.transport as AnyObject
            #expect(released != nil)
            await controller.shutdown()
        }
        try await eventually("the transport freed after shutdown", timeout: .seconds(30)) { released == nil }
    }
}
