import Foundation
import RoomcastAdvertising
import RoomcastHCI
import RoomcastMQTT
import Shared
import Testing
import TestSupport
@testable import RoomcastAgent

/// Two agents over BlueZ's controller emulator and a real broker: one
/// transmits an iBeacon through one emulated controller (the tutorials'
/// "Transmit" screen), the other scans through a second one and publishes the
/// beacon. Missing btvirt or mosquitto skips the test, or fails it under CI=true.
@Suite(.serialized, .requiresBTVirt, .requiresMosquitto) struct BTVirtAgentTests {
    @Test func oneAgentAdvertisesAnotherPublishesTheBeacon() async throws {
        let btvirt = try await BTVirt.start()
        defer { btvirt.stop() }
        let broker = try await MosquittoBroker.start()

        let observer = try MQTTClient(configuration: MQTTClientConfiguration(host: "127.0.0.1", port: broker.port,
                                                                            clientID: "observer"), logger: .silent)
        let seen = StreamCollector(observer.messages)
        observer.start()
        try await observer.subscribe("roomcast/nodes/#", qos: .atLeastOnce)

        // The scanning agent, publishing to the broker.
        let client = try MQTTClient(configuration: MQTTClientConfiguration(host: "127.0.0.1", port: broker.port,
                                                                          clientID: "scanner-pi"), logger: .silent)
        let scanSource = RadioSourceFactory.make(.h4(path: BTVirt.bredrLEPath, baud: nil),
                                           options: RadioOptions(scan: ScanSettings(mode: .legacy), resetOnOpen: true, commandTimeout: 3))
        let scanner = EdgeAgentService(settings: AgentSettings(node: "scanner-pi"), decoder: try AdvertisementDecoder(),
                                       source: scanSource, sink: MQTTSink(client: client, logger: .silent), mqtt: client,
                                       logger: .silent)
        let scanning = Task { try? await scanner.run() }
        try await seen.waitFor("the scanner online", timeout: .seconds(60)) {
            $0.contains { $0.topic == "roomcast/nodes/scanner-pi/status" && $0.payloadString == "online" }
        }

        // The transmitting agent: `edge-agent advertise` / the `advertise:` section.
        let beacon = try #require(IBeaconAdvertisement.encode(uuidString: "e2c56db5-dffb-48d2-b060-d0f5a71096e0",
                                                              major: 100, minor: 7, power: -59))
        let advertiser = RadioSourceFactory.make(.h4(path: BTVirt.lePath, baud: nil),
                                           options: RadioOptions(advertise: AdvertisingSettings(data: beacon, interval: 0.1),
                                                                 resetOnOpen: true, commandTimeout: 3))
        try await withTimeout(.seconds(60), "advertiser start") { try await advertiser.start() }

        let id = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-100-7"
        let all = try await seen.waitFor("the beacon published by the scanner", timeout: .seconds(60)) {
            $0.contains { $0.topic == "roomcast/nodes/scanner-pi/beacons/\(id)" }
        }
        let message = try #require(all.first { $0.topic == "roomcast/nodes/scanner-pi/beacons/\(id)" })
        let reading = try WireFormat.decode(BeaconReading.self, from: message.payload)
        #expect(reading.major == 100 && reading.minor == 7 && reading.uuid == "e2c56db5-dffb-48d2-b060-d0f5a71096e0")
        #expect(reading.power == -59 && reading.kind == .iBeacon)
        #expect(reading.proximity == .unknown, "the emulator reports RSSI 127 (not available): heard, not ranged")

        await advertiser.shutdown()
        await scanner.stop()
        _ = await scanning.value
        await observer.shutdown()
        await broker.cleanup()
    }
}
