import Foundation

/// Encoding and decoding of wire-contract payloads: sorted keys, one version.
public enum WireFormat {
    /// The `v` every payload carries.
    public static let version = 1

    /// Payloads larger than this are rejected before JSON parsing.
    public static let maxPayloadBytes = 64 * 1024

    /// JSON with sorted keys and no escaped slashes.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .throw
        return Array(try encoder.encode(value))
    }

    /// Decodes a payload, rejecting oversized input and versions other than ours.
    /// Versioned payloads are decoded once and their `v` checked after; only a
    /// payload that does not decode is probed again, to say whether its version is the problem.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws(WireFormatError) -> T {
        guard bytes.count <= maxPayloadBytes else { throw .tooLarge(bytes.count) }
        let data = Data(bytes)
        let decoder = JSONDecoder()
        if T.self is any WireVersioned.Type {
            do {
                let value = try decoder.decode(T.self, from: data)
                if let v = (value as? any WireVersioned)?.v, v != version { throw WireFormatError.unsupportedVersion(v) }
                return value
            } catch let e as WireFormatError {
                throw e
            } catch {
                if let probe = try? decoder.decode(VersionProbe.self, from: data), probe.v != version {
                    throw .unsupportedVersion(probe.v)
                }
                if let e = error as? DecodingError { throw .invalid(WireFormatError.describe(e)) }
                throw .invalid(String(describing: error))
            }
        }
        do {
            let probe = try decoder.decode(VersionProbe.self, from: data)
            guard probe.v == version else { throw WireFormatError.unsupportedVersion(probe.v) }
            return try decoder.decode(T.self, from: data)
        } catch let e as WireFormatError {
            throw e
        } catch let e as DecodingError {
            throw .invalid(WireFormatError.describe(e))
        } catch {
            throw .invalid(String(describing: error))
        }
    }

    /// Rounds unix seconds to milliseconds, the contract's precision.
    public static func milliseconds(_ t: Double) -> Double {
        (t * 1000).rounded() / 1000
    }

    private struct VersionProbe: Decodable { let v: Int? }
}

/// Why a payload was rejected.
public enum WireFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooLarge(Int)
    case unsupportedVersion(Int?)
    case invalid(String)

    public var description: String {
        switch self {
        case .tooLarge(let n): return "payload of \(n) bytes exceeds \(WireFormat.maxPayloadBytes)"
        case .unsupportedVersion(let v): return "unsupported version v=\(v.map(String.init) ?? "missing")"
        case .invalid(let why): return "invalid payload: \(why)"
        }
    }

    /// A decoding error in one line: the JSON path (`.nodes[2].rssi`) and what was wrong there.
    public static func describe(_ e: DecodingError) -> String {
        func path(_ p: [CodingKey]) -> String {
            p.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        }
        switch e {
        case let .typeMismatch(t, c): return "\(path(c.codingPath)): expected \(t)"
        case let .valueNotFound(t, c): return "\(path(c.codingPath)): missing \(t)"
        case let .keyNotFound(k, c): return "\(path(c.codingPath + [k])): missing"
        case let .dataCorrupted(c): return "\(path(c.codingPath)): \(c.debugDescription)"
        @unknown default: return String(describing: e)
        }
    }
}

/// A wire payload that carries the contract version `v`.
public protocol WireVersioned {
    var v: Int { get }
}

extension BeaconReading: WireVersioned {}
extension PresenceDecision: WireVersioned {}
extension RoomOccupancy: WireVersioned {}
extension RoomEvent: WireVersioned {}
extension RegionEvent: WireVersioned {}
extension NodeTelemetry: WireVersioned {}
extension NodeHeartbeat: WireVersioned {}
extension PersonPresence: WireVersioned {}
extension ReceiverCalibrationReport: WireVersioned {}
