import Shared
import Testing

/// What an error message may show of text a user typed.
@Suite struct ShownTextTests {
    @Test func aSecretIsNamedAnywhereInTheText() {
        for text in ["ROOMCAST_MQTT_PASSWORD=hunter2", "30 password:hunter2", "token:abc", "key: 0123", "KEY=abc",
                     "ROOMCAST_HTTP_TOKEN=x", "passwd", "client_secret",
                     "apikey=abc", "private_key: x", "pasword:hunter2"] {
            #expect(ShownText.mentionsSecret(text), "\(text)")
        }
        for text in ["kitchen", "keys", "monkey", "mqtt://broker.local:1883", "hci0", "30", "keepalive"] {
            #expect(!ShownText.mentionsSecret(text), "\(text)")
        }
    }

    @Test func aURLsPasswordIsNotShownAndLongTextIsCut() {
        #expect(ShownText.excerpt("mqtt://bob:hunter2@broker:1883") == "mqtt://bob:***@broker:1883")
        #expect(ShownText.excerpt("bob:hunter2@broker") == "bob:***@broker")
        #expect(ShownText.excerpt(String(repeating: "a", count: 100)) == String(repeating: "a", count: 57) + "...")
        #expect(ShownText.argument("--password=x") == "<not shown: it names a secret>")
        #expect(ShownText.argument("kitchen") == "kitchen")
    }
}
