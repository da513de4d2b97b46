/// Capped exponential growth of a wait: the one backoff rule that reconnects (MQTT) and
/// adapter reopening (HCI) share.
public enum Backoff {
    /// `initial` multiplied by `multiplier` once per step, `steps` times (none when 0 or
    /// less), stopping as soon as it reaches `maximum`, and at most `maximum`. It multiplies
    /// step by step instead of calling pow(), whose large exponents overflow to infinity.
    public static func delay(initial: Double, multiplier: Double, maximum: Double, steps: Int) -> Double {
        var d = initial
        for _ in 0..<max(steps, 0) where d < maximum { d *= multiplier }
        return min(d, maximum)
    }
}
