import Foundation
import RoomcastCLI
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
}
