import Foundation
import Shared
import Testing
import RoomcastAgent
import RoomcastAggregator
import RoomcastConfig
import RoomcastYAML

/// Secrets are redacted by their type: every way a value becomes text shows `***`.
@Suite struct SecretTests {
    static let filePassword = "file-secret-9c21e4"
    static let urlPassword = "url-secret-7f3a0b"
    static let envPassword = "env-secret-51d2aa"
    static let phoneKey = "ec0234a357c8ad05341010a60a397d9b"
    static let watchKey = "a1b2c3d4e5f60718293a4b5c6d7e8f90"
    static let httpToken = "http-token-3e8b57"
    static let all = [filePassword, urlPassword, envPassword, phoneKey, watchKey, httpToken]

    static let mqttYAML = """
        mqtt:
          broker: mqtt://kitchen-pi:\(urlPassword)@broker.local:1883
          password: \(filePassword)

        """
    static let agentYAML = mqttYAML + """
        node: kitchen-pi
        irks:
          - name: phone
            key: "\(phoneKey)"
          - name: watch
            key: "\(watchKey)"
            byte_order: lsb_first

        """

    /// Every rendering Swift offers for a value: description, reflection, dump, and the
    /// effective-config line the programs log.
    static func renderings(_ value: some Encodable) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), dumped, ConfigLoader.describe(value), "\(value)"]
    }

    static func expectNoSecret(_ texts: [String], _ what: String) {
        for text in texts {
            for s in all { #expect(!text.lowercased().contains(s), "\(what) shows \(s): \(text.prefix(400))") }
        }
    }

    @Test func aSecretNeverShowsItsValue() throws {
        let s = Secret("hunter2-secret")
        #expect(s.revealed == "hunter2-secret")
        for text in Self.renderings(s) + [s.debugDescription] { #expect(!text.contains("hunter2")) }
        #expect(ConfigLoader.describe(s) == "\"***\"")
        // It reads as a plain string, so config files keep their form.
        let decoded = try JSONDecoder().decode([Secret].self, from: Data(#"["abc"]"#.utf8))
        #expect(decoded == ["abc"])
    }

    @Test func agentConfigRedactsEveryPasswordAndKey() throws {
        let config = try ConfigLoader.parse(AgentConfig.self, yaml: Self.agentYAML)
        // The values are there for the code that needs them...
        #expect(config.irks.map(\.key.revealed) == [Self.phoneKey, Self.watchKey])
        #expect(config.mqtt.password?.revealed == Self.filePassword)
        #expect(config.mqtt.broker.password?.revealed == Self.urlPassword)
        let credentials = try config.mqtt.credentials(environment: ["ROOMCAST_MQTT_PASSWORD": Self.envPassword])
        #expect(credentials.password?.revealed == Self.envPassword)
        // ... and in no rendering.
        Self.expectNoSecret(Self.renderings(config), "AgentConfig")
        Self.expectNoSecret([String(describing: credentials), String(reflecting: credentials)], "Credentials")
        let line = ConfigLoader.describe(config)
        #expect(line.contains(#""password":"***""#) && line.contains(#""key":"***""#), "\(line)")
        #expect(line.contains("mqtt://kitchen-pi:***@broker.local:1883"), "\(line)")
    }

    @Test func aggregatorConfigRedactsPasswords() throws {
        let config = try ConfigLoader.parse(AggregatorConfig.self, yaml: Self.mqttYAML)
        Self.expectNoSecret(Self.renderings(config), "AggregatorConfig")
    }

    @Test func theHTTPTokenIsASecretToo() throws {
        let config = try ConfigLoader.parse(AggregatorConfig.self, yaml: Self.mqttYAML + "http:\n  token: \(Self.httpToken)\n")
        #expect(config.http.resolvedToken(environment: [:]) == Self.httpToken)
        Self.expectNoSecret(Self.renderings(config) + Self.renderings(config.http), "AggregatorConfig.http")
    }

    /// A mistake next to or in a secret makes the loader name the field, never echo the value.
    @Test func configErrorsNameTheFieldButNotTheSecret() throws {
        let bad = """
            node: kitchen-pi
            mqtt:
              broker: mqtt://kitchen-pi:\(Self.urlPassword)@broker.local:99999
              password: [\(Self.filePassword)]
            irks:
              - name: phone
                key: "\(Self.phoneKey.dropLast())"
              - name: watch
                key: "\(Self.watchKey)zz"

            """
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(AgentConfig.self, yaml: bad) }
        let text = error.description
        for path in ["mqtt.broker", "mqtt.password", "irks[0].key", "irks[1].key"] {
            #expect(text.contains(path), "no problem at \(path): \(text)")
        }
        Self.expectNoSecret([text, String(reflecting: error)], "the config error")
    }

    /// Secrets in the wrong place: the broker URL where the mqtt mapping belongs, a bare key
    /// where an IRK mapping belongs, an override into that URL, and the password written where
    /// password_env wants a variable's name. Each message named the path and echoed the value.
    @Test func secretsInTheWrongPlaceAreNotEchoed() throws {
        var texts: [String] = []
        let url = "mqtt://kitchen-pi:\(Self.urlPassword)@broker.local"
        let inPlaceOfMapping = try #require(throws: ConfigError.self) {
            try ConfigLoader.parse(AgentConfig.self, yaml: "node: kitchen-pi\nmqtt: \(url)\nirks: [\"\(Self.phoneKey)\"]\n")
        }
        #expect(inPlaceOfMapping.description.contains("mqtt:") && inPlaceOfMapping.description.contains("irks[0]"),
                "\(inPlaceOfMapping)")
        texts.append(inPlaceOfMapping.description)
        let root = try YAMLReader().parse("node: kitchen-pi\nmqtt: \(url)\n")
        var overrides = Overrides()
        overrides.set("mqtt.broker", to: "mqtt://other", from: "--broker")
        let override = try #require(throws: ConfigError.self) { try overrides.apply(to: root) }
        texts.append(override.description)
        let config = try ConfigLoader.parse(AggregatorConfig.self, yaml: "mqtt:\n  username: alice\n  password_env: \(Self.envPassword)\n")
        let unset = try #require(throws: ConfigError.self) { try config.mqtt.credentials(environment: [:]) }
        #expect(unset.description.contains("mqtt.password_env"))
        texts.append(unset.description)
        Self.expectNoSecret(texts, "the config error")
        // A conventional variable name is still named.
        let named = try ConfigLoader.parse(AggregatorConfig.self, yaml: "mqtt:\n  username: alice\n  password_env: MQTT_PASSWORD\n")
        let message = try #require(throws: ConfigError.self) { try named.mqtt.credentials(environment: [:]) }
        #expect(message.description.contains("'MQTT_PASSWORD'"))
    }

    /// The effective-config line shows a `*_env` key's variable name, not a secret written there
    /// in its place; it is logged before the variable is looked up.
    @Test func theEffectiveConfigShowsNoSecretWrittenAsAVariableName() throws {
        let yaml = "node: kitchen-pi\nmqtt:\n  username: alice\n  password_env: \(Self.envPassword)\n"
        let agent = try ConfigLoader.parse(AgentConfig.self, yaml: yaml)
        let aggregator = try ConfigLoader.parse(AggregatorConfig.self, yaml: "mqtt:\n  password_env: \(Self.envPassword)\n"
                                                + "http:\n  token_env: \(Self.httpToken)\n")
        Self.expectNoSecret([ConfigLoader.describe(agent), ConfigLoader.describe(aggregator)], "the effective config")
        #expect(ConfigLoader.describe(agent).contains(#""password_env":"***""#))
        let conventional = try ConfigLoader.parse(AggregatorConfig.self, yaml: "http:\n  token_env: ROOMCAST_TOKEN\n")
        #expect(ConfigLoader.describe(conventional).contains(#""token_env":"ROOMCAST_TOKEN""#))
    }

    /// `password:hunter2`, with no space after the colon, is one string where the `mqtt`
    /// mapping belongs: the error says so without the string.
    @Test func aSecretsEntryRunTogetherIsNotEchoed() throws {
        for (yaml, path) in [("node: kitchen-pi\nmqtt:\n  password:\(Self.filePassword)\n", "mqtt"),
                             ("node: kitchen-pi\nhttp:\n  token=\(Self.httpToken)\n", "http")] {
            let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(AggregatorConfig.self, yaml: yaml) }
            #expect(error.description.contains("\(path): expected a mapping"), "\(error)")
            Self.expectNoSecret([error.description], "the config error")
        }
    }

    /// Home Assistant's `!secret` is no YAML Roomcast reads: ignored, the tag's argument became the
    /// password. It is an error at its line.
    @Test func aYAMLTagIsAnErrorNotALiteral() throws {
        for yaml in ["mqtt:\n  password: !secret mqtt_pw\n", "mqtt: !include mqtt.yaml\n", "rooms: !list\n  - name: hall\n"] {
            let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(AggregatorConfig.self, yaml: yaml) }
            #expect(error.description.contains("is not supported") && error.description.contains("line "), "\(error)")
        }
        let core = try ConfigLoader.parse(AggregatorConfig.self, yaml: "mqtt:\n  password: !!str 1234\n  keepalive: !!int 60\n")
        #expect(core.mqtt.password?.revealed == "1234" && core.mqtt.keepalive == 60)
    }

    /// A tag, an alias of nothing or a merge key is one problem among the file's others: the
    /// rest of the file is still read, so a typo beside it is reported in the same run.
    @Test func aYAMLFormProblemIsReportedBesideTheOthers() throws {
        let tagged = try #require(throws: ConfigError.self) {
            try ConfigLoader.parse(AggregatorConfig.self, yaml: "mqtt: !include mqtt.yaml\nfusion: {away_timout_s: 5}\n")
        }
        #expect(tagged.messages.count == 2 && tagged.messages[0].hasPrefix("mqtt: the YAML tag '!include' is not supported")
                && tagged.messages[1].hasPrefix("fusion.away_timout_s: unknown key"), "\(tagged.messages)")
        let merged = try #require(throws: ConfigError.self) {
            try ConfigLoader.parse(AggregatorConfig.self, yaml: "mqtt:\n  <<: *nothing\n  keepalive: soon\n")
        }
        #expect(merged.messages.map { String($0.prefix(while: { $0 != ":" })) } == ["mqtt", "mqtt.<<", "mqtt.keepalive"],
                "\(merged.messages)")
        // A required value read as not given is that one problem, not a second "found null".
        let required = try #require(throws: ConfigError.self) { try ConfigLoader.parse(AgentConfig.self, yaml: "node: !hostname\n") }
        #expect(required.messages.count == 1 && required.messages[0].hasPrefix("node: a value starting with '!' is read as a YAML tag"),
                "\(required.messages)")
    }

    /// A secret run together with its key (`password:hunter2` inside `{…}`, one string in YAML)
    /// became an unknown key that printed it; a tag, an alias or an anchor under a key that is
    /// not a secret's by name (misspelt, or an `_env` key a secret was pasted into) was shown.
    @Test func aSecretWrittenWrongIsNeverShown() {
        let cases: [(yaml: String, secret: String)] = [
            ("node: n\nmqtt: {broker: 'mqtt://h', username: bob, password:hunter2}\n", "hunter2"),
            ("node: n\nirks: [{name: a, key:00112233445566778899aabbccddeeff}]\n", "0011223344"),
            ("node: n\nmqtt: {password:hunter2, password:hunter2}\n", "hunter2"),
            ("node: n\nmqtt:\n  password_env: !Xk9pQ2zz\n", "Xk9pQ2zz"),
            ("node: n\nmqtt:\n  password_env: *Xk9pQ2zz\n", "Xk9pQ2zz"),
            ("node: n\nmqtt:\n  pasword: &Xk9pQ2zz\n", "Xk9pQ2zz"),
            ("node: n\nmqtt: {broker: 'mqtt://h', pasword:hunter2}\n", "hunter2"),
            ("node: n\nmqtt: {password_env:hunter2}\n", "hunter2"),
        ]
        for (yaml, secret) in cases {
            do {
                _ = try ConfigLoader.parse(AgentConfig.self, yaml: yaml)
                Issue.record("loaded: \(yaml)")
            } catch {
                #expect(!error.description.contains(secret), "\(error)")
                #expect(!error.problems.isEmpty)
            }
        }
    }

    /// An unknown key is shown cut: a file of one 5000-character key made a 5000-character line.
    @Test func aHugeKeyIsNotPrintedWhole() {
        do {
            _ = try ConfigLoader.parse(AgentConfig.self, yaml: "node: n\n? " + String(repeating: "k", count: 5_000) + "\n: 1\n")
            Issue.record("loaded")
        } catch {
            #expect(!error.problems.isEmpty && error.problems.allSatisfy { $0.description.utf8.count < 300 }, "\(error.problems.map(\.description.utf8.count))")
        }
        // Under it, a tag: its problem's path is cut too.
        do {
            _ = try ConfigLoader.parse(AgentConfig.self, yaml: "node: n\n? " + String(repeating: "k", count: 5_000) + "\n: {a: !foo 1}\n")
            Issue.record("loaded")
        } catch {
            #expect(error.problems.count >= 2 && error.problems.allSatisfy { $0.description.utf8.count < 300 }, "\(error.problems.map(\.description.utf8.count))")
        }
    }

    /// A key missing from a list's entry is reported beside the entry's other problems, which
    /// came only on the next run.
    @Test func aMissingKeyDoesNotHideItsSiblingsProblems() {
        do {
            _ = try ConfigLoader.parse(AggregatorConfig.self, yaml: "rooms:\n  - name: kitchen\nnodes:\n  - room: kitchn\n")
            Issue.record("loaded")
        } catch {
            #expect(error.messages.contains("nodes[0]: missing required key 'name'"), "\(error.messages)")
            #expect(error.messages.contains { $0.hasPrefix("nodes[0].room: unknown room 'kitchn'") }, "\(error.messages)")
            #expect(!error.messages.contains { $0.hasPrefix("nodes[0].name:") }, "\(error.messages)")
        }
    }

    /// A generated password or token that starts with `!`, `*`, `&` or `!!` is read as YAML (a
    /// tag, an alias, an anchor): each is an error at the secret's path that never shows the
    /// value, and none leaves the key empty without a word.
    @Test func aSecretReadAsYAMLSyntaxIsAnErrorThatDoesNotShowIt() throws {
        let secret = "Pa55word9c21"
        for (yaml, path) in [("mqtt:\n  password: !\(secret)\n", "mqtt.password"),
                             ("mqtt:\n  password: *\(secret)\n", "mqtt.password"),
                             ("mqtt:\n  password: &\(secret)\n", "mqtt.password"),
                             ("mqtt:\n  password: !!\(secret)\n", "mqtt.password"),
                             ("http:\n  token: !\(secret)\n", "http.token")] {
            let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(AggregatorConfig.self, yaml: yaml) }
            #expect(error.description.contains(path) && error.description.contains("quote the value"), "\(error)")
            #expect(!error.description.contains(secret) && !String(reflecting: error).contains(secret), "\(error)")
        }
        // Quoted, each is the password it is.
        let quoted = try ConfigLoader.parse(AggregatorConfig.self, yaml: "mqtt:\n  password: \"!\(secret)\"\n")
        #expect(quoted.mqtt.password?.revealed == "!" + secret)
    }
}
