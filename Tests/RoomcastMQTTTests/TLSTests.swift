import Foundation
import RoomcastConfig
import RoomcastMQTT
import Shared
import Testing
import TestSupport

@Suite(.requiresMosquitto, .timeLimit(.minutes(1)))
struct TLSTests {
    @Test(arguments: MQTTClientConfiguration.ProtocolVersion.allCases)
    func connectsWithTheTestCA(version: MQTTClientConfiguration.ProtocolVersion) async throws {
        let tls = try await TLSMaterial.shared()
        try await withRig(.init(tls: tls)) { rig in
            let c = try rig.client(rig.configuration("tls", version: version, tls: .init(caFile: tls.caCertificate)))
            try await c.waitUntilConnected(timeout: .seconds(10))
            try await c.subscribe("secure/#")
            let inbox = StreamCollector(c.messages)
            try c.publish(MQTTMessage(topic: "secure/echo", string: "over tls", qos: .atLeastOnce))
            try await inbox.waitFor("the echo over TLS") { $0.first?.payloadString == "over tls" }
        }
    }

    @Test func wrongCAIsRefusedWithAClearError() async throws {
        let tls = try await TLSMaterial.shared()
        try await withRig(.init(tls: tls)) { rig in
            let c = try rig.client(rig.configuration("mistrusting", tls: .init(caFile: tls.otherCACertificate)))
            let events = StreamCollector(c.connectionEvents)
            let error = await #expect(throws: MQTTError.self) {
                try await c.waitUntilConnected(timeout: .seconds(10))
            }
            guard case .tlsHandshakeFailed(let endpoint, let detail) = error else {
                Issue.record("expected a TLS handshake failure, got \(String(describing: error))")
                return
            }
            #expect(endpoint == "127.0.0.1:\(rig.broker.tlsPort!)")
            #expect(detail.contains("certificate verify failed"), "detail: \(detail)")
            #expect(error?.description.contains("CA file") == true)
            let first = try await events.waitFor("the failed attempt event") { !$0.isEmpty }
            #expect(first.first?.failure == error)
            // The handshake failure also reached the log, at error level: once, not at every
            // retry (an expired broker certificate made a line every 30 s, for good).
            _ = try await events.waitFor("five failed attempts", timeout: .seconds(30)) { $0.count >= 5 }
            let said = rig.logs.records(atLeast: .error).filter { $0.metadata["mqtt.log"]?.contains("certificate verify failed") == true }
            #expect(said.count == 1, "\(said.count) lines for 5 attempts")
        }
    }

    @Test func clientCertificateIsPresentedWhenRequired() async throws {
        let tls = try await TLSMaterial.shared()
        try await withRig(.init(tls: tls, requireClientCertificate: true)) { rig in
            let withCert = try rig.client(rig.configuration("with-cert", tls: .init(
                caFile: tls.caCertificate, certificateFile: tls.clientCertificate, keyFile: tls.clientKey)))
            try await withCert.waitUntilConnected(timeout: .seconds(10))

            let without = try rig.client(rig.configuration("without-cert", tls: .init(caFile: tls.caCertificate)))
            let error = await #expect(throws: MQTTError.self) {
                try await without.waitUntilConnected(timeout: .seconds(3))
            }
            guard case .tlsHandshakeFailed = error else {
                Issue.record("expected a TLS failure without a client certificate, got \(String(describing: error))")
                return
            }
        }
    }

    /// A client key or certificate the program cannot use is a config error naming the file,
    /// at start when reading it tells (not PEM, an encrypted key) and at the connect when only
    /// loading it does (a key of another certificate): not a failed handshake, retried for good.
    @Test func anUnusableClientKeyIsAConfigErrorNotAHandshake() async throws {
        let tls = try await TLSMaterial.shared()
        let dir = NSTemporaryDirectory() + "roomcast-keys-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let encrypted = "\(dir)/encrypted.key", notPEM = "\(dir)/not-pem.key"
        _ = try await ChildProcess.run(TLSMaterial.openssl, ["pkey", "-in", tls.clientKey, "-aes256", "-passout", "pass:secret",
                                                             "-out", encrypted], in: dir)
        try "not a key\n".write(toFile: notPEM, atomically: true, encoding: .utf8)
        for (key, says) in [(encrypted, "is encrypted"), (notPEM, "is not a PEM private key")] {
            var cfg = MQTTClientConfiguration.testing(port: 1, id: "bad-key")
            cfg.tls = .init(caFile: tls.caCertificate, certificateFile: tls.clientCertificate, keyFile: key)
            #expect { _ = try MQTTClient(configuration: cfg, logger: .silent) } throws: { error in
                guard case MQTTError.invalidConfiguration(let problems) = error else { return false }
                return problems.contains { $0.contains("keyFile") && $0.contains(key) && $0.contains(says) }
            }
            // From the config, the error names the key the user wrote.
            var config = MQTTConfig()
            config.tls = .init(caFile: tls.caCertificate, certFile: tls.clientCertificate, keyFile: key)
            #expect { _ = try config.clientConfiguration(clientID: "bad-key", will: nil) } throws: { error in
                guard let error = error as? ConfigError else { return false }
                return error.problems.map(\.path) == ["mqtt.tls.key_file"] && error.description.contains(says)
            }
        }
        try await withRig(.init(tls: tls, requireClientCertificate: true)) { rig in
            let mismatched = try rig.client(rig.configuration("mismatched", tls: .init(
                caFile: tls.caCertificate, certificateFile: tls.clientCertificate, keyFile: tls.serverKey)))
            let error = await #expect(throws: MQTTError.self) { try await mismatched.waitUntilConnected(timeout: .seconds(10)) }
            guard case .invalidConfiguration(let problems) = error else { Issue.record("\(String(describing: error))"); return }
            #expect(problems.first?.contains("mqtt.tls") == true, "\(problems)")
        }
    }

    @Test func hostNameMismatchIsRefusedUnlessInsecure() async throws {
        let tls = try await TLSMaterial.shared()
        try await withRig(.init(tls: tls, misnamedServerCertificate: true)) { rig in
            let strict = try rig.client(rig.configuration("strict", tls: .init(caFile: tls.caCertificate)))
            let error = await #expect(throws: MQTTError.self) {
                try await strict.waitUntilConnected(timeout: .seconds(10))
            }
            guard case .tlsHandshakeFailed(_, let detail) = error else {
                Issue.record("expected a TLS failure for a misnamed certificate, got \(String(describing: error))")
                return
            }
            #expect(detail.contains("certificate verify failed"), "detail: \(detail)")
            // `insecure` skips only the name check: the chain is still verified against the CA.
            let lax = try rig.client(rig.configuration("lax", tls: .init(caFile: tls.caCertificate, insecure: true)))
            try await lax.waitUntilConnected(timeout: .seconds(10))
            let laxWrongCA = try rig.client(rig.configuration("lax-wrong-ca", tls: .init(caFile: tls.otherCACertificate, insecure: true)))
            await #expect(throws: MQTTError.self) { try await laxWrongCA.waitUntilConnected(timeout: .seconds(10)) }
        }
    }

    /// A broker going down or restarting closes connections mid-handshake. That says nothing about
    /// the client's certificate or trust, so it is retried: the one-shot commands (`aggregator
    /// learn`, `calibrate`) must not give up at once on such a close.
    @Test func aConnectionClosedDuringTheHandshakeIsRetried() async throws {
        let tls = try await TLSMaterial.shared()
        let door = try ClosingListener()
        var cfg = MQTTClientConfiguration.testing(port: door.port, id: "patient-tls", tls: .init(caFile: tls.caCertificate))
        cfg.connectTimeout = 10
        let client = try MQTTClient(configuration: cfg, logger: .silent)
        let events = StreamCollector(client.connectionEvents)
        client.start()
        let closed = try await events.waitFor("the attempt the listener closed", timeout: .seconds(30)) { !$0.isEmpty }
        guard case .connectionLost(_, let detail)? = closed.first?.failure else {
            Issue.record("a close during the handshake was taken for \(String(describing: closed.first))")
            door.close()
            await client.shutdown()
            return
        }
        #expect(detail.contains("TLS handshake"), "\(detail)")
        let waiting = Task { try await client.waitUntilConnected(timeout: .seconds(30)) }
        door.close()
        let broker = try await MosquittoBroker.start(.init(tls: tls, tlsPort: door.port))
        let outcome = await waiting.result
        #expect(throws: Never.self) { try outcome.get() }
        await client.shutdown()
        await broker.cleanup()
    }

    @Test func plainClientOnTheTLSPortFailsWithAHint() async throws {
        let tls = try await TLSMaterial.shared()
        try await withRig(.init(tls: tls)) { rig in
            var cfg = rig.configuration("plain")
            cfg.port = rig.broker.tlsPort!
            let c = try rig.client(cfg)
            let events = StreamCollector(c.connectionEvents)
            let got = try await events.waitFor("a failed attempt") { !$0.isEmpty }
            let text = got.first?.failure?.description ?? ""
            #expect(text.contains("TLS") || text.contains("no answer"), "\(text)")
        }
    }
}

/// A TCP listener on a free loopback port that accepts one connection and closes it at once, as a
/// broker that is going down does.
final class ClosingListener: Sendable {
    let port: Int
    private let fd: Int32

    init() throws {
        let port = try freePort()
        guard let fd = listeningSocket(port: port) else { throw POSIXError(.EADDRINUSE) }
        self.fd = fd
        self.port = port
        let thread = Thread {
            let peer = accept(fd, nil, nil)
            if peer >= 0 { Glibc.close(peer) }
        }
        thread.start()
    }

    /// Stops listening, so the port is free for the broker.
    func close() {
        shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
    }
}
