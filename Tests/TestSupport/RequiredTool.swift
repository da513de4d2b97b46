import Foundation
import Testing

/// A program that integration tests run for real (a broker, the controller emulator, btmon).
///
/// A test that needs one declares it with a trait (`.requiresMosquitto`, `.requiresBTVirt`,
/// `.requiresBtmon`). Where the program is missing the test is reported as skipped, with the
/// package to install. Under CI (`CI=true`) it is never skipped: it runs, and `require()` (called
/// where the test starts the program) fails it with the same advice, so a CI image that lost a
/// package cannot pass by running fewer tests.
public struct RequiredTool: Sendable {
    /// The name used in messages and in `ROOMCAST_TEST_MISSING`.
    public let name: String
    /// Where it may be installed, in order.
    public let candidates: [String]
    /// How to install it.
    public let install: String

    public init(name: String, candidates: [String], install: String) {
        self.name = name
        self.candidates = candidates
        self.install = install
    }

    /// Lists tools (comma- or space-separated) to treat as missing, so the skip and CI-failure
    /// paths can be exercised on a machine that has them:
    /// `ROOMCAST_TEST_MISSING=mosquitto,btvirt,btmon,systemd-analyze swift test --filter …`.
    public static let missingKey = "ROOMCAST_TEST_MISSING"

    /// True under CI (`CI=true` or `CI=1`), where a missing tool fails tests instead of skipping them.
    public static var isCI: Bool {
        let v = ProcessInfo.processInfo.environment["CI"]?.lowercased()
        return v == "true" || v == "1"
    }

    private var isHidden: Bool {
        let listed = ProcessInfo.processInfo.environment[Self.missingKey] ?? ""
        return listed.split(whereSeparator: { $0 == "," || $0 == " " }).contains { $0 == name }
    }

    /// The installed program, or nil.
    public var path: String? {
        guard !isHidden else { return nil }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    public var isInstalled: Bool { path != nil }

    /// Whether tests that need it run: when installed, and always under CI (where they then fail).
    public var shouldRun: Bool { Self.isCI || isInstalled }

    /// The reason shown for a skipped test.
    public var skipReason: Comment {
        Comment(rawValue: "\(name) is not installed (\(install)); with CI=true this test fails instead of skipping")
    }

    /// Why a test cannot run, thrown by `require()`.
    public struct Missing: Error, CustomStringConvertible {
        public let description: String
    }

    /// The program's path; throws, naming the package, when it is missing.
    public func require() throws(Missing) -> String {
        if let path { return path }
        throw Missing(description: "\(name) is missing (looked in \(candidates.joined(separator: ", "))): \(install)"
            + (Self.isCI ? "; CI=true, so tests that need it fail instead of skipping" : ""))
    }
}

extension RequiredTool {
    /// The MQTT broker (`MosquittoBroker`).
    public static let mosquitto = RequiredTool(
        name: "mosquitto", candidates: ["/usr/sbin/mosquitto"],
        install: "apt install mosquitto mosquitto-clients, or scripts/setup.sh")
    /// BlueZ's controller emulator (`BTVirt`).
    public static let btvirt = RequiredTool(
        name: "btvirt",
        candidates: ["/usr/bin/btvirt", "/usr/lib/bluetooth/btvirt", "/usr/libexec/bluetooth/btvirt", "/usr/local/bin/btvirt"],
        install: "apt install bluez-test-tools, or scripts/setup.sh")
    /// BlueZ's packet monitor, which reads btsnoop captures with `btmon -r`.
    public static let btmon = RequiredTool(
        name: "btmon", candidates: ["/usr/bin/btmon"], install: "apt install bluez, or scripts/setup.sh")
    /// systemd's analyzer, which scores a unit's sandbox offline (`systemd-analyze security --offline=true`).
    public static let systemdAnalyze = RequiredTool(
        name: "systemd-analyze", candidates: ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"],
        install: "apt install systemd, or scripts/setup.sh")
}

extension RequiredTool {
    /// A headless browser for the dashboard tests (`chromium --headless --dump-dom`).
    public static let chromium = RequiredTool(
        name: "chromium", candidates: ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"],
        install: "apt install chromium, or scripts/setup.sh")
    /// The Prometheus server, which the metrics test runs to scrape `/metrics`.
    public static let prometheus = RequiredTool(
        name: "prometheus", candidates: ["/usr/bin/prometheus"], install: "apt install prometheus, or scripts/setup.sh")
}

extension Trait where Self == ConditionTrait {
    /// Runs the test or suite when chromium is installed, always under CI; skipped (and said so) otherwise.
    public static var requiresChromium: Self { requires(.chromium) }
    /// Runs the test or suite when prometheus is installed, always under CI; skipped (and said so) otherwise.
    public static var requiresPrometheus: Self { requires(.prometheus) }
    /// Runs the test or suite when mosquitto is installed, always under CI; skipped (and said so) otherwise.
    public static var requiresMosquitto: Self { requires(.mosquitto) }
    /// Runs the test or suite when btvirt is installed, always under CI; skipped (and said so) otherwise.
    public static var requiresBTVirt: Self { requires(.btvirt) }
    /// Runs the test or suite when btmon is installed, always under CI; skipped (and said so) otherwise.
    public static var requiresBtmon: Self { requires(.btmon) }
    /// Runs the test or suite when systemd-analyze is installed, always under CI; skipped (and said so) otherwise.
    public static var requiresSystemdAnalyze: Self { requires(.systemdAnalyze) }

    /// Runs the test or suite when `tool` is installed, always under CI; skipped (and said so) otherwise.
    public static func requires(_ tool: RequiredTool) -> Self {
        .enabled(if: tool.shouldRun, tool.skipReason)
    }
}
