import Foundation

/// Paths of the package's own executables (built by `swift build --build-tests`),
/// for tests that run them as a user would.
public enum BuiltExecutable {
    /// The path of `name` (e.g. `edge-agent`), or nil when it has not been built.
    public static func path(_ name: String, file: String = #filePath) -> String? {
        var candidates: [URL] = []
        // Next to the test bundle: .build/<triple>/debug/RoomcastPackageTests.xctest
        for arg in [CommandLine.arguments.first, Bundle.main.executablePath].compactMap({ $0 }) {
            var url = URL(fileURLWithPath: arg)
            for _ in 0..<4 {
                url.deleteLastPathComponent()
                candidates.append(url.appendingPathComponent(name))
            }
        }
        // The package's default build folder.
        var root = URL(fileURLWithPath: file)
        for _ in 0..<3 { root.deleteLastPathComponent() }
        candidates.append(root.appendingPathComponent(".build/debug/\(name)"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }?.path
    }

    /// Runs `name` with `arguments` to completion; returns exit status, stdout and stderr.
    /// `environment` is added to this process's own.
    public static func run(_ name: String, _ arguments: [String], environment: [String: String] = [:],
                           timeout: Duration = .seconds(60)) async throws
        -> (status: Int32, stdout: String, stderr: String) {
        guard let path = path(name) else { throw CocoaError(.fileNoSuchFile) }
        let dir = NSTemporaryDirectory() + "roomcast-run-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let child = try ChildProcess(path, arguments, stdoutPath: dir + "/out", stderrPath: dir + "/err",
                                     environment: environment.isEmpty ? nil
                                         : ProcessInfo.processInfo.environment.merging(environment) { $1 })
        let status = try await withTimeout(timeout, "\(name) to exit") { await child.waitForExit() }
        return (status, child.stdout, child.stderr)
    }
}
