import Foundation
import Shared
import TestSupport
@testable import RoomcastAdvertising

/// The outcome of checking one peer vector against our decoders.
enum VectorOutcome: Equatable {
    case pass
    /// Mismatches with the peer's expectation.
    case mismatch([String])
    /// Not about anything this module decodes (e.g. a distance formula or a sensor's readings).
    case notRelevant(String)
}

/// One checked vector: which peer test, which of our formats it exercises, and the outcome.
struct VectorResult {
    var file: String
    var source: String
    var format: String
    var outcome: VectorOutcome
}

/// Collects mismatches while comparing decoded values with a peer's expectation.
struct Checker {
    var problems: [String] = []

    mutating func expect(_ ok: Bool, _ what: @autoclosure () -> String) {
        if !ok { problems.append(what()) }
    }

    mutating func equal<T: Equatable>(_ got: T?, _ want: T?, _ key: String) {
        if got != want { problems.append("\(key): got \(got.map { "\($0)" } ?? "nil"), expected \(want.map { "\($0)" } ?? "nil")") }
    }

    mutating func close(_ got: Double?, _ want: Double?, _ key: String, tolerance: Double = 1e-6) {
        switch (got, want) {
        case (nil, nil): return
        case let (g?, w?) where abs(g - w) <= tolerance: return
        default: problems.append("\(key): got \(got.map { "\($0)" } ?? "nil"), expected \(want.map { "\($0)" } ?? "nil")")
        }
    }

    var outcome: VectorOutcome { problems.isEmpty ? .pass : .mismatch(problems) }
}

/// JSON helpers over the vectors' `[String: Any]` objects.
enum J {
    static func isNull(_ v: Any?) -> Bool { v == nil || v is NSNull }
    static func string(_ v: Any?) -> String? { v as? String }
    static func int(_ v: Any?) -> Int? {
        if let s = v as? String { return Int(s) }
        return (v as? NSNumber).map { $0.intValue }
    }
    static func double(_ v: Any?) -> Double? { (v as? NSNumber)?.doubleValue }
    static func bool(_ v: Any?) -> Bool? { isNull(v) ? nil : (v as? Bool) }
    static func dict(_ v: Any?) -> [String: Any]? { v as? [String: Any] }
    /// `{"__bytes_hex__": "..."}` or a plain hex string.
    static func hex(_ v: Any?) -> String? {
        if let d = v as? [String: Any] { return d["__bytes_hex__"] as? String }
        return v as? String
    }
    static func doubles(_ v: Any?) -> [Double]? { (v as? [Any])?.compactMap { ($0 as? NSNumber)?.doubleValue } }
}
