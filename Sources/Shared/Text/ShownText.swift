/// Text a user typed (a command-line argument, a config value) as an error message may show it:
/// never a password, and never long enough to flood a log.
public enum ShownText {
    /// Words that, anywhere in a text, may mean a secret follows: the env file's
    /// `ROOMCAST_MQTT_PASSWORD=…`, or `password:hunter2` folded into the value before it.
    static let secretWords = ["password", "passwd", "token", "secret"]

    /// `text` cut past 60 characters, without the password of anything written as
    /// `[scheme://]user:password@host`.
    public static func excerpt(_ text: String) -> String {
        var text = text
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        if let at = text[start...].lastIndex(of: "@"), let colon = text[start..<at].firstIndex(of: ":") {
            text = String(text[..<colon]) + ":***" + String(text[at...])
        }
        return text.count <= 60 ? text : String(text.prefix(57)) + "..."
    }

    /// True when `text` names a secret: one of `secretWords`, or a `key` given a value
    /// (`key=…`, `key: …`), in any case.
    public static func mentionsSecret(_ text: String) -> Bool {
        let lower = text.lowercased()
        if secretWords.contains(where: { lower.contains($0) }) { return true }
        var rest = lower[...]
        while let found = rest.range(of: "key") {
            if let next = rest[found.upperBound...].first(where: { $0 != " " }), next == "=" || next == ":" { return true }
            rest = rest[found.upperBound...]
        }
        return false
    }

    /// A command-line argument in a usage error: its excerpt, or a placeholder when it names a secret.
    public static func argument(_ text: String) -> String {
        mentionsSecret(text) ? "<not shown: it names a secret>" : excerpt(text)
    }
}
