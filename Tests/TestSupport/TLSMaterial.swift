import Foundation
import Synchronization

/// Certificates for TLS tests, made with the `openssl` CLI in a temp folder:
/// a CA, a server certificate for 127.0.0.1/localhost (SAN), a misnamed server
/// certificate and a client certificate signed by it, and a second, unrelated CA.
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
    /// A server certificate from the same CA for a name nobody connects to
    /// (elsewhere.invalid): fails the host name check unless `insecure` is on.
    public let misnamedServerCertificate: String
    /// The key of `misnamedServerCertificate`.
    public let misnamedServerKey: String

    public static let openssl = "/usr/bin/openssl"

    /// Concurrent tests share one generation instead of racing in the same folder.
    private static let cache = Mutex<Task<TLSMaterial, any Error>?>(nil)

    /// One set per test process (generating takes a few hundred milliseconds),
    /// deleted when the process exits.
    public static func shared() async throws -> TLSMaterial {
        let task = cache.withLock { c in
            if let t = c { return t }
            let t = Task {
                let m = try await generate(in: sharedDirectory(pid: getpid()))
                atexit { try? FileManager.default.removeItem(atPath: TLSMaterial.sharedDirectory(pid: getpid())) }
                return m
            }
            c = t
            return t
        }
        return try await task.value
    }

    static func sharedDirectory(pid: Int32) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-tls-pid\(pid)").path
    }

    /// Generates a fresh set (EC P-256 keys, valid for two days) in `directory`, by default a new temp folder.
    public static func generate(in directory: String? = nil) async throws -> TLSMaterial {
        let dir = directory ?? FileManager.default.temporaryDirectory
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
            ("misnamed", "elsewhere.invalid", """
             basicConstraints=CA:FALSE
             keyUsage=critical,digitalSignature,keyEncipherment
             extendedKeyUsage=serverAuth
             subjectAltName=DNS:elsewhere.invalid
             subjectKeyIdentifier=hash
             authorityKeyIdentifier=keyid
             """, "4"),
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
            otherCACertificate: p("other-ca.crt"),
            misnamedServerCertificate: p("misnamed.crt"), misnamedServerKey: p("misnamed.key"))
    }
}
