/// Rules for names that become one MQTT topic level (node, room, beacon names).
public enum TopicName {
    /// Why `name` cannot be one topic level, or nil when it can.
    public static func problem(with name: String) -> String? {
        if name.isEmpty { return "must not be empty" }
        if name.utf8.count > 128 { return "must be at most 128 bytes" }
        for c in name.unicodeScalars {
            switch c {
            case "/": return "must not contain '/'"
            case "+": return "must not contain '+'"
            case "#": return "must not contain '#'"
            case "\0": return "must not contain NUL"
            default:
                if ControlCharacters.isControl(c) { return "must not contain control characters" }
                // libmosquitto refuses a topic with one (MALFORMED_UTF8): every publish would fail.
                if (0xFDD0...0xFDEF).contains(c.value) || c.value & 0xFFFE == 0xFFFE { return "must not contain Unicode noncharacters" }
            }
        }
        return nil
    }

    public static func isValid(_ name: String) -> Bool { problem(with: name) == nil }
}
