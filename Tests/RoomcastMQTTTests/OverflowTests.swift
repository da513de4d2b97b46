import Foundation
import RoomcastMQTT
import Testing
import TestSupport

@Suite(.requiresMosquitto, .timeLimit(.minutes(1)))
struct OverflowTests {
    @Test func slowConsumerKeepsTheNewestAndCountsDrops() async throws {
        // Unlimited broker queue: mosquitto's default (1000 QoS 1 messages per client) would
        // otherwise drop on the broker side under CPU contention, before our client sees them.
        try await withRig(.init(extraConfig: ["max_queued_messages 0"])) { rig in
            let buffer = 16
            let sub = try await rig.connectedClient("slow") { c in c.inboundBufferSize = buffer }
            try await sub.subscribe("flood/#")
            let pub = try await rig.connectedClient("flood")
            let total = 2000
            for i in 0..<total {
                try pub.publish(MQTTMessage(topic: "flood/\(i % 7)", string: "\(i)", qos: .atLeastOnce))
                if i % 500 == 499 { #expect(await pub.flush(timeout: .seconds(10))) } // stay under the outbound limit
            }
            // Nobody reads `messages` yet. A message is counted as received just before it is
            // queued (or dropped): wait for the drops too.
            try await eventually("all \(total) messages to arrive and the oldest to be dropped",
                                 detail: { "received \(sub.receivedInbound), dropped \(sub.droppedInbound)" }) {
                sub.receivedInbound == total && sub.droppedInbound == total - buffer
            }

            // The stream holds exactly the newest `buffer` messages: memory stayed bounded.
            var kept: [String] = []
            var it = sub.messages.makeAsyncIterator()
            for _ in 0..<buffer { if let m = await it.next() { kept.append(m.payloadString ?? "?") } }
            #expect(kept == ((total - buffer)..<total).map { "\($0)" })
        }
    }

    @Test func batchedInboundKeepsTheNewestInOrderAndCountsDrops() async throws {
        try await withRig(.init(extraConfig: ["max_queued_messages 0"])) { rig in
            let buffer = 100
            let sub = try await rig.connectedClient("slow-batched") { c in
                c.inboundBufferSize = buffer
                c.batchInbound = true
            }
            try await sub.subscribe("flood/#")
            let pub = try await rig.connectedClient("flood-batched")
            let total = 2000
            for i in 0..<total {
                try pub.publish(MQTTMessage(topic: "flood/\(i % 7)", string: "\(i)", qos: .atLeastOnce))
                if i % 500 == 499 { #expect(await pub.flush(timeout: .seconds(10))) }
            }
            // Nobody takes a batch yet. A message is counted as received when it arrives and as
            // dropped when its loop turn hands the turn's messages over: wait for the drops too.
            try await eventually("all \(total) messages to arrive and the oldest to be dropped",
                                 detail: { "received \(sub.receivedInbound), dropped \(sub.droppedInbound)" }) {
                sub.receivedInbound == total && sub.droppedInbound == total - buffer
            }
            // The batches hold exactly the newest `buffer` messages, in order; `messages` stays empty.
            var kept: [String] = []
            var it = sub.inboundBatches.makeAsyncIterator()
            while kept.count < buffer, let batch = await it.next() { kept += batch.map { $0.payloadString ?? "?" } }
            #expect(kept == ((total - buffer)..<total).map { "\($0)" })
            // More arrive in batches as they come, nothing lost while the consumer keeps up.
            try pub.publish(MQTTMessage(topic: "flood/after", string: "after", qos: .atLeastOnce))
            let next = await it.next()
            #expect(next?.map(\.payloadString) == ["after"])
            #expect(sub.droppedInbound == total - buffer)
        }
    }

    /// A count alone does not bound memory: the aggregator keeps 65,536 messages, and a broker
    /// passes messages of up to 256 MB.
    @Test func batchedInboundIsBoundedInBytesToo() async throws {
        try await withRig(.init(extraConfig: ["max_queued_messages 0"])) { rig in
            let budget = 1 << 20
            let sub = try await rig.connectedClient("slow-bytes") { c in
                c.inboundBufferSize = 1000
                c.inboundBufferBytes = budget
                c.batchInbound = true
            }
            try await sub.subscribe("big/#")
            let pub = try await rig.connectedClient("big-sender")
            let total = 40
            for i in 0..<total {
                let payload = Array("\(i)|".utf8) + [UInt8](repeating: 0x41, count: 100_000)
                try pub.publish(MQTTMessage(topic: "big/x", payload: payload, qos: .atLeastOnce))
            }
            #expect(await pub.flush(timeout: .seconds(20)))
            // Drops are counted once a turn's messages are queued (received ones are counted as
            // they are read): the last turn is in once the drops add up.
            try await eventually("all \(total) messages to arrive", detail: { "received \(sub.receivedInbound), dropped \(sub.droppedInbound)" }) {
                sub.receivedInbound == total && sub.droppedInbound == total - 10
            }
            var it = sub.inboundBatches.makeAsyncIterator()
            let kept = await it.next() ?? []
            let bytes = kept.reduce(0) { $0 + $1.payload.count + $1.topic.utf8.count }
            // The newest that fit, in order: ten messages of 100 kB fill 1 MiB.
            #expect(bytes <= budget)
            #expect(kept.count == 10)
            let numbers = kept.compactMap { m in m.payload.firstIndex(of: UInt8(ascii: "|")).flatMap { Int(String(decoding: m.payload[..<$0], as: UTF8.self)) } }
            #expect(numbers == Array((total - kept.count)..<total))
            #expect(sub.droppedInbound == total - kept.count)
        }
    }

    @Test func outboundQueueIsBounded() async throws {
        try await withRig { rig in
            let pub = try await rig.connectedClient("bounded") { c in c.outboundQueueLimit = 5 }
            // A frozen broker acknowledges nothing, so unacknowledged messages pile up to the limit.
            rig.broker.pause()
            var refused = 0
            for i in 0..<200 {
                do { try pub.publish(MQTTMessage(topic: "q/\(i)", string: "x", qos: .atLeastOnce)) } catch let e as MQTTError {
                    #expect(e == .outboundQueueFull(limit: 5))
                    refused += 1
                }
            }
            #expect(refused == 195)
            #expect(pub.publishFailures == refused)
            rig.broker.resume()
            #expect(await pub.flush(timeout: .seconds(10)))
            // Acknowledged: room again.
            try pub.publish(MQTTMessage(topic: "q/after", string: "x", qos: .atLeastOnce))
        }
    }

    @Test func unsentQoS0MessagesAreBounded() async throws {
        try await withRig { rig in
            let limit = 50
            let pub = try await rig.connectedClient("slow-link") { c in c.outboundQoS0Limit = limit }
            // A frozen broker reads nothing: once the socket buffers are full, libmosquitto
            // would queue every reading without bound.
            rig.broker.pause()
            let payload = String(repeating: "r", count: 16_384)
            var refused = 0, sent = 0
            for i in 0..<4000 {
                do {
                    try pub.publish(MQTTMessage(topic: "readings/\(i)", string: payload, qos: .atMostOnce))
                    sent += 1
                } catch let e as MQTTError {
                    #expect(e == .outboundQueueFull(limit: limit))
                    refused += 1
                }
            }
            // 4000 × 16 KB is far more than loopback socket buffers hold.
            #expect(refused > 0, "sent \(sent) without refusal")
            #expect(pub.publishFailures == refused)
            rig.broker.resume()
            // Written out once the broker reads again: room again.
            try await eventually("the QoS 0 backlog to drain") {
                (try? pub.publish(MQTTMessage(topic: "readings/after", string: "x", qos: .atMostOnce))) != nil
            }
        }
    }
}
