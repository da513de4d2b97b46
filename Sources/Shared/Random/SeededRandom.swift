import Foundation

/// SplitMix64: a small, fast generator whose sequence is fixed by its seed on every
/// platform and toolchain, so a simulation seed always produces the same scenario.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// A generator for a sub-stream (e.g. one beacon), independent of draws elsewhere.
    public init(seed: UInt64, stream: String) {
        state = seed ^ FNV1a.hash(stream)
        _ = next()
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func uniform() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }

    /// Uniform in [a, b).
    public mutating func uniform(_ a: Double, _ b: Double) -> Double { a + (b - a) * uniform() }

    /// Uniform integer in 0..<n (n > 0).
    public mutating func index(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }

    /// Standard normal (Box–Muller).
    public mutating func gaussian() -> Double {
        let u = max(uniform(), 1e-300), v = uniform()
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }

    /// Exponential with the given mean.
    public mutating func exponential(mean: Double) -> Double { -mean * log(max(1 - uniform(), 1e-300)) }

    /// True with probability p.
    public mutating func chance(_ p: Double) -> Bool { uniform() < p }
}
