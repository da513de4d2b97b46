import Testing
@testable import Shared
@testable import RoomcastAgent
import RoomcastHCI
@testable import RoomcastConfig
@testable import RoomcastMQTT
@testable import RoomcastYAML

@Suite struct BrokerURLTests {
    @Test(arguments: [
        ("mqtt://localhost", false, "localhost", 1883, nil, nil),
        ("mqtts://broker.example.net", true, "broker.example.net", 8883, nil, nil),
        ("mqtt://10.0.0.2:1884/", false, "10.0.0.2", 1884, nil, nil),
        ("mqtt://[::1]", false, "::1", 1883, nil, nil),
        ("mqtts://[fe80::1%eth0]:9000", true, "fe80::1%eth0", 9000, nil, nil),
        ("mqtt://alice@h", false, "h", 1883, "alice", nil),
        ("MQTT://alice:p%40ss:w@h:1", false, "h", 1, "alice", "p@ss:w"),
    ] as [(String, Bool, String, Int, String?, String?)])
    func parsesValidURLs(_ text: String, _ tls: Bool, _ host: String, _ port: Int, _ user: String?, _ password: String?) throws {
        let url = try BrokerURL(parsing: text)
        #expect(url == BrokerURL(isTLS: tls, host: host, port: port, username: user, password: password))
    }

    @Test(arguments: [
        ("localhost:1883", "missing 'mqtt://' or 'mqtts://'"),
        ("http://h", "unsupported scheme 'http'"),
        ("mqtt://", "missing host"),
        ("mqtt://h:0", "port '0' is not a number from 1 to 65535"),
        ("mqtt://h:70000", "port '70000' is not a number from 1 to 65535"),
        ("mqtt://h:12a", "the port is not a number from 1 to 65535"),
        ("mqtt://::1", "IPv6 addresses must be written in brackets, like [::1]"),
        ("mqtt://[::1", "unclosed '[' around the IPv6 address"),
        ("mqtt://h/topic", "unexpected path, query or fragment"),
        ("mqtt://bad host", "host 'bad host' contains characters a host name cannot have"),
        ("mqtt://:pw@h", "empty user name"),
    ])
    func rejectsInvalidURLsClearly(_ text: String, _ message: String) {
        do {
            _ = try BrokerURL(parsing: text)
            Issue.record("parsed \(text)")
        } catch {
            #expect(error.message.hasPrefix(message), "\(error.message)")
            #expect(error.message.hasSuffix("expected mqtt[s]://[user[:password]@]host[:port]"))
        }
    }

    @Test func passwordsNeverShow() throws {
        let url = try BrokerURL(parsing: "mqtts://bob:s3cret@[::1]:8884")
        #expect(url.redacted == "mqtts://bob:***@[::1]:8884")
        #expect("\(url)" == url.redacted)
        do {
            _ = try BrokerURL(parsing: "mqtt://bob:s3cret@h:99999")
        } catch {
            #expect(!error.message.contains("s3cret"))
        }
    }

    /// Every URL that fails to parse with a password in it: the error shows the rest, never the
    /// password (a URL without a scheme, or without a host after the user, echoed it).
    @Test(arguments: ["alice:s3cret@broker.lan:1883", "mqtt://alice:s3cret", "mqtt://alice:s3cret@", "mqtt://alice:s3cret@h:99999",
                      "ftp://alice:s3cret@broker.lan", "alice:s3cret@", "mqtt://alice:s3cret@broker.lan/path"])
    func aURLThatDoesNotParseNeverShowsItsPassword(text: String) {
        #expect {
            _ = try BrokerURL(parsing: text)
        } throws: { error in
            let message = (error as? ConfigValueError)?.message ?? "\(error)"
            return !message.contains("s3cret") && message.contains("alice")
        }
    }

    @Test func aBadPortIsStillNamed() {
        #expect {
            _ = try BrokerURL(parsing: "mqtt://broker.lan:99999")
        } throws: { error in
            (error as? ConfigValueError)?.message.contains("port '99999'") == true
        }
    }

    @Test func passwordPrecedence() throws {
        var mqtt = MQTTConfig(broker: try BrokerURL(parsing: "mqtt://u:url-pw@h"))
        #expect(try mqtt.credentials(environment: [:]) == .init(username: "u", password: "url-pw"))
        mqtt.password = "file-pw"
        #expect(try mqtt.credentials(environment: [:]).password == "file-pw")
        #expect(try mqtt.credentials(environment: ["ROOMCAST_MQTT_PASSWORD": "env-pw"]).password == "env-pw")
        // `ROOMCAST_MQTT_PASSWORD=` left empty in an env file is no password.
        #expect(try mqtt.credentials(environment: ["ROOMCAST_MQTT_PASSWORD": ""]).password == "file-pw")
        mqtt.passwordEnv = "MY_PW"
        mqtt.password = nil
        mqtt.username = "other"
        #expect(try mqtt.credentials(environment: ["ROOMCAST_MQTT_PASSWORD": "env-pw", "MY_PW": "named"])
            == .init(username: "other", password: "named"))
        #expect(throws: ConfigError.self) { try mqtt.credentials(environment: [:]) }
        #expect(!"\(try mqtt.credentials(environment: ["MY_PW": "named"]))".contains("named"))
    }

    /// A password with no user name to go with it is a config error naming `mqtt.username` and
    /// where the password came from; it reached the client, whose error named `mqtt.password`,
    /// a key that was never set when the password came from the environment.
    @Test func aPasswordWithoutAUserNameSaysWhereItCameFrom() throws {
        var mqtt = MQTTConfig(broker: try BrokerURL(parsing: "mqtt://h"))
        #expect(try mqtt.credentials(environment: [:]) == .init(username: nil, password: nil))
        #expect {
            _ = try mqtt.credentials(environment: ["ROOMCAST_MQTT_PASSWORD": "env-pw"])
        } throws: { error in
            let text = "\(error)"
            return text.contains("mqtt.username") && text.contains("ROOMCAST_MQTT_PASSWORD") && !text.contains("env-pw")
        }
        mqtt.password = "file-pw"
        #expect {
            _ = try mqtt.clientConfiguration(clientID: "a", will: nil)
        } throws: { error in
            let text = "\(error)"
            return text.contains("mqtt.username") && text.contains("mqtt.password") && !text.contains("file-pw")
        }
        mqtt.username = "u"
        #expect(try mqtt.clientConfiguration(clientID: "a", will: nil).username == "u")
    }

    /// TLS files that cannot be read are named as the config names them (`mqtt.tls.ca_file`),
    /// not as the client library's fields.
    @Test func unreadableTLSFilesAreNamedByTheirConfigKeys() throws {
        var mqtt = MQTTConfig(broker: try BrokerURL(parsing: "mqtts://h"))
        mqtt.tls = MQTTConfig.TLSConfig(caFile: "/nonexistent/ca.pem", certFile: "/nonexistent/c.pem",
                                        keyFile: "/nonexistent/c.key", insecure: false)
        #expect {
            _ = try mqtt.clientConfiguration(clientID: "a", will: nil)
        } throws: { error in
            let text = "\(error)"
            return ["mqtt.tls.ca_file", "mqtt.tls.cert_file", "mqtt.tls.key_file"].allSatisfy(text.contains) && !text.contains("caFile")
        }
    }

    @Test func tlsSettingsNeedAnMqttsBroker() {
        let yaml = "node: n\nmqtt:\n  broker: mqtt://h\n  tls: {cert_file: c.pem}\n"
        do {
            _ = try ConfigLoader.parse(AgentConfig.self, yaml: yaml)
            Issue.record("loaded")
        } catch {
            #expect(error.messages == ["mqtt.tls: TLS settings given but the broker URL is mqtt://; use mqtts://",
                                       "mqtt.tls.key_file: cert_file and key_file must be given together"])
        }
    }

    @Test(arguments: [("hci", RadioSourceSpec.hci(device: nil)), ("hci:hci0", .hci(device: "hci0")),
                      ("h4:/dev/ttyAMA0", .h4(path: "/dev/ttyAMA0", baud: nil)), ("h4:/dev/ttyAMA0@3000000", .h4(path: "/dev/ttyAMA0", baud: 3_000_000)),
                      ("btsnoop:/tmp/a.btsnoop", .btsnoop(path: "/tmp/a.btsnoop", speed: .realtime)),
                      ("btsnoop:/tmp/a.btsnoop@max", .btsnoop(path: "/tmp/a.btsnoop", speed: .max)),
                      ("btsnoop:/srv/u@host/a.btsnoop", .btsnoop(path: "/srv/u@host/a.btsnoop", speed: .realtime)),
                      ("btsnoop:/tmp/cap@2@realtime", .btsnoop(path: "/tmp/cap@2", speed: .realtime))])
    func sourcesRoundTrip(_ text: String, _ radio: RadioSourceSpec) throws {
        let source = SourceSpec(radio)
        #expect(try SourceSpec(parsing: text) == source)
        #expect(source.description == text)
    }

    @Test(arguments: ["", "usb:1", "hci:", "hci:eth0", "hci:hci", "hci:hci-1", "hci:hci65536", "btsnoop:", "h4:/dev/ttyAMA0@12345",
                      "btsnoop:/x@fast2", "btsnoop:/x@0"])
    func badSourcesAreRejected(_ text: String) {
        #expect(throws: ConfigValueError.self) { try SourceSpec(parsing: text) }
    }

    /// A `@baud` or `@speed` the radio would refuse at start is a config error with its path.
    @Test func aSourcesSuffixIsCheckedWithTheConfig() throws {
        let error = try #require(throws: ConfigError.self) {
            try ConfigLoader.parse(AgentConfig.self, yaml: "node: n\nsource: h4:/dev/ttyAMA0@12345\n")
        }
        #expect(error.messages.count == 1 && error.messages[0].hasPrefix("source: ") && error.messages[0].contains("12345 baud"),
                "\(error.messages)")
    }
}
