import Foundation
import Shared

/// Readings encoded once as MQTT PUBLISH packets, sent round-robin with their
/// `ts` and `seq` patched in place: every reading carries the current time and a
/// sequence number that grows (fusion drops a repeated `seq` as a duplicate, which
/// would make a benchmark that resends identical payloads measure nothing).
struct PreEncodedLoad {
    private var packets: [[UInt8]] = []
    /// Offsets of the 14-byte `ts` and 10-byte `seq` values inside each packet.
    private var slots: [(ts: Int, seq: Int)] = []
    private var next = 0

    static let tsPlaceholder = 1_111_111_111.125
    static let seqPlaceholder: UInt64 = 1_000_000_000

    var count: Int { packets.count }

    /// Adds a reading; its `ts` and `seq` are replaced when sent.
    mutating func append(topic: String, reading: BeaconReading) throws {
        var r = reading
        r.ts = Self.tsPlaceholder
        r.seq = Self.seqPlaceholder
        let packet = RawMQTTPublisher.publishPacket(topic: topic, payload: r.fastJSON())
        guard let ts = Self.find(Array("\"ts\":1111111111.125".utf8), in: packet),
              let seq = Self.find(Array("\"seq\":1000000000".utf8), in: packet) else {
            throw AggregatorBenchmark.BenchError.setup("pre-encoded reading lacks its ts/seq placeholders")
        }
        packets.append(packet)
        slots.append((ts + 5, seq + 6))
    }

    /// Appends the next `n` packets (cycling) to `buffer`, stamped with `now` and `seq`.
    mutating func emit(_ n: Int, into buffer: inout [UInt8], now: Double, seq: UInt64) {
        let ts = Self.digits(now), sq = Self.seqDigits(seq)
        for _ in 0..<n {
            let base = buffer.count
            buffer.append(contentsOf: packets[next])
            let (t, s) = slots[next]
            for k in 0..<14 { buffer[base + t + k] = ts[k] }
            for k in 0..<10 { buffer[base + s + k] = sq[k] }
            next = (next + 1) % packets.count
        }
    }

    /// Unix seconds as exactly 14 bytes, "dddddddddd.ddd" (valid until the year 2286).
    static func digits(_ t: Double) -> [UInt8] {
        let ms = UInt64((t * 1000).rounded())
        var out = [UInt8](repeating: UInt8(ascii: "0"), count: 14)
        var s = ms / 1000, f = ms % 1000
        for k in stride(from: 13, through: 11, by: -1) { out[k] = UInt8(ascii: "0") + UInt8(f % 10); f /= 10 }
        out[10] = UInt8(ascii: ".")
        for k in stride(from: 9, through: 0, by: -1) { out[k] = UInt8(ascii: "0") + UInt8(s % 10); s /= 10 }
        return out
    }

    /// A sequence number as exactly 10 digits (1_000_000_000 and up).
    static func seqDigits(_ seq: UInt64) -> [UInt8] {
        var out = [UInt8](repeating: UInt8(ascii: "0"), count: 10)
        var s = max(seqPlaceholder, min(seq, 9_999_999_999))
        for k in stride(from: 9, through: 0, by: -1) { out[k] = UInt8(ascii: "0") + UInt8(s % 10); s /= 10 }
        return out
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        return nil
    }
}
