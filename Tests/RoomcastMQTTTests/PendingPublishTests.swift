@testable import RoomcastMQTT
import Testing

/// The client's book of publishes awaiting confirmation, which `flush` waits on.
struct PendingPublishTests {
    /// A QoS 0 publish handed to libmosquitto just before the connection dropped, and recorded
    /// just after the loop thread forgot what the dropped connection left unconfirmed, is never
    /// confirmed: recorded, it made every later `flush` wait out its whole timeout.
    @Test func aQoS0PublishRecordedAfterItsConnectionWasLostIsNotAwaited() {
        var state = MQTTClient.State(subscriptions: [])
        let sentOn = state.connection
        _ = state.forgetUnconfirmableAfterDisconnect()
        _ = state.recordPublished(mid: 7, qos: .atMostOnce, topic: "r/kitchen", connection: sentOn)
        #expect(state.pendingPublishes.isEmpty)
        // A QoS 1 publish is re-sent by libmosquitto on the next connection, so it is still awaited.
        _ = state.recordPublished(mid: 8, qos: .atLeastOnce, topic: "r/kitchen", connection: sentOn)
        #expect(state.pendingPublishes[8] == .atLeastOnce)
        #expect(state.pendingQoS1 == 1)
        // And a QoS 0 publish on the current connection is awaited as before.
        _ = state.recordPublished(mid: 9, qos: .atMostOnce, topic: "r/kitchen", connection: state.connection)
        #expect(state.pendingPublishes[9] == .atMostOnce)
    }

    /// The broker's PUBACK came before the publisher recorded its message (the loop thread wrote
    /// it and read the answer in between), and then the connection dropped: the early
    /// confirmation was forgotten with the connection, so the message, once recorded, was
    /// awaited for good and every `flush` waited out its timeout.
    @Test func aConfirmationThatCameFirstOutlivesTheConnection() {
        var state = MQTTClient.State(subscriptions: [])
        let sentOn = state.connection
        _ = state.confirmPublished(mid: 11)
        _ = state.forgetUnconfirmableAfterDisconnect()
        _ = state.recordPublished(mid: 11, qos: .atLeastOnce, topic: "r/kitchen", connection: sentOn)
        #expect(state.pendingPublishes.isEmpty && state.pendingQoS1 == 0)
    }
}
