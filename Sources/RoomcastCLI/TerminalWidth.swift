/// How many terminal columns text takes: East Asian wide and fullwidth characters and emoji take
/// two, combining marks and format characters none, the rest one; a character of several scalars
/// (an emoji sequence, a flag) as much as its widest. Tables padded by character
/// count ran past their width on a name like `客厅温度计` (five characters, ten columns).
public enum TerminalWidth {
    public static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + columns($1) }
    }

    /// A character as the terminal draws it: one glyph, however many scalars make it (an emoji
    /// joined by zero-width joiners, a flag of two regional indicators, a letter and its accents),
    /// as wide as its widest; two for a text symbol asked to look like an emoji (U+FE0F).
    static func columns(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        if scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        return scalars.map(columns).max() ?? 0
    }

    static func columns(_ scalar: Unicode.Scalar) -> Int {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if scalar.properties.isEmojiPresentation { return 2 }
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }

    /// The longest start of `text` that fits in `width` columns.
    public static func prefix(_ text: String, fitting width: Int) -> String {
        var used = 0
        var out = ""
        for character in text {
            let w = of(String(character))
            if used + w > width { break }
            used += w
            out.append(character)
        }
        return out
    }

    /// The longest end of `text` that fits in `width` columns.
    public static func suffix(_ text: String, fitting width: Int) -> String {
        var used = 0
        var out: [Character] = []
        for character in text.reversed() {
            let w = of(String(character))
            if used + w > width { break }
            used += w
            out.append(character)
        }
        return String(out.reversed())
    }
}
