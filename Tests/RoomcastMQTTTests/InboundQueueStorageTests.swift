import Testing
@testable import RoomcastMQTT

/// The batched inbound queue frees what its consumer took: a backlog that stays between one
/// take and the capacity (a consumer just keeping up with a flood) holds at most about twice
/// what waits, not every message it ever held.
@Suite struct InboundQueueStorageTests {
    @Test func takenMessagesAreFreedWhileABacklogPersists() async {
        let queue = MQTTInboundBatches.Queue(capacity: 100_000)
        let message = MQTTMessage(topic: "roomcast/nodes/hall/beacons/x", payload: [UInt8](repeating: 0x41, count: 1000))
        _ = queue.push(Array(repeating: message, count: 10_000))
        var taken = 0
        for _ in 0..<200 {
            _ = queue.push(Array(repeating: message, count: MQTTInboundBatches.maxTake))
            taken += await queue.take()?.count ?? 0
        }
        #expect(taken == 200 * MQTTInboundBatches.maxTake, "every take took a full batch")
        // 10,000 wait; storage may hold up to twice that, never the 800,000 pushed.
        #expect(queue.storedCount <= 2 * (10_000 + MQTTInboundBatches.maxTake), "\(queue.storedCount) messages held")
    }
}
