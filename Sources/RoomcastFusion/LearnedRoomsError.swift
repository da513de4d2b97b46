import Foundation

/// Why a learned-rooms state could not be read.
public enum LearnedRoomsError: Error, Equatable, CustomStringConvertible {
    case tooLarge(Int)
    case notJSON(String)
    /// A value at `path` (`rooms[2].nodes[0].mean`) is missing or wrong.
    case badValue(path: String, message: String)

    init(_ error: DecodingError) {
        func path(_ keys: [any CodingKey]) -> String {
            var text = ""
            for key in keys {
                if let i = key.intValue { text += "[\(i)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text.isEmpty ? "(top level)" : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            self = .badValue(path: path(context.codingPath + [key]), message: "missing")
        case .typeMismatch(let type, let context):
            self = .badValue(path: path(context.codingPath), message: "expected \(Self.describe(type))")
        case .valueNotFound(let type, let context):
            self = .badValue(path: path(context.codingPath), message: "expected \(Self.describe(type)), found null")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty, context.underlyingError != nil || context.debugDescription.contains("JSON") {
                self = .notJSON(context.debugDescription)
            } else {
                self = .badValue(path: path(context.codingPath), message: context.debugDescription)
            }
        @unknown default:
            self = .notJSON("\(error)")
        }
    }

    static func describe(_ type: Any.Type) -> String {
        switch type {
        case is Double.Type, is Int.Type: "a number"
        case is String.Type: "text"
        default: type is any Collection.Type ? "a list" : "an object"
        }
    }

    public var description: String {
        switch self {
        case .tooLarge(let n): "\(n) bytes, more than a learned-rooms state holds (\(LearnedRooms.maximumFileBytes))"
        case .notJSON(let why): "not JSON: \(why)"
        case .badValue(let path, let message): "\(path): \(message)"
        }
    }
}
