@testable import RoomcastAgent
import RoomcastConfig
import RoomcastHCI
import Testing

/// The agent config's `scan:` section as the radio gets it.
@Suite struct RadioOptionsTests {
    /// `scan.restart_after_s: 0` is documented to disable the restarts of a silent scan; it
    /// reached the radio as a stall timeout of 0, which restarted the scan at every check.
    @Test(arguments: [(0.0, false), (60.0, true)])
    func restartAfterReachesTheRecoveryPolicy(seconds: Double, watches: Bool) throws {
        let config = try ConfigLoader.parse(AgentConfig.self, yaml: "node: hall-pi\nscan:\n  restart_after_s: \(seconds)\n")
        let policy = try config.radioOptions(record: nil).recovery
        #expect(policy.stallTimeout == seconds)
        #expect(policy.watchesStalls == watches)
    }

    /// `run --record FILE` bounds the capture: 64 MB per file unless `--record-limit` says
    /// otherwise, and a limit of 0 is refused rather than rotating at every flush.
    @Test func theRecordLimitReachesTheRadio() throws {
        func prepare(_ extra: [String]) throws -> Result<RadioOptions, EdgeAgentCLI.Refusal> {
            let outcome = try EdgeAgentCLI.spec.parse(["run", "--node", "hall-pi", "--source", "h4:/dev/null"] + extra)
            guard case .run(let parsed) = outcome else { throw CancellationError() }
            do throws(EdgeAgentCLI.Refusal) { return .success(try EdgeAgentCLI.prepare(parsed, scan: false).options) } catch {
                return .failure(error)
            }
        }
        #expect(try prepare([]).get().recordFileLimit == nil)
        #expect(try prepare(["--record", "/tmp/x.btsnoop"]).get().recordFileLimit == 64_000_000)
        #expect(try prepare(["--record", "/tmp/x.btsnoop", "--record-limit", "5"]).get().recordFileLimit == 5_000_000)
        guard case .failure(let refusal) = try prepare(["--record", "/tmp/x.btsnoop", "--record-limit", "0"]) else {
            Issue.record("a limit of 0 was taken"); return
        }
        #expect(refusal.message.contains("--record-limit must be"), "\(refusal.message)")
        #expect(refusal.code == .usage)
    }
}
