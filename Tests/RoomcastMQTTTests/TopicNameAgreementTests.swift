import CMosquitto
import Shared
import Testing

/// Names of rooms, nodes and beacons become topic levels: every name `TopicName` accepts must
/// be a topic libmosquitto publishes to, or each publish on it fails (`MALFORMED_UTF8`) after the
/// name was taken at start or from the network.
@Suite struct TopicNameAgreementTests {
    @Test func everyNameTopicNameAcceptsIsATopicLibmosquittoTakes() {
        var accepted = 0
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }  // surrogates
            let name = "a" + String(Character(scalar))
            guard TopicName.isValid(name) else { continue }
            accepted += 1
            let topic = "roomcast/rooms/" + name
            let utf8 = Array(topic.utf8)
            let valid = mosquitto_validate_utf8(topic, Int32(utf8.count)) == 0 && mosquitto_pub_topic_check(topic) == 0
            if !valid {
                Issue.record("U+\(String(value, radix: 16, uppercase: true)) is accepted as a name but libmosquitto refuses it")
                return
            }
        }
        #expect(accepted > 1_000_000)
    }
}
