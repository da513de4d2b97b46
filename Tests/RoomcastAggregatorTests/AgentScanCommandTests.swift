import Foundation
import Testing
import TestSupport

/// `edge-agent scan` is a look at the radio: a Pi whose adapter is missing, down or blocked is
/// told so at once, with what to do, and the scan ends (exit 1). It waited for the adapter as the
/// service does, and its warning was wiped by the table's first redraw, leaving "(no beacons in
/// view)" on the screen for as long as the user waited.
@Suite struct AgentScanCommandTests {
    @Test func aScanWithoutItsAdapterSaysWhyAndEnds() async throws {
        let dir = try LiveRig.workDirectory()
        // No machine has hci9: missing here as on a Pi with one adapter (and on a kernel without Bluetooth).
        let scan = try ChildProcess(try LiveRig.executable("edge-agent"), ["scan", "--source", "hci:hci9"],
                                    stdoutPath: "\(dir)/scan.out", stderrPath: "\(dir)/scan.err")
        let status = try await withTimeout(.seconds(30), "edge-agent scan to end") { await scan.waitForExit() }
        #expect(status == 1)
        #expect(scan.stderr.contains("Bluetooth adapter hci9 not found"), "\(scan.stderr.suffix(600))")
    }
}
