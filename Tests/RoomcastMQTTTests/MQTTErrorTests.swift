import CMosquitto
@testable import RoomcastMQTT
import Foundation
import RoomcastLogging
import Testing

@Suite struct MQTTErrorTests {
    static let ep = "127.0.0.1:1883"

    @Test(arguments: [
        (4, MQTTError.badCredentials(endpoint: ep, username: "agent")),
        (0x86, MQTTError.badCredentials(endpoint: ep, username: "agent")),
        (5, MQTTError.notAuthorized(endpoint: ep, username: "agent")),
        (0x87, MQTTError.notAuthorized(endpoint: ep, username: "agent")),
    ])
    func connackRefusalsForCredentials(code: Int, expected: MQTTError) {
        let e = Mosquitto.connackError(code, endpoint: Self.ep, username: "agent")
        #expect(e == expected)
        #expect(e.isAuthenticationFailure)
        #expect(e.isPermanent)
    }

    @Test(arguments: [1, 2, 3, 0x84, 0x85, 0x88, 0x89, 0x8A, 0x97])
    func otherRefusalsCarryTheirCode(code: Int) {
        guard case .brokerRefused(_, let c, let reason) = Mosquitto.connackError(code, endpoint: Self.ep, username: nil) else {
            Issue.record("code \(code) not mapped to brokerRefused")
            return
        }
        #expect(c == code)
        #expect(!reason.isEmpty)
    }

    @Test func messagesSayWhatToDo() {
        #expect(MQTTError.badCredentials(endpoint: Self.ep, username: "agent").description
            .contains("bad user name or password for user \"agent\""))
        #expect(MQTTError.connectionRefused(endpoint: Self.ep).description.contains("is mosquitto running"))
        #expect(MQTTError.tlsHandshakeFailed(endpoint: Self.ep, detail: "certificate verify failed").description
            .contains("CA file"))
        // OpenSSL says "certificate verify failed" for an expired certificate too, and a Pi without
        // a clock battery checks certificates against 1970 until NTP has set its clock.
        #expect(MQTTError.tlsHandshakeFailed(endpoint: Self.ep, detail: "certificate verify failed").description
            .contains("expired or is not yet valid by this machine's clock"))
        #expect(MQTTError.notConnected.description.contains("not sent"))
    }

    /// libmosquitto says EPROTO for any TLS read or write error: on an open session that is the
    /// connection breaking, retried; only during the handshake is it a handshake that failed.
    @Test func aTLSErrorOnAnOpenSessionIsALostConnection() throws {
        let client = try MQTTClient(configuration: .testing(port: 1883, id: "tls-classify"), logger: .silent)
        client.state.withLock { $0.phase = .connected }
        let errnoCode: Int32 = 14  // MOSQ_ERR_ERRNO: the call failed, errno says why
        let open = client.classify(errnoCode, EPROTO, call: "mosquitto_loop")
        guard case .connectionLost = open else { Issue.record("\(open)"); return }
        #expect(!open.isPermanent)
        client.state.withLock { $0.phase = .connecting(since: .now) }
        let handshaking = client.classify(errnoCode, EPROTO, call: "mosquitto_loop")
        guard case .tlsHandshakeFailed = handshaking else { Issue.record("\(handshaking)"); return }
    }

    @Test func transientFailuresAreNotPermanent() {
        #expect(!MQTTError.connectionRefused(endpoint: Self.ep).isPermanent)
        #expect(!MQTTError.connectTimedOut(endpoint: Self.ep, seconds: 1).isPermanent)
        #expect(!MQTTError.connectionLost(endpoint: Self.ep, detail: "x").isPermanent)
    }

    /// A publish past the broker's maximum packet size says how large it was; a subscribe past
    /// it has no payload to speak of, and says what libmosquitto says.
    @Test func anOversizedPacketSaysItsSize() {
        let oversize = Int32(MOSQ_ERR_OVERSIZE_PACKET.rawValue)
        let publish = Mosquitto.error(oversize, call: "mosquitto_publish", errnoValue: 0, endpoint: Self.ep, host: "127.0.0.1",
                                      topic: "homeassistant/device/x/config", payloadBytes: 70_000)
        #expect(publish == .payloadTooLarge(topic: "homeassistant/device/x/config", bytes: 70_000))
        #expect(publish.description.contains("70000 bytes") && publish.description.contains("maximum packet size"))
        let subscribe = Mosquitto.error(oversize, call: "mosquitto_subscribe", errnoValue: 0, endpoint: Self.ep, host: "127.0.0.1",
                                        topic: "a/#")
        guard case .library(call: "mosquitto_subscribe", _, _) = subscribe else { Issue.record("\(subscribe)"); return }
        #expect(!subscribe.description.contains("-1"))
    }
}
