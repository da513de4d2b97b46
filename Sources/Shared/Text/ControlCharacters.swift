/// Control characters in text from the network: a beacon's name in a reading or a retained
/// presence reaches terminals (`aggregator watch`), journals and Home Assistant, where an
/// escape sequence would drive the terminal (retitle it, clear it, write its clipboard) and a
/// line break would forge a line.
public enum ControlCharacters {
    /// C0 (line breaks and escapes among them), DEL, C1, and the Unicode line and paragraph
    /// separators.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029
    }

    public static func contains(_ text: String) -> Bool { text.unicodeScalars.contains(where: isControl) }

    /// `text` with each control character shown as `?`, for a terminal.
    public static func replaced(in text: String) -> String {
        guard contains(text) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) ? "?" : $0 }))
    }

    /// `text` of several lines (its own line breaks kept) with every other control character
    /// shown as `?`: a report printed whole that quotes what the network sent.
    public static func replacedInLines(of text: String) -> String {
        guard contains(text) else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { replaced(in: String($0)) }.joined(separator: "\n")
    }
}
