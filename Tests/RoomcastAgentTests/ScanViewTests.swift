import Foundation
import RoomcastCLI
import Shared
import Testing
import TestSupport

/// `edge-agent scan` as a user runs it: the table fits the terminal it is drawn on.
@Suite struct ScanViewTests {
    /// Its widest line at `columns` (told by `COLUMNS`: its output here is a file, no terminal),
    /// and whether the listed iBeacon's whole id is shown.
    static func drawn(columns: Int) async throws -> (widest: Int, wholeID: Bool) {
        let path = try ReplayServiceTests.capture()
        let run = try await BuiltExecutable.run("edge-agent", ["scan", "--source", "btsnoop:\(path)", "--speed", "5"],
                                                environment: ["COLUMNS": "\(columns)"])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.replacingOccurrences(of: TerminalScreen.clear, with: "\n").split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("BEACON") }, "no table drawn: \(run.stdout)")
        return (lines.map(\.count).max() ?? 0, run.stdout.contains("ibeacon:\(CaptureBuilder.uuid.lowercased())-1-2"))
    }

    @Test func theTableIsDrawnToTheTerminalsWidth() async throws {
        let narrow = try await Self.drawn(columns: 70)
        #expect(narrow.widest <= 70 && !narrow.wholeID)
        // Wide enough for the whole id: shown whole, past the 80 columns of a pipe.
        let wide = try await Self.drawn(columns: 140)
        #expect(wide.widest > 80 && wide.widest <= 140 && wide.wholeID)
    }

    /// `sudo edge-agent scan -c /etc/roomcast/agent.yaml`: sudo passes no environment, so the
    /// HTTP token's variable is unset. `scan` opens no listener and needs no token.
    @Test func scanRunsWithTheHTTPTokenItDoesNotUseUnset() async throws {
        let path = try ReplayServiceTests.capture()
        let config = NSTemporaryDirectory() + "roomcast-scan-\(UUID().uuidString).yaml"
        defer { unlink(config) }
        try "node: hall-pi\nhttp:\n  listen: 127.0.0.1:9\n  token_env: ROOMCAST_TEST_UNSET_TOKEN\n"
            .write(toFile: config, atomically: true, encoding: .utf8)
        let scan = try await BuiltExecutable.run("edge-agent", ["scan", "--json", "-c", config, "--source", "btsnoop:\(path)", "--speed", "max"])
        #expect(scan.status == 0, "\(scan.stderr)")
        #expect(scan.stdout.contains(CaptureBuilder.uuid.lowercased()), "\(scan.stdout)")
        // `run` does open it, and refuses the config.
        let run = try await BuiltExecutable.run("edge-agent", ["run", "--dry-run", "-c", config, "--source", "btsnoop:\(path)", "--speed", "max"])
        #expect(run.status == 78 && run.stderr.contains("http.token_env"), "\(run.stderr)")
    }

    /// `scan --json` is one reading a line, for tools. On a node named `beacons` (the host name
    /// `scan` takes without a config), telemetry's topic has `/beacons/` in it too: still none.
    @Test func scanJSONIsReadingsOnlyWhateverTheNodeIsCalled() async throws {
        let path = try ReplayServiceTests.capture()
        let config = NSTemporaryDirectory() + "roomcast-scan-\(UUID().uuidString).yaml"
        defer { unlink(config) }
        try "node: beacons\n".write(toFile: config, atomically: true, encoding: .utf8)
        let scan = try await BuiltExecutable.run("edge-agent", ["scan", "--json", "-c", config, "--source", "btsnoop:\(path)",
                                                               "--speed", "max"])
        #expect(scan.status == 0, "\(scan.stderr)")
        let lines = scan.stdout.split(separator: "\n")
        #expect(!lines.isEmpty)
        for line in lines {
            #expect((try? WireFormat.decode(BeaconReading.self, from: Array(line.utf8))) != nil, "not a reading: \(line)")
        }
    }

    /// A capture transmits nothing: `advertise` from one is a usage error, not "advertising".
    @Test func advertiseFromACaptureIsAUsageError() async throws {
        let path = try ReplayServiceTests.capture()
        let run = try await BuiltExecutable.run("edge-agent", ["advertise", "--uuid", CaptureBuilder.uuid, "--source", "btsnoop:\(path)"])
        #expect(run.status == 64 && run.stderr.contains("advertise needs a radio"), "\(run.stderr)")
    }
}
