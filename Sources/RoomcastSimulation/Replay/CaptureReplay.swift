import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Shared

/// Replays a scenario's `nodes/<node>.btsnoop` through the agent's own radio path —
/// `ReplayRadioSource` at full speed, then `AdvertisementDecoder` with the given tracking
/// config — and returns what the agents would have seen, in `raw.jsonl` form. For a
/// generated scenario and its `agent.yaml` config, the tracked packets equal `raw.jsonl`'s.
public enum CaptureReplay {
    /// What the captures decoded to.
    public struct Result: Sendable, Equatable {
        /// One per report the config tracks: time (ms), node, tracked id, RSSI, and the
        /// advertiser address for IRK-resolved ones. Sorted like `Scenario.packets`
        /// (time, node, id).
        public var packets: [RawPacket]
        /// Reports no configured identity claimed, per node.
        public var untracked: [String: Int]
        /// Reports without an RSSI (127, "not available"), per node.
        public var withoutRSSI: [String: Int]
        /// What a replay had to say about a capture (`RadioSource.notice`: a btmon capture of
        /// several adapters, of which one was replayed), per node.
        public var notices: [String: String] = [:]

        public init(packets: [RawPacket] = [], untracked: [String: Int] = [:], withoutRSSI: [String: Int] = [:]) {
            self.packets = packets
            self.untracked = untracked
            self.withoutRSSI = withoutRSSI
        }
    }

    /// Why a replay failed: the capture, and what went wrong.
    public struct ReplayError: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "\(path): \(reason)" }
    }

    /// Replays `directory/nodes/<node>.btsnoop` for each of `nodes`, one after the other.
    public static func run(directory: URL, nodes: [String], config: AdvertisingConfig) async throws -> Result {
        let decoder = try AdvertisementDecoder(config: config)
        var result = Result()
        for node in nodes {
            let path = directory.appendingPathComponent("nodes").appendingPathComponent("\(node).btsnoop").path
            let source = ReplayRadioSource(path: path, speed: .max)
            do { try await source.start() } catch { throw ReplayError(path: path, reason: "\(error)") }
            for await report in source.reports {
                guard let rssi = report.rssi else {
                    result.withoutRSSI[node, default: 0] += 1
                    continue
                }
                let address = BLEAddress(report.address)
                let decoded = decoder.decode(report.data, address: address,
                                             addressType: BLEAddressType(hci: report.addressType.rawValue), rssi: rssi)
                guard let identity = decoded.identity else {
                    result.untracked[node, default: 0] += 1
                    continue
                }
                result.packets.append(RawPacket(
                    t: WireFormat.milliseconds(report.timestamp), node: node, id: identity.id, rssi: rssi,
                    mac: identity.source == .irk ? address?.description : nil))
            }
            await source.shutdown()
            if let error = source.terminationError { throw ReplayError(path: path, reason: "\(error)") }
            if let notice = source.notice { result.notices[node] = notice }
        }
        result.packets.sort { a, b in
            a.t != b.t ? a.t < b.t : (a.node != b.node ? a.node < b.node : a.id < b.id)
        }
        return result
    }
}
