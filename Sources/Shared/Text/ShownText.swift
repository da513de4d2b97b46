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

    /// The config keys whose values are secrets (and everything under `irks`).
    public static let secretKeys: Set<String> = ["irks", "password", "token", "key"]

    /// True when `text` names a secret: one of `secretWords` anywhere, or a secret's entry run
    /// together (`namesSecretEntry`), in any case.
    public static func mentionsSecret(_ text: String) -> Bool {
        let lower = text.lowercased()
        return secretWords.contains(where: { lower.contains($0) }) || namesSecretEntry(lower)
    }

    /// True when a name in `text` followed by `:` or `=` is a secret key's (`secretKeys`), its
    /// `_env` form or a misspelling of it: `password:hunter2` with no space after the colon is one
    /// string in YAML, a key or a value, and `pasword: x` may hold the secret all the same.
    public static func namesSecretEntry(_ text: String) -> Bool {
        var nameStart = text.startIndex
        for i in text.indices where text[i] == ":" || text[i] == "=" {
            let name = text[nameStart..<i].split(separator: " ").last.map { $0.lowercased() } ?? ""
            let base = name.hasSuffix("_env") ? String(name.dropLast(4)) : name
            // `api_key`, `private_key`, `irk_key`: a secret's name at the end of another's.
            if !base.isEmpty, secretKeys.contains(base) || secretKeys.contains(where: base.hasSuffix)
                || Suggestion.closest(to: base, in: secretKeys) != nil { return true }
            nameStart = text.index(after: i)
        }
        return false
    }

    /// A command-line argument in a usage error: its excerpt, or a placeholder when it names a secret.
    public static func argument(_ text: String) -> String {
        mentionsSecret(text) ? "<not shown: it names a secret>" : excerpt(text)
    }
}
