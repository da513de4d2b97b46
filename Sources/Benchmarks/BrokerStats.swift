import Foundation
import RoomcastMQTT
import Synchronization

/// Follows mosquitto's own count of messages it dropped (`$SYS/broker/publish/messages/dropped`,
/// published every `sys_interval` seconds), so the benchmark can say where readings were lost.
final class BrokerStats: Sendable {
    static let droppedTopic = "$SYS/broker/publish/messages/dropped"
    private let client: MQTTClient
    private let latest = Mutex<(value: Int?, at: Double)>((nil, 0))
    private let baseline = Mutex<Int?>(nil)

    private init(client: MQTTClient) { self.client = client }

    static func start(port: Int) async throws -> BrokerStats {
        let client = try AggregatorBenchmark.client(port: port, id: "bench-sys", inbound: 64)
        let stats = BrokerStats(client: client)
        Task {
            for await m in client.messages where m.topic == droppedTopic {
                if let v = Int(String(decoding: m.payload, as: UTF8.self)) {
                    stats.latest.withLock { $0 = (v, Date().timeIntervalSince1970) }
                }
            }
        }
        client.start()
        try await client.subscribe(droppedTopic, qos: .atMostOnce)
        // The retained/first value is the baseline (messages dropped before the run: none expected).
        try await AggregatorBenchmark.waitFor(seconds: 5) { stats.latest.withLock { $0.value } != nil }
        stats.baseline.withLock { $0 = stats.latest.withLock { $0.value } }
        return stats
    }

    /// Drops counted since `start`. mosquitto republishes the counter only when it changed, at most
    /// every `sys_interval` (1 s here): after waiting longer than that, the latest value is current.
    func droppedSinceStart() async -> Int? {
        try? await Task.sleep(for: .milliseconds(2500))
        guard let v = latest.withLock({ $0.value }), let b = baseline.withLock({ $0 }) else { return nil }
        return v - b
    }

    func stop() async { await client.shutdown(timeout: .seconds(1)) }
}
