import RoomcastAgent
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
}
