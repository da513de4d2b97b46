import Foundation

/// Where `swift build` put the executables, for tests that run the real binaries.
public enum BuiltProducts {
    public struct Missing: Error, CustomStringConvertible {
        public var description: String
    }

    /// The folder holding `names` (next to the test bundle, else the package's .build/debug).
    public static func directory(holding names: [String] = ["edge-agent", "aggregator", "roomcast-sim"]) throws -> String {
        var candidates: [String] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            candidates.append(URL(fileURLWithPath: exe).deletingLastPathComponent().path)
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(root.appendingPathComponent(".build/debug").path)
        for dir in candidates where names.allSatisfy({ FileManager.default.isExecutableFile(atPath: "\(dir)/\($0)") }) {
            return dir
        }
        throw Missing(description: "\(names.joined(separator: ", ")) not found in \(candidates); run `swift build --build-tests` first")
    }
}
