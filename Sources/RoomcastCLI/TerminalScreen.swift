/// ANSI sequences for views refreshed in place (`edge-agent scan`, `aggregator watch`).
public enum TerminalScreen {
    /// Cursor home, then clear the screen.
    public static let clear = "\u{1B}[H\u{1B}[2J"
}
