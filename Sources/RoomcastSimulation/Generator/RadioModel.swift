import Foundation

/// How a simulated advertisement's RSSI comes about at a receiver: log-distance
/// path loss, per-wall and per-floor loss, a fixed receiver offset, slow shadowing that
/// depends on where the transmitter is (`ShadowingField`), a smaller shadowing that
/// drifts with time (people and doors moving; Gauss–Markov), fast fading, sensitivity
/// and random packet loss.
public struct RadioModel: Sendable, Equatable {
    /// Preset noise levels.
    public enum Noise: String, Sendable, CaseIterable {
        case low, normal, high
    }

    public var pathLossExponent = 2.2
    /// dB per wall crossed on the straight path.
    public var wallLoss = 4.0
    /// Spread of that loss from wall to wall (dB; each wall piece draws its own, once):
    /// real walls differ (plasterboard, brick, a door). Off by default (a diagnostic:
    /// `roomcast-bench simulation --radio wallspread=…`), so every preset's scenarios stay as they were.
    public var wallLossSpread = 0.0
    /// dB per floor between transmitter and receiver.
    public var floorLoss = 15.0
    /// Standard deviation of each receiver's fixed offset, dB.
    public var receiverOffsetSigma = 3.0
    /// Standard deviation of the slow shadowing over space (per receiver), dB.
    public var shadowingSigma = 4.0
    /// Distance over which that shadowing decorrelates (the field's length scale), metres.
    public var shadowingDistance = 1.1
    /// How it decorrelates with distance: exp(−d/ℓ) (Gudmundson's model: rough at short
    /// range, long-tailed; fitted to the recordings, the default) or exp(−d²/2ℓ²)
    /// (smooth; with ℓ = 0.8 m too alike at short range and too unlike beyond 1.5 m to
    /// match the recordings, docs/simulator.md).
    public var shadowingKernel = ShadowingKernel.exponential
    public enum ShadowingKernel: String, Sendable, Equatable { case gaussian, exponential }
    /// Standard deviation of the shadowing that drifts with time on every link, dB: people
    /// moving between beacons and nodes. None in the low and normal presets: in the one long
    /// recording of still beacons (the Daniş office's still spots, 10 minutes or more each) a
    /// link's 1-s levels differ no more 256 s apart than 4 s apart, and without it a robot's
    /// stops vary as the Kolakowski robot's do (1.38 dB within 6 s against its 1.30; 1.55 with a
    /// 2 dB drift). `roomcast-bench radio` measures both. The high preset keeps one (3 dB over
    /// `driftTime`): a busy home.
    public var driftSigma = 0.0
    /// Correlation time of that drift, seconds.
    public var driftTime = 8.0
    /// Standard deviation of per-packet fading, dB.
    public var fadingSigma = 4.0
    /// Standard deviation of the fading that stays while nothing moves (each of the three
    /// advertising channels fades differently at a spot, and a packet arrives on one of
    /// them), dB; 0 = none (the default). A field per receiver and channel over space,
    /// like the shadowing, decorrelating over `frozenFadingDistance` (exp(−d/ℓ)).
    public var frozenFadingSigma = 0.0
    public var frozenFadingDistance = 1.0
    /// Whether a node receives the channels in turn (a scanner that steps through 37, 38,
    /// 39) rather than one at random per packet.
    public var channelsInTurn = false
    /// Chance that a packet also falls into a deep fade (multipath cancelling), and the
    /// mean extra loss of one (dB, exponential): real fading has a heavy lower tail that
    /// Gaussian dB fading lacks. Off by default (a diagnostic: `--radio deepfade=…`).
    public var deepFadeProbability = 0.0
    public var deepFadeDepth = 10.0
    /// Packets below this RSSI are not received, dBm.
    public var sensitivity = -98.0
    /// Probability that a receiver misses a packet regardless of its strength.
    public var lossProbability = 0.1
    /// Standard deviation of a beacon's true 1 m power around what it advertises, dB.
    public var powerSpread = 2.0

    public init(noise: Noise = .normal) {
        switch noise {
        case .low:
            receiverOffsetSigma = 1; shadowingSigma = 2; fadingSigma = 2; lossProbability = 0.05
            powerSpread = 1
        case .normal:
            break
        case .high:
            receiverOffsetSigma = 5; shadowingSigma = 6; driftSigma = 3; fadingSigma = 6; lossProbability = 0.2
            powerSpread = 3
            wallLoss = 3
        }
    }

    /// Noise-free mean RSSI at `distance` metres through `walls` walls and `floors` floors.
    public func meanRSSI(power: Double, distance: Double, walls: Int, floors: Int) -> Double {
        let d = max(distance, 0.1)
        return power - 10 * pathLossExponent * log10(d) - wallLoss * Double(walls) - floorLoss * Double(floors)
    }
}
