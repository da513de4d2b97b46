import Foundation

/// ANSI sequences for views refreshed in place (`edge-agent scan`, `aggregator watch`).
public enum TerminalScreen {
    /// Cursor home, then clear the screen.
    public static let clear = "\u{1B}[H\u{1B}[2J"

    /// The width of the terminal `output` is on, else `COLUMNS`, else 80 (a pipe, a file). A
    /// table drawn wider than the terminal wraps every row into a jumble.
    public static func columns(of output: Int32 = STDOUT_FILENO,
                               environment: [String: String] = ProcessInfo.processInfo.environment) -> Int {
        var size = winsize()
        if ioctl(output, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        if let text = environment["COLUMNS"], let n = Int(text), n > 0 { return n }
        return 80
    }
}
