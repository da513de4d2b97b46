import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Requests to the package's own listeners on loopback (`/metrics`, `/healthz`, the dashboard).
public enum LocalHTTP {
    /// GETs `path` from 127.0.0.1:`port`; the status and body.
    public static func get(_ port: Int, _ path: String) async throws -> (status: Int, body: String) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }

    /// The value of the first series named `name` (with or without labels) in a Prometheus text.
    public static func value(_ text: String, _ name: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            if let v = line.split(separator: " ").last.flatMap({ Double($0) }) { return v }
        }
        return nil
    }
}
