import Foundation
import Testing
@testable import Shared

/// `MessageLogLine.encode(into:)` replaced an encoder built on `JSONSerialization` (is the payload
/// JSON?), a regular expression (trailing zeros of the timestamp) and `String(format:)`. These tests
/// hold the new one to the old one's output byte for byte, and the quick JSON check to never
/// vouch for a payload `JSONSerialization` refuses.
@Suite struct MessageLogLineEncodingTests {
    /// The encoder as it was before it was made allocation-light (kept here as the reference).
    static func legacyEncoded(_ line: MessageLogLine) -> String {
        let payload = line.payload
        let payloadText: String
        if let first = payload.first(where: { $0 != 0x20 }), first == UInt8(ascii: "{") || first == UInt8(ascii: "["),
           (try? JSONSerialization.jsonObject(with: Data(payload))) != nil {
            payloadText = String(decoding: payload, as: UTF8.self)
        } else {
            payloadText = legacyJSONString(String(decoding: payload, as: UTF8.self))
        }
        let t = line.ts
        let ms = (t * 1000).rounded()
        let tsText: String
        if ms.magnitude >= 9e18 {
            tsText = "\(t)"
        } else {
            let n = Int64(ms)
            let whole = n / 1000
            let frac = (n % 1000).magnitude
            let sign = n < 0 && whole == 0 ? "-" : ""
            tsText = frac == 0 ? "\(whole)" : "\(sign)\(whole)." + String(String(frac + 1000).dropFirst())
                .replacingOccurrences(of: "0+$", with: "", options: .regularExpression)
        }
        return "{\"payload\":\(payloadText),\"retain\":\(line.retain),\"topic\":\(legacyJSONString(line.topic)),\"ts\":\(tsText)}"
    }

    static func legacyJSONString(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
            }
        }
        return out + "\""
    }

    static let payloads: [String] = [
        #"{"a":1,"b":"c/d"}"#, "online", "", "   ", "  {\"x\":[1,2.5,-3e-05,true,false,null]}", "[]", "{}", "[1,]",
        #"{"a":1,}"#, #"{"a" 1}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#, #"{"a":-}"#, #"{"a":1e}"#, #"{"a":1E+2}"#,
        #"{"a":"\u00e9\n\t\"\\\/\b\f"}"#, #"{"a":"\ud83d\ude00"}"#, #"{"a":"\ud800"}"#, #"{"a":"\x"}"#,
        "{\"a\":\"tab\there\"}", "{\"k\u{e9}\":\"K\u{fc}che \u{1F600}\"}", #"{"a":1}{"b":2}"#, #"{"a":1} "#, "{\"a\":1}\n",
        #"{"a":1,"a":2}"#, #"{"a":123456789012345678901234567890}"#, #"{"a":1e400}"#, #"{"a":1e-400}"#, #"{"a":18446744073709551615}"#,
        #"[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]"#, String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
        #"{"a":tru}"#, #"{"a":nul}"#, #"{"a":true"#, "{\"a\":\"unterminated}", #"{"a":[1 2]}"#, "\t{\"a\":1}",
        "{\"a\":\"ctl\u{1}\"}", "line\nbreak \u{7} bell \"quoted\" back\\slash",
    ]

    static let timestamps: [Double] = [
        1_767_225_600, 1_767_225_600.001, 1_767_225_600.01, 1_767_225_600.1, 1_767_225_600.12, 1_767_225_600.123,
        1_767_225_600.1004, 1_767_225_600.9996, 0, -0.5, -1.25, -0.001, 5, 1e300, 1.7e29, Double.greatestFiniteMagnitude,
    ]

    @Test(arguments: payloads)
    func payloadsEncodeAsBefore(_ payload: String) {
        for (ts, retain) in [(1_767_225_600.123, false), (5.0, true)] {
            let line = MessageLogLine(ts: ts, topic: "roomcast/nodes/a/beacons/ibeacon:x-1-2", payload: Array(payload.utf8),
                                      retain: retain)
            #expect(line.encoded() == Self.legacyEncoded(line))
        }
    }

    @Test(arguments: timestamps)
    func timestampsEncodeAsBefore(_ ts: Double) {
        let line = MessageLogLine(ts: ts, topic: "t", payload: Array("offline".utf8))
        #expect(line.encoded() == Self.legacyEncoded(line))
    }

    @Test func invalidUTF8AndOddTopicsEncodeAsBefore() {
        let lines = [
            MessageLogLine(ts: 1, topic: "t", payload: [0x6F, 0xFF, 0xFE, 0x6B]),
            MessageLogLine(ts: 1, topic: "t", payload: [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x22, 0x7D]),  // {"a":"<C3>"}
            MessageLogLine(ts: 1, topic: "with \"quote\"\n\u{1F}and k\u{fc}che", payload: []),
        ]
        for line in lines { #expect(line.encoded() == Self.legacyEncoded(line)) }
    }

    @Test func encodeIntoAppends() {
        let line = MessageLogLine(ts: 2.5, topic: "t", payload: Array("x".utf8), retain: true)
        var out = Array("prefix".utf8)
        line.encode(into: &out)
        #expect(String(decoding: out, as: UTF8.self) == "prefix" + line.encoded())
    }

    /// Random single-byte edits of valid payloads: whenever the quick check says "valid",
    /// `JSONSerialization` must agree; and it must accept the agent's own payloads.
    @Test func quickCheckNeverVouchesForWhatFoundationRefuses() throws {
        var rng = SeededRandom(seed: 0x5EED)
        let reading = BeaconReading(id: BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")!, node: "kitchen-pi",
                                    ts: 1_767_225_600.123, seq: 42, rssi: -61, rssiFiltered: -60.4, power: -59, distance: 1.37,
                                    proximity: .near, kind: .iBeacon, mac: "c6:55:44:33:00:01")
        let seeds: [[UInt8]] = [reading.fastJSON(), try WireFormat.encode(reading)] + Self.payloads.map { Array($0.utf8) }
        #expect(JSONSyntax.isCertainlyValid(seeds[0]))
        #expect(JSONSyntax.isCertainlyValid(seeds[1]))
        let alphabet = Array(#"{}[]",:.-+eE0123456789tfnul\ ab"#.utf8) + [0x00, 0x0A, 0x1F, 0x7F, 0x80, 0xC3, 0xED, 0xFF]
        var vouched = 0
        for _ in 0..<3000 {
            var bytes = seeds[Int.random(in: 0..<seeds.count, using: &rng)]
            guard !bytes.isEmpty else { continue }
            let edits = Int.random(in: 1...3, using: &rng)
            for _ in 0..<edits {
                let i = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0: bytes[i] = alphabet[Int.random(in: 0..<alphabet.count, using: &rng)]
                case 1: bytes.remove(at: i)
                default: bytes.insert(alphabet[Int.random(in: 0..<alphabet.count, using: &rng)], at: i)
                }
                if bytes.isEmpty { break }
            }
            if JSONSyntax.isCertainlyValid(bytes) {
                vouched += 1
                #expect((try? JSONSerialization.jsonObject(with: Data(bytes))) != nil, "\(String(decoding: bytes, as: UTF8.self))")
            }
            let line = MessageLogLine(ts: 1, topic: "t", payload: bytes)
            #expect(line.encoded() == Self.legacyEncoded(line))
        }
        #expect(vouched > 100)
    }
    /// A payload an encoder of Roomcast's vouches for skips the syntax check but embeds as before:
    /// JSON documents as JSON, anything else (a JSON string, text) as a string.
    @Test(arguments: [#"{"a":1}"#, #"  [1,2]"#, #""text""#, "42", "online", ""])
    func encodedJSONPayloadsEncodeAsBefore(_ payload: String) throws {
        let message = OutboundMessage(topic: "t/1", encodedJSON: Array(payload.utf8), retain: true)
        #expect(message.payloadIsEncodedJSON)
        #expect(message == OutboundMessage(topic: "t/1", payload: Array(payload.utf8), retain: true))
        let line = MessageLogLine(ts: 1.5, message: message)
        var vouched: [UInt8] = []
        line.encode(into: &vouched, payloadIsEncodedJSON: true)
        #expect(String(decoding: vouched, as: UTF8.self) == line.encoded())
        #expect(line.encoded() == Self.legacyEncoded(line))
    }

    @Test func wireFormatMessagesAreVouchedFor() throws {
        let message = try OutboundMessage(topic: "t/2", json: ["b": 2, "a": 1])
        #expect(message.payloadIsEncodedJSON)
        #expect(!OutboundMessage(topic: "t/2", text: "online").payloadIsEncodedJSON)
    }
}
