import Shared
import Testing
@testable import RoomcastLogging

/// A log line cannot be forged from a value that came from the network: no control character
/// reaches the output raw (journald ends a record at a NUL; CR and ESC rewrite a terminal's line).
@Suite struct LogLineTests {
    static func raw(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) || $0.value == 0x2028 || $0.value == 0x2029 }
    }

    @Test(arguments: ["a\u{0}<2>aggregator: forged", "a\rb", "a\u{1b}[2Kb", "a\u{2028}b", "a\nb", "tab\there", "del\u{7f}", "c1\u{85}"])
    func noControlCharacterIsWrittenRaw(_ value: String) {
        let quoted = StderrLogHandler.quote(value)
        #expect(!Self.raw(quoted), "\(quoted.debugDescription)")
        #expect(quoted.hasPrefix("\"") && quoted.hasSuffix("\""), "a value with a control character is quoted")
        #expect(!Self.raw(StderrLogHandler.escaped(value, quotes: false)))
    }

    @Test func plainValuesStayBareAndQuotedOnesReadBack() {
        #expect(StderrLogHandler.quote("hall-pi") == "hall-pi")
        #expect(StderrLogHandler.quote("two words") == #""two words""#)
        #expect(StderrLogHandler.quote(#"say "hi" \ bye"#) == #""say \"hi\" \\ bye""#)
        #expect(StderrLogHandler.quote("a\u{0}b") == #""a\u{0}b""#)
        #expect(StderrLogHandler.quote("") == #""""#)
    }

    /// A command in a hint is pasted from the log as the log shows it: a shell word that the log's
    /// quoting would change (a `'`, written with a `\`; a `"`; a control character) is not given
    /// as one, so a stranger's topic `x';touch /tmp/p;'` cannot make the pasted command another.
    @Test(arguments: ["roomcast/nodes/attic-pi/status", "roomcast/nodes/Bob pi/status", "x';touch /tmp/p;'", "a\\b", "say \"hi\"",
                      "line\nbreak", "esc\u{1b}[2J", "$(reboot)", "`reboot`", "a;b|c&d"])
    func aHintsShellWordReadsInTheLogAsItIsMeant(_ text: String) {
        guard let word = ShellWord.quotedForLog(text) else {
            #expect(text.contains("'") || text.contains("\"") || text.contains("\\") || Self.raw(text), "\(text) refused")
            return
        }
        let hint = "mosquitto_pub -r -n -t " + word
        #expect(StderrLogHandler.quote(hint) == "\"" + hint + "\"", "the log shows the command as made")
        #expect(word == ShellWord.quoted(text))
        // Single-quoted (or bare), nothing in it is run: no `'` inside to end the quote.
        #expect(word.hasPrefix("'") ? word.dropFirst().dropLast().allSatisfy { $0 != "'" } : !word.contains { " ;|&$`()".contains($0) })
    }
}
