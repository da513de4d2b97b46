import Foundation
import Shared
import Synchronization
import RoomcastCLI
import RoomcastConfig
import RoomcastFusion
import RoomcastYAML

/// A benchmark's action: its synchronous body runs on a thread of its own, because it waits
/// for async steps with semaphores (`awaitResult`), which must not block the cooperative
/// pool. A usage error ends it with 64, any other error with 1.
func benchmark(_ body: @escaping @Sendable (ParsedCommand) throws -> Void) -> CommandAction.Body {
    { command, out in
        await withCheckedContinuation { (done: CheckedContinuation<ExitCode, Never>) in
            let thread = Thread {
                do {
                    try body(command)
                    done.resume(returning: .success)
                } catch let error as UsageError {
                    out.errorOutput(error.description + "\n")
                    done.resume(returning: .usage)
                } catch {
                    out.errorOutput("roomcast-bench: \(error)\n")
                    done.resume(returning: .failure)
                }
            }
            thread.stackSize = 8 << 20  // 8 MiB, as the main thread has
            thread.start()
        }
    }
}

/// A count above zero (`--reports 3_000_000`: underscores allowed).
struct Count: OptionValue, ExpressibleByIntegerLiteral {
    var value: Int

    init(integerLiteral value: Int) { self.value = value }

    static func fromOption(_ text: String) -> Count? {
        guard let n = Int(text.replacingOccurrences(of: "_", with: "")), n > 0 else { return nil }
        return Count(integerLiteral: n)
    }

    var optionText: String { String(value) }
}

/// A finite number above zero (seconds, rates).
struct Positive: OptionValue, ExpressibleByFloatLiteral, ExpressibleByIntegerLiteral {
    var value: Double

    init(floatLiteral value: Double) { self.value = value }
    init(integerLiteral value: Int) { self.value = Double(value) }

    static func fromOption(_ text: String) -> Positive? {
        guard let v = Double(text.replacingOccurrences(of: "_", with: "")), v.isFinite, v > 0 else { return nil }
        return Positive(floatLiteral: v)
    }

    var optionText: String { value.optionText }
}

/// Options more than one benchmark takes.
enum BenchOptions {
    /// The `edge-agent` to measure.
    static let agent = Option<String?>("agent", value: "path", help: "The edge-agent to measure.",
                                       shownDefault: "the one next to roomcast-bench")

    /// The `edge-agent` named by `--agent`, or the one built next to this program.
    static func agentPath(_ command: ParsedCommand) -> String {
        command[agent]
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("edge-agent").path
    }

    static let fusionConfig = Option<String?>(
        "fusion-config", value: "file", help: "The engine's fusion settings: a file of the config's fusion: keys (YAML or JSON).")
    static let radio = Option<String?>(
        "radio", value: "k=v,...",
        help: "Radio model fields over the noise preset (diagnostics): exponent, wall, offset, shadowing, distance, drift, "
            + "fading, loss, spread, deepfade (chance of a deep fade per packet), deepdepth (its mean, dB), wallspread (how "
            + "much walls differ in loss, dB), kernel (shadowing's fall-off: 1 exponential, the default; 0 Gaussian), frozen "
            + "(fading per advertising channel that stays at a spot, dB), frozendistance (its fall-off, m), inturn (1: "
            + "channels received in turn; docs/simulator.md, Radio).")

    /// The fusion settings of `--fusion-config` (or `option`), or nil when not given.
    static func fusionSettings(_ command: ParsedCommand, _ option: Option<String?> = fusionConfig) throws -> FusionSettings? {
        guard let path = command[option] else { return nil }
        return try ConfigLoader.load(FusionSettings.self, from: path)
    }
}

/// Waits for an async step from a benchmark's synchronous body, which runs on a thread of its
/// own (`benchmark`): the semaphore blocks only that thread, never the cooperative pool.
func awaitResult<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
        done.signal()
    }
    done.wait()
    return try box.get()
}

final class ResultBox<T: Sendable>: Sendable {
    private let value = Mutex<Result<T, any Error>?>(nil)
    func set(_ v: Result<T, any Error>) { value.withLock { $0 = v } }
    func get() throws -> T { try value.withLock { $0 }!.get() }
}
