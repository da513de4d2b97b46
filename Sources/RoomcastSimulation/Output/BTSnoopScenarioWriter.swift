import Foundation
import RoomcastHCI
import Shared

/// Writes `nodes/<node>.btsnoop`: for every node, each packet it received as the HCI LE
/// Advertising Report event its controller would have delivered (datalink 1002 H4,
/// controller → host), at the packet's time, with its RSSI, address and advertising data.
/// `btmon -r` and Wireshark read the files; `ReplayRadioSource` replays them.
public struct BTSnoopScenarioWriter: ScenarioWriter {
    public var directory: URL

    /// Files go to `directory/nodes/`.
    public init(directory: URL) { self.directory = directory }

    /// A packet that cannot become a report (no advertiser for its id, no usable address), and why.
    public struct UnwritablePacket: Error, CustomStringConvertible {
        public var packet: RawPacket
        public var why: String
        public var description: String { "packet \(packet.id) at \(packet.t) on \(packet.node): \(why)" }
    }

    public func write(_ generated: GeneratedScenario) throws {
        let folder = directory.appendingPathComponent("nodes")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var writers: [String: BTSnoopWriter] = [:]
        defer { for w in writers.values { w.shutdown() } }
        for node in generated.scenario.layout.nodes {
            writers[node.name] = try BTSnoopWriter(path: folder.appendingPathComponent("\(node.name).btsnoop").path)
        }
        for packet in generated.scenario.packets {
            guard let writer = writers[packet.node] else {
                throw UnwritablePacket(packet: packet, why: "node not in layout.json")
            }
            let event = try BTSnoopScenarioWriter.event(for: packet, advertisers: generated.advertisers)
            do throws(BTSnoopError) {
                try writer.write(type: .event, bytes: event, timestamp: packet.t, direction: .controllerToHost)
            } catch .unwritableTime {
                throw UnwritablePacket(packet: packet, why: "its time t is not unix seconds a btsnoop capture can hold")
            }
        }
        for w in writers.values { try w.flush() }
    }

    /// The LE Advertising Report event (bytes after the H4 indicator) for one packet.
    public static func event(for packet: RawPacket, advertisers: [BeaconID: SimulatedAdvertiser]) throws -> [UInt8] {
        guard let air = advertisers[packet.id] else {
            throw UnwritablePacket(packet: packet, why: "no advertiser for this id")
        }
        guard let address = air.address(for: packet.mac) else {
            throw UnwritablePacket(packet: packet, why: "rotating advertiser without a usable mac")
        }
        return AdvertisingReportEvent.encode(eventType: air.eventType, addressType: air.addressType,
                                             address: address, data: air.data(from: address), rssi: packet.rssi)
    }
}
