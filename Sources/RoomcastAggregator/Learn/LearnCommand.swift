import Foundation
import Shared

/// One message on `<prefix>/aggregator/learn`: teach a room, cancel a label, or forget a room.
///
/// ```json
/// {"room":"kitchen","beacon":"ibeacon:…-1-2","seconds":30}
/// {"action":"cancel","beacon":"ibeacon:…-1-2"}
/// {"action":"forget","room":"kitchen"}
/// ```
/// `v` (1) is optional; `request`, optional, is echoed in every result the command gives, so
/// a sender can tell its answers from others'. Unknown keys are errors (a misspelt `seconds`
/// must not quietly become 30).
public struct LearnCommand: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        case label(room: String, beacon: BeaconID, seconds: Double)
        case cancel(beacon: BeaconID)
        case forget(room: String)
    }

    public var action: Action
    public var request: String?

    public init(_ action: Action, request: String? = nil) {
        self.action = action
        self.request = request
    }

    /// Seconds a label lasts when the command does not say.
    public static let defaultSeconds = 30.0
    /// The largest command read (bytes).
    public static let maximumBytes = 1024
    /// The longest `request` token (bytes).
    public static let maximumRequestBytes = 64

    static let keys = ["v", "action", "room", "beacon", "seconds", "request"]

    /// Reads a command, or says what is wrong with it (and the `request` token, when that
    /// much could be read, so the error reaches its sender).
    public static func decode(_ payload: [UInt8]) -> Result<LearnCommand, LearnCommandError> {
        guard payload.count <= maximumBytes else { return .failure(.init("command of \(payload.count) bytes; at most \(maximumBytes)")) }
        let fields: Fields
        do { fields = try JSONDecoder().decode(Fields.self, from: Data(payload)) } catch let e as LearnCommandError {
            return .failure(e)
        } catch {
            return .failure(.init("not a JSON object such as {\"room\":\"kitchen\",\"beacon\":\"<id>\",\"seconds\":30}"))
        }
        return fields.command()
    }

    /// The command as sent on the wire (sorted keys).
    public func encoded() -> [UInt8] {
        var fields = Fields()
        fields.v = 1
        fields.request = request
        switch action {
        case let .label(room, beacon, seconds):
            fields.room = room; fields.beacon = beacon.rawValue; fields.seconds = seconds
        case let .cancel(beacon):
            fields.action = "cancel"; fields.beacon = beacon.rawValue
        case let .forget(room):
            fields.action = "forget"; fields.room = room
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? Array(encoder.encode(fields))) ?? []
    }

    /// The wire form: every key optional, unknown keys refused.
    struct Fields: Codable {
        var v: Int?
        var action: String?
        var room: String?
        var beacon: String?
        var seconds: Double?
        var request: String?

        init() {}

        struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: AnyKey.self)
            // The token first, so that any later error can still be sent back to its sender.
            let requestKey = AnyKey(stringValue: "request")
            if c.contains(requestKey) { request = try? c.decodeIfPresent(String.self, forKey: requestKey) }
            func fail(_ message: String) -> LearnCommandError { LearnCommandError(message, request: request) }
            for key in c.allKeys where !LearnCommand.keys.contains(key.stringValue) {
                var message = "unknown key '\(String(key.stringValue.prefix(40)))'"
                if let guess = Suggestion.closest(to: key.stringValue, in: LearnCommand.keys) { message += "; did you mean '\(guess)'?" }
                throw fail(message)
            }
            func field<T: Decodable>(_ name: String, _ type: T.Type, _ what: String) throws -> T? {
                do { return try c.decodeIfPresent(type, forKey: AnyKey(stringValue: name)) } catch {
                    throw fail("'\(name)' must be \(what)")
                }
            }
            v = try field("v", Int.self, "1")
            action = try field("action", String.self, "learn, cancel or forget")
            room = try field("room", String.self, "a room name")
            beacon = try field("beacon", String.self, "a beacon id")
            seconds = try field("seconds", Double.self, "a number of seconds")
            if c.contains(requestKey), request == nil, !((try? c.decodeNil(forKey: requestKey)) ?? false) {
                throw fail("'request' must be text")
            }
        }

        func command() -> Result<LearnCommand, LearnCommandError> {
            func fail(_ message: String) -> Result<LearnCommand, LearnCommandError> { .failure(LearnCommandError(message, request: request)) }
            if let request, request.utf8.count > LearnCommand.maximumRequestBytes || request.unicodeScalars.contains(where: { $0.value < 0x20 }) {
                return .failure(LearnCommandError("'request' must be at most \(LearnCommand.maximumRequestBytes) bytes of printable text"))
            }
            if let v, v != 1 { return fail("unsupported version \(v) (this aggregator reads 1)") }
            func roomName() -> Result<String, LearnCommandError> {
                guard let room else { return .failure(LearnCommandError("give the room: \"room\":\"kitchen\"", request: request)) }
                if let problem = TopicName.problem(with: room) { return .failure(LearnCommandError("room name \(problem)", request: request)) }
                return .success(room)
            }
            func beaconID() -> Result<BeaconID, LearnCommandError> {
                guard let beacon else { return .failure(LearnCommandError("give the beacon: \"beacon\":\"<beacon id>\"", request: request)) }
                guard let id = BeaconID(beacon) else {
                    return .failure(LearnCommandError("'\(String(beacon.prefix(80)))' is not a beacon id (e.g. ibeacon:<uuid>-<major>-<minor>)", request: request))
                }
                return .success(id)
            }
            switch action ?? "learn" {
            case "learn":
                let seconds = self.seconds ?? LearnCommand.defaultSeconds
                return roomName().flatMap { room in
                    beaconID().map { LearnCommand(.label(room: room, beacon: $0, seconds: seconds), request: request) }
                }
            case "cancel":
                if room != nil || seconds != nil { return fail("cancel takes only the beacon") }
                return beaconID().map { LearnCommand(.cancel(beacon: $0), request: request) }
            case "forget":
                if beacon != nil || seconds != nil { return fail("forget takes only the room") }
                return roomName().map { LearnCommand(.forget(room: $0), request: request) }
            case let other:
                var message = "unknown action '\(String(other.prefix(40)))'; it is learn (the default), cancel or forget"
                if let guess = Suggestion.closest(to: other, in: ["learn", "cancel", "forget"]) { message = "unknown action '\(other)'; did you mean '\(guess)'?" }
                return fail(message)
            }
        }
    }
}
