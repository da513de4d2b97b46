/// A word as a POSIX shell reads it back unchanged: hints in the log name commands to copy and
/// paste, and a topic holds whatever its publisher wrote (a space, a `'` in a node's name).
public enum ShellWord {
    /// `text` as one shell word: bare when it is only characters no shell treats specially, else
    /// in single quotes, each `'` written `'\''`.
    public static func quoted(_ text: String) -> String {
        let plain = !text.isEmpty && text.unicodeScalars.allSatisfy { s in
            (s >= "a" && s <= "z") || (s >= "A" && s <= "Z") || (s >= "0" && s <= "9") || "/-_.:@%+=,".unicodeScalars.contains(s)
        }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// `quoted(text)` for a hint in a log line's metadata, nil where the log would change it: the
    /// log escapes `\`, `"` and control characters in a quoted value, so a `'` (written with a
    /// `\`) or any of those would reach the reader as other words than the ones meant, and a
    /// pasted command as another command.
    public static func quotedForLog(_ text: String) -> String? {
        let unsafe = text.unicodeScalars.contains { s in s == "'" || s == "\"" || s == "\\" || ControlCharacters.isControl(s) }
        return unsafe ? nil : quoted(text)
    }
}
