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
                if c.value < 0x20 || c.value == 0x7F { return "must not contain control characters" }
            }
        }
        return nil
    }

    public static func isValid(_ name: String) -> Bool { problem(with: name) == nil }
}
