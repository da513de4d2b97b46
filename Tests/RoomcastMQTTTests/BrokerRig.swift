import Foundation
@testable import RoomcastMQTT
import Shared
import Synchronization
import TestSupport
import RoomcastLogging

/// One broker plus the clients a test makes against it; `withRig` shuts every
/// client down and deletes the broker afterwards, and attaches the broker log
/// to any failure.
final class BrokerRig: Sendable {
    let broker: MosquittoBroker
    let logs = InMemoryLogHandler()
    private let clients = Mutex<[MQTTClient]>([])

    init(broker: MosquittoBroker) { self.broker = broker }

    /// A configuration for this broker with test-speed backoff and timeouts.
    func configuration(_ id: String, version: MQTTClientConfiguration.ProtocolVersion = .v5,
                       tls: MQTTClientConfiguration.TLS? = nil) -> MQTTClientConfiguration {
        MQTTClientConfiguration.testing(host: broker.host, port: tls == nil ? broker.port : broker.tlsPort!,
                                        id: id, version: version, tls: tls)
    }

    /// A started client (not yet necessarily connected), shut down by `withRig`.
    func client(_ configuration: MQTTClientConfiguration) throws -> MQTTClient {
        let c = try MQTTClient(configuration: configuration,
                               logger: Logger(label: configuration.clientID, level: .debug, handler: logs))
        clients.withLock { $0.append(c) }
        c.start()
        return c
    }

    /// A started client that is connected.
    func connectedClient(_ id: String, version: MQTTClientConfiguration.ProtocolVersion = .v5,
                         configure: (inout MQTTClientConfiguration) -> Void = { _ in }) async throws -> MQTTClient {
        var cfg = configuration(id, version: version)
        configure(&cfg)
        let c = try client(cfg)
        try await c.waitUntilConnected(timeout: .seconds(10))
        return c
    }

    func shutdownAll() async {
        for c in clients.withLock({ $0 }) { await c.shutdown(timeout: .seconds(2)) }
    }
}

/// A test failure with the broker's log attached.
struct WithBrokerLog: Error, CustomStringConvertible {
    let underlying: any Error
    let log: String
    var description: String { "\(underlying)\n--- broker log (tail) ---\n\(log)" }
}

/// Runs `body` against a fresh broker and always cleans up.
func withRig(_ options: MosquittoBroker.Options = .init(), _ body: (BrokerRig) async throws -> Void) async throws {
    let rig = BrokerRig(broker: try await MosquittoBroker.start(options))
    do {
        try await body(rig)
        await rig.shutdownAll()
        await rig.broker.cleanup()
    } catch {
        let log = rig.broker.logTail(60)
        await rig.shutdownAll()
        await rig.broker.cleanup()
        throw WithBrokerLog(underlying: error, log: log)
    }
}

extension MQTTClientConfiguration {
    /// Loopback settings with fast, jitter-free backoff so tests do not wait long.
    static func testing(host: String = "127.0.0.1", port: Int, id: String, version: ProtocolVersion = .v5,
                        tls: TLS? = nil) -> MQTTClientConfiguration {
        MQTTClientConfiguration(host: host, port: port, clientID: id, keepAlive: 10, protocolVersion: version,
                                tls: tls, reconnectBackoff: MQTTBackoff(initial: 0.05, maximum: 0.4, jitter: 0),
                                connectTimeout: 5)
    }
}

extension MQTTConnectionEvent {
    var isConnected: Bool { if case .connected = self { true } else { false } }
    var isDisconnected: Bool { if case .disconnected = self { true } else { false } }
    var failure: MQTTError? { if case .connectFailed(let e, _) = self { e } else { nil } }
    var retryIn: Double? { if case .connectFailed(_, let d) = self { d } else { nil } }
}
