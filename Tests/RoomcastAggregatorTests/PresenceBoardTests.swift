import Shared
import Testing
@testable import RoomcastAggregator

/// `aggregator watch` renders whatever retained presence the broker holds, so numbers far
/// outside what the aggregator publishes must render, not trap.
@Suite struct PresenceBoardTests {
    static let cat = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23")!

    func board(confidence: String, since: String) -> PresenceBoard {
        var board = PresenceBoard(limit: 100)
        let payload = #"{"confidence":\#(confidence),"evidence":[],"id":"\#(Self.cat.rawValue)","name":"Cat","room":"kitchen","since":\#(since),"ts":100,"v":1}"#
        board.take(topic: Topics().presence(Self.cat), payload: Array(payload.utf8), topics: Topics())
        return board
    }

    @Test func aRealDecisionShowsItsConfidenceAndAge() {
        #expect(board(confidence: "0.874", since: "40").render(now: 100).contains("Cat (87%, 1m)"))
    }

    @Test(arguments: [("1e300", "-1e300", "Cat (100%, 277777777777h)"), ("-1e300", "1e300", "Cat (0%, 0s)"),
                      ("1.5", "99.5", "Cat (100%, 0s)")])
    func numbersBeyondRangeAreClampedNotTrapped(_ confidence: String, _ since: String, _ shown: String) {
        let text = board(confidence: confidence, since: since).render(now: 100)
        #expect(text.contains(shown), "\(text)")
    }

    /// A retained presence anyone on the broker wrote: its name and room reach the terminal
    /// without an escape sequence or a line break.
    @Test func controlCharactersNeverReachTheTerminal() {
        var board = PresenceBoard(limit: 100)
        let payload = #"{"confidence":0.9,"evidence":[],"id":"\#(Self.cat.rawValue)","name":"\u001b]0;pwned\u0007\u001b[2JCat\nAWAY: x","room":"kit\u009bchen","since":40,"ts":100,"v":1}"#
        board.take(topic: Topics().presence(Self.cat), payload: Array(payload.utf8), topics: Topics())
        let text = board.render(now: 100)
        #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x9B }, "\(text.debugDescription)")
        #expect(text.split(separator: "\n").count == 3, "a header, the room and the away line: \(text.debugDescription)")
        #expect(text.contains("?]0;pwned??[2JCat?AWAY: x (90%, 1m)"))
    }

    /// Any client may write presence topics: the board keeps as many beacons and rooms as the
    /// aggregator tracks, says how many messages past that it left out, and still follows the
    /// beacons it shows.
    @Test func theBoardIsBounded() {
        var board = PresenceBoard(limit: 2)
        func presence(_ minor: Int, _ room: String) -> (String, [UInt8]) {
            let id = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-\(minor)")!
            let payload = #"{"confidence":0.9,"evidence":[],"id":"\#(id.rawValue)","name":"B\#(minor)","room":"\#(room)","since":40,"ts":100,"v":1}"#
            return (Topics().presence(id), Array(payload.utf8))
        }
        for minor in 1...5 {
            let (topic, payload) = presence(minor, "kitchen")
            board.take(topic: topic, payload: payload, topics: Topics())
        }
        let (topic, payload) = presence(2, "hall")
        board.take(topic: topic, payload: payload, topics: Topics())
        let text = board.render(now: 100)
        #expect(text.contains("B1 (90%") && text.contains("hall") && text.contains("B2 (90%"), "\(text)")
        #expect(!text.contains("B3") && text.contains("3 messages of beacons or rooms past the first 2 of each were not shown"), "\(text)")
    }
}
