import Foundation

/// The peer projects' parser vectors bundled with TestSupport (see Vectors/README.md).
public enum TestVectors {
    /// One vector: the raw line as a JSON object.
    public struct Vector: @unchecked Sendable {
        public let json: [String: Any]
        public var source: String { json["source"] as? String ?? "?" }
        public var hex: String? { json["hex"] as? String }
        public var hexCovers: String? { json["hex_covers"] as? String }
        public var formatGuess: String? { json["format_guess"] as? String }
        public var hexLevel: String? { json["hex_level"] as? String }
        public var expect: Any? { json["expect"] }
    }

    /// The vectors of one file, e.g. `load("ble_monitor")`.
    public static func load(_ name: String) throws -> [Vector] {
        guard let url = Bundle.module.url(forResource: name, withExtension: "jsonl", subdirectory: "Vectors") else {
            throw CocoaError(.fileNoSuchFile)
        }
        let text = try String(contentsOf: url, encoding: .utf8)
        return try text.split(separator: "\n").compactMap { line in
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
            let obj = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return (obj as? [String: Any]).map(Vector.init(json:))
        }
    }

    /// Every vector file's base name.
    public static let files = [
        "ble_monitor", "bluetooth_data_tools_gap", "beacontools", "android_beacon_library",
        "pureswift_bluetooth", "ibeacon_ble", "aioblescan",
    ]
}
