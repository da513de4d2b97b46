import Foundation
import Shared

/// Slow shadowing as a function of *where* the transmitter is: a smooth Gaussian random
/// field over space, one per receiver, with standard deviation `sigma` and correlation
/// exp(−d² / 2ℓ²) between points `d` apart (ℓ = `correlationDistance`).
///
/// Why over space and not over time: furniture, walls and multipath make each spot read
/// a few dB high or low from a given receiver, and that bias stays while the tag stays.
/// In the Kolakowski recordings a stopped robot's 1-s means vary by 1.3 dB within 6 s
/// (about what fading alone gives at its packet rate), a moving one's by 2.4 dB: the slow
/// part changes as the tag moves, not as time passes. A still beacon therefore sees a
/// steady bias (which costs accuracy, not stability), a walking one sees it change every
/// metre or so.
///
/// Built from random Fourier features (Rahimi & Recht): Σ cos(ω·p + φ) with ω drawn from
/// the kernel's spectrum, N(0, I/ℓ²). Deterministic for a seed and stream.
struct ShadowingField: Sendable {
    private var frequencies: [(Double, Double, Double)] = []
    private var phases: [Double] = []
    private var amplitude = 0.0

    /// A field of `features` cosines; `sigma` 0 gives a field that is 0 everywhere.
    init(sigma: Double, correlationDistance: Double, kernel: RadioModel.ShadowingKernel = .gaussian, features: Int = 64,
         rng: inout SeededRandom) {
        guard sigma > 0, correlationDistance > 0, features > 0 else { return }
        let scale = 1 / correlationDistance
        for _ in 0..<features {
            var w = (rng.gaussian() * scale, rng.gaussian() * scale, rng.gaussian() * scale)
            phases.append(rng.uniform(0, 2 * Double.pi))
            if kernel == .exponential {
                // The exponential kernel's spectrum is a multivariate Cauchy: a Gaussian
                // frequency over |N(0, 1)|.
                let u = max(abs(rng.gaussian()), 1e-3)
                w = (w.0 / u, w.1 / u, w.2 / u)
            }
            frequencies.append(w)
        }
        amplitude = sigma * (2 / Double(features)).squareRoot()
    }

    /// The field at (x, y, z), metres (z absolute: floors apart are far apart).
    func value(x: Double, y: Double, z: Double) -> Double {
        var sum = 0.0
        for (k, w) in frequencies.enumerated() {
            sum += cos(w.0 * x + w.1 * y + w.2 * z + phases[k])
        }
        return amplitude * sum
    }
}
