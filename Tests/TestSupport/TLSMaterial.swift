import Foundation
import Synchronization

/// Certificates for TLS tests, made with the `openssl` CLI in a temp folder:
/// a CA, a server certificate for 127.0.0.1/localhost (SAN) and a client
/// certificate signed by it, and a second, unrelated CA that must be refused.
public struct TLSMaterial: Sendable {
    /// The folder holding every file.
    public let directory: String
    /// The CA's certificate (PEM): the `caFile` that should work.
    public let caCertificate: String
    /// The CA's private key.
    public let caKey: String
    /// Server certificate for CN=localhost, SAN IP:127.0.0.1, DNS:localhost.
    public let serverCertificate: String
    /// The server key.
    public let serverKey: String
    /// Client certificate (CN=roomcast-test-client), for brokers that require one.
    public let clientCertificate: String
    /// The client key.
    public let clientKey: String
    /// Certificate of an unrelated CA: a `caFile` that must be refused.
    public let otherCACertificate: String

    public static let openssl = "/usr/bin/openssl"

    private static let cache = Mutex<TLSMaterial?>(nil)

    /// One set per test process (generating takes a few hundred milliseconds).
    public static func shared() async throws -> TLSMaterial {
        if let m = cache.withLock({ $0 }) { return m }
        let m = try await generate()
        return cache.withLock { c in
            if let existing = c { return existing }
            c = m
            return m
        }
    }

    /// Generates a fresh set in a new temp folder (EC P-256 keys, valid for two days).
    public static func generate() async throws -> TLSMaterial {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("roomcast-tls-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        func p(_ name: String) -> String { "\(dir)/\(name)" }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

        for ca in ["ca", "other-ca"] {
            try await ChildProcess.run(openssl, ["req", "-x509", "-new"] + ec + [
                "-keyout", p("\(ca).key"), "-out", p("\(ca).crt"), "-days", "2",
                "-subj", "/CN=Roomcast Test \(ca == "ca" ? "CA" : "Other CA")",
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ], in: dir)
        }
        let leaves: [(name: String, cn: String, ext: String, serial: String)] = [
            ("server", "localhost", """
             basicConstraints=CA:FALSE
             keyUsage=critical,digitalSignature,keyEncipherment
             extendedKeyUsage=serverAuth
             subjectAltName=IP:127.0.0.1,DNS:localhost
             subjectKeyIdentifier=hash
             authorityKeyIdentifier=keyid
             """, "2"),
            ("client", "roomcast-test-client", """
             basicConstraints=CA:FALSE
             keyUsage=critical,digitalSignature,keyEncipherment
             extendedKeyUsage=clientAuth
             subjectKeyIdentifier=hash
             authorityKeyIdentifier=keyid
             """, "3"),
        ]
        for leaf in leaves {
            try (leaf.ext + "\n").write(toFile: p("\(leaf.name).ext"), atomically: true, encoding: .utf8)
            try await ChildProcess.run(openssl, ["req", "-new"] + ec + [
                "-keyout", p("\(leaf.name).key"), "-out", p("\(leaf.name).csr"), "-subj", "/CN=\(leaf.cn)",
            ], in: dir)
            try await ChildProcess.run(openssl, [
                "x509", "-req", "-in", p("\(leaf.name).csr"), "-CA", p("ca.crt"), "-CAkey", p("ca.key"),
                "-set_serial", leaf.serial, "-days", "2", "-out", p("\(leaf.name).crt"),
                "-extfile", p("\(leaf.name).ext"),
            ], in: dir)
        }
        return TLSMaterial(
            directory: dir, caCertificate: p("ca.crt"), caKey: p("ca.key"),
            serverCertificate: p("server.crt"), serverKey: p("server.key"),
            clientCertificate: p("client.crt"), clientKey: p("client.key"),
            otherCACertificate: p("other-ca.crt"))
    }
}
