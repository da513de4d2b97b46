import Foundation
import Shared
import Testing
@testable import RoomcastSimulation
import TestSupport

/// The simulator's radio against what the Kolakowski recordings show (docs/simulator.md,
/// Radio): how shadowing falls off with distance, and how much links vary over time for a
/// robot stopped and moving, like for like.
@Suite("Simulation radio: like the recordings")
struct RadioRealismTests {
    /// Correlation of each field with itself `d` metres away, over 50 fields × 400 random
    /// spots in a 10 m square, and the fields' standard deviation.
    static func correlations(_ kernel: RadioModel.ShadowingKernel, length: Double,
                             at distances: [Double]) -> (sd: Double, r: [Double]) {
        var sums = distances.map { _ in (vw: 0.0, vv: 0.0, ww: 0.0) }
        var squares = 0.0, count = 0.0
        for f in 0..<50 {
            var rng = Shared.SeededRandom(seed: UInt64(f), stream: "field")
            let field = ShadowingField(sigma: 4, correlationDistance: length, kernel: kernel, rng: &rng)
            var spots = Shared.SeededRandom(seed: 99, stream: "spots")
            for _ in 0..<400 {
                let x = spots.uniform(0, 10), y = spots.uniform(0, 10)
                let v = field.value(x: x, y: y, z: 1)
                squares += v * v
                count += 1
                for (k, d) in distances.enumerated() {
                    let a = spots.uniform(0, 2 * Double.pi)
                    let w = field.value(x: x + d * cos(a), y: y + d * sin(a), z: 1)
                    sums[k].vw += v * w; sums[k].vv += v * v; sums[k].ww += w * w
                }
            }
        }
        return ((squares / count).squareRoot(), sums.map { $0.vw / ($0.vv * $0.ww).squareRoot() })
    }

    @Test("shadowing falls off as exp(-d/1.1 m), as the recording's does; the old smooth field as exp(-d²/2ℓ²)")
    func falloff() async {
        #expect(RadioModel().shadowingKernel == .exponential && RadioModel().shadowingDistance == 1.1)
        let distances = [0.22, 0.45, 0.8, 2.0]
        // The recording's correlations at those distances, divided by the same spot's (0.75).
        let recorded = [0.81, 0.65, 0.49, 0.16]
        let (rough, smooth) = await offPool {
            (Self.correlations(.exponential, length: 1.1, at: distances), Self.correlations(.gaussian, length: 0.8, at: distances))
        }
        #expect(abs(rough.sd - 4) < 0.3 && abs(smooth.sd - 4) < 0.3, "\(rough.sd) \(smooth.sd)")
        for (k, d) in distances.enumerated() {
            #expect(abs(rough.r[k] - exp(-d / 1.1)) < 0.05, "exponential at \(d) m: \(rough.r[k])")
            #expect(abs(smooth.r[k] - exp(-d * d / (2 * 0.64))) < 0.05, "Gaussian at \(d) m: \(smooth.r[k])")
            #expect(abs(rough.r[k] - recorded[k]) < 0.06, "exponential at \(d) m: \(rough.r[k]) vs \(recorded[k])")
        }
        // The smooth field is too alike at short range.
        #expect(smooth.r[0] - recorded[0] > 0.1 && smooth.r[1] - recorded[1] > 0.1, "\(smooth.r)")
    }

    @Test("a robot touring a simulated home varies like the recorded one: normal within a quarter, high far beyond")
    func spreadLikeTheRecording() async {
        @Sendable func spread(_ noise: RadioModel.Noise) -> RadioSpread {
            var s = SimulationSettings(plan: .flat, seed: 1, duration: 1200)
            s.radio = RadioModel(noise: noise)
            return ScenarioSimulator(settings: s).radioSpread()
        }
        let recorded = RadioSpread.recording
        let (normal, high) = await offPool { (spread(.normal), spread(.high)) }
        #expect(normal.stoppedWindows > 20 && normal.movingWindows > 50, "\(normal)")
        #expect(abs(normal.stopped / recorded.stopped - 1) < 0.25, "\(normal)")
        #expect(abs(normal.moving / recorded.moving - 1) < 0.25, "\(normal)")
        // Moving adds what the spot's shadowing changes, as in the recording.
        #expect(normal.moving > normal.stopped + 0.4, "\(normal)")
        #expect(high.stopped > 1.5 * recorded.stopped, "\(high)")
    }

    @Test("fading frozen per advertising channel steadies the 1-s means of a standing tag, not its packets")
    func frozenFading() async {
        @Sendable func spread(frozen: Double, fading: Double) -> RadioSpread {
            var s = SimulationSettings(plan: .flat, seed: 1, duration: 1200)
            s.radio.frozenFadingSigma = frozen
            s.radio.fadingSigma = fading
            return ScenarioSimulator(settings: s).radioSpread()
        }
        // The same fading per packet (4.27 dB), fresh for every packet or mostly frozen.
        let (fresh, frozen) = await offPool { (spread(frozen: 0, fading: 4.27), spread(frozen: 4, fading: 1.5)) }
        #expect(frozen.stopped < fresh.stopped - 0.2, "1-s means of a standing tag: \(frozen.stopped) vs \(fresh.stopped)")
        #expect(abs(frozen.stoppedStep / fresh.stoppedStep - 1) < 0.2, "packet to packet: \(frozen.stoppedStep) vs \(fresh.stoppedStep)")
        // Moving, it decorrelates and the 1-s means vary as much as with fresh fading.
        #expect(frozen.moving > fresh.moving - 0.1, "\(frozen.moving) vs \(fresh.moving)")
        // Two packets on one channel of a standing tag differ by the small fresh part only.
        #expect(frozen.stoppedRepeats > fresh.stoppedRepeats, "\(frozen.stoppedRepeats) vs \(fresh.stoppedRepeats)")
        // Off by default, so every scenario keeps its packets.
        #expect(RadioModel().frozenFadingSigma == 0)
    }

    @Test("channel fading received in turn, with the spot's shadowing refitted, varies like the recording packet to packet and second to second")
    func channelFadingFitsTheRecording() async {
        let fitted = await offPool { () -> RadioSpread in
            var s = SimulationSettings(plan: .flat, seed: 1, duration: 1200)
            s.radio.frozenFadingSigma = 6.5
            s.radio.frozenFadingDistance = 0.5
            s.radio.channelsInTurn = true
            s.radio.fadingSigma = 2
            s.radio.shadowingSigma = 1.4
            // Fitted with the drift the normal preset had then (RadioModel.driftSigma).
            s.radio.driftSigma = 2
            return ScenarioSimulator(settings: s).radioSpread()
        }
        let recorded = RadioSpread.recording
        for (name, ours, theirs) in [("stopped", fitted.stopped, recorded.stopped), ("moving", fitted.moving, recorded.moving),
                                     ("step stopped", fitted.stoppedStep, recorded.stoppedStep),
                                     ("step moving", fitted.movingStep, recorded.movingStep)] {
            #expect(abs(ours / theirs - 1) < 0.15, "\(name): \(ours) vs the recording's \(theirs)")
        }
        // The default is 1.6 times steadier packet to packet than the recording.
        let normal = await offPool { ScenarioSimulator(settings: SimulationSettings(plan: .flat, seed: 1, duration: 1200)).radioSpread() }
        #expect(normal.stoppedStep < 0.7 * recorded.stoppedStep, "\(normal.stoppedStep)")
    }
}
