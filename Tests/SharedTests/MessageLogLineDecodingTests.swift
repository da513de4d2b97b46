import Foundation
import Testing
@testable import Shared

/// `MessageLogLine.decode` reads plain lines without Foundation (`decodePlain`) and leaves every
/// other line to `JSONSerialization` (`decodeWithFoundation`). These tests hold the plain reader
/// to the Foundation one: where it answers, the line means the same (time, topic, retain, and a
/// payload equal as text, or as JSON for an embedded document, which Foundation writes again
/// with sorted keys); and it does answer for the lines the edge agent writes, or the speed-up
/// would never apply.
@Suite struct MessageLogLineDecodingTests {
    static let lines: [String] = [
        #"{"payload":{"rssi":-70,"id":"ibeacon:x","b":[1,2.5,-3e-05,true,false,null]},"retain":false,"topic":"roomcast/readings/n1/x","ts":1567783107.156}"#,
        #"{"payload":"online","retain":true,"topic":"roomcast/nodes/n1/status","ts":1}"#,
        #"{"payload":null,"retain":false,"topic":"t","ts":-0.5}"#,
        #"{"payload":"","retain":false,"topic":"t","ts":0}"#,
        #"{"payload":[],"retain":false,"topic":"t","ts":2}"#,
        #" { "ts" : 3 , "topic" : "t" , "payload" : { "z" : 1 , "a" : 2 } , "retain" : true } "#,
        #"{"topic":"t","ts":4}"#,
        #"{"topic":"t","ts":5,"extra":{"nested":[1,{"k":"v"}]},"payload":"p"}"#,
        #"{"topic":"t","ts":1e3,"payload":"x"}"#,
        #"{"topic":"t","ts":1.5E-2,"payload":"x"}"#,
        #"{"topic":"K\#u{fc}che/\#u{1F600}","ts":6,"payload":"gr\#u{fc}n"}"#,
        // Many members, their keys told apart by a hash (each was compared with every earlier one).
        #"{"topic":"t","ts":21,"# + (0..<2000).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}",
        // Left to Foundation: escapes, repeated keys, odd types, and what is not JSON at all.
        #"{"topic":"a\/b","ts":7,"payload":"x"}"#,
        #"{"topic":"t","ts":8,"payload":"line\nbreak"}"#,
        #"{"top\u0069c":"t","ts":9}"#,
        #"{"topic":"t","ts":10,"ts":11}"#,
        #"{"topic":"t","ts":12,"retain":1}"#,
        #"{"topic":"t","ts":12,"retain":"true"}"#,
        #"{"topic":"t","ts":13,"payload":42}"#,
        #"{"topic":"t","ts":14,"payload":true}"#,
        #"{"topic":"t","ts":"15"}"#,
        #"{"topic":16,"ts":16}"#,
        #"{"ts":17}"#,
        #"{"topic":"t"}"#,
        #"{"topic":"t","ts":1e400}"#,
        #"{"topic":"t","ts":18,}"#,
        #"{"topic":"t","ts":19}{"#,
        #"[{"topic":"t","ts":20}]"#,
        #""text""#, "", "{", "null",
    ]

    static func sameMeaning(_ a: MessageLogLine, _ b: MessageLogLine) -> Bool {
        guard a.ts == b.ts, a.topic == b.topic, a.retain == b.retain else { return false }
        if a.payload == b.payload { return true }
        guard let x = try? JSONSerialization.jsonObject(with: Data(a.payload)) as? NSObject,
              let y = try? JSONSerialization.jsonObject(with: Data(b.payload)) as? NSObject else { return false }
        return x.isEqual(y)
    }

    @Test(arguments: lines)
    func plainReadingMeansWhatFoundationReads(_ line: String) {
        let foundation = Result { () throws(WireFormatError) in try MessageLogLine.decodeWithFoundation(line) }
        guard let plain = MessageLogLine.decodePlain(Array(line.utf8)) else {
            // Left to Foundation: `decode` is exactly the Foundation reading, errors included.
            let decoded = Result { () throws(WireFormatError) in try MessageLogLine.decode(line) }
            #expect("\(decoded)" == "\(foundation)", "\(line)")
            return
        }
        guard case .success(let reference) = foundation else {
            Issue.record("plain reader accepted a line Foundation refuses: \(line) (\(foundation))")
            return
        }
        #expect(Self.sameMeaning(plain, reference), "\(line): \(plain) vs \(reference)")
    }

    @Test func theAgentsOwnLinesAreReadPlainAndComeBackUnchanged() throws {
        let reading = #"{"accuracy":2.51,"id":"ibeacon:6f0d8e5e-35b1-5877-b239-c99c8005ab0b-1-1","node":"sensor10","proximity":"near","rssi":-70.4,"seq":12,"ts":1567783109.5}"#
        let lines = [
            MessageLogLine(ts: 1567783109.5, topic: "roomcast/readings/sensor10/ibeacon:6f0d8e5e-35b1-5877-b239-c99c8005ab0b-1-1",
                           payload: Array(reading.utf8)),
            MessageLogLine(ts: 1567783107.156, topic: "roomcast/nodes/sensor10/status", payload: Array("online".utf8), retain: true),
        ]
        for line in lines {
            let text = line.encoded()
            let plain = try #require(MessageLogLine.decodePlain(Array(text.utf8)), "\(text)")
            #expect(plain == line)
            #expect(try MessageLogLine.decode(text) == line)
        }
    }

    @Test func plainLinesTakeNoFoundationRoundTrip() throws {
        // An embedded document is kept as written (key order and number forms), where Foundation
        // would sort its keys and write its numbers again.
        let line = #"{"payload":{"z":1.50,"a":2},"topic":"t","ts":1}"#
        #expect(try MessageLogLine.decode(line).payload == Array(#"{"z":1.50,"a":2}"#.utf8))
    }

    /// A retain flag written as a string is an error on its line, not "not retained".
    @Test func aRetainFlagThatIsNoBooleanIsAnError() {
        #expect(throws: WireFormatError.invalid("retain: not true or false")) {
            try MessageLogLine.decode(#"{"payload":{"room":"kitchen"},"retain":"true","topic":"roomcast/aggregator/learn","ts":1}"#)
        }
    }
}
