import Foundation
import Testing
import TestSupport

/// The shipped units in deploy/systemd (installed by the .deb packages) are sandboxed, and the
/// sandbox leaves each service what it needs.
@Suite struct SystemdUnitTests {
    static func unitPath(_ name: String) -> String {
        DeploySamplesTests.repositoryFile("deploy/systemd/\(name)").path
    }

    /// The unit's `[Service]` settings, a key's values in the order they appear.
    static func settings(_ name: String) throws -> [String: [String]] {
        let text = try String(contentsOfFile: unitPath(name), encoding: .utf8)
        var result: [String: [String]] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("[") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            result[String(line[..<eq]), default: []].append(String(line[line.index(after: eq)...]))
        }
        return result
    }

    /// The most exposure either unit may have; "OK" is anything under 5.0. Both sit well under it
    /// (1.8 and 1.2 with systemd 252); a setting loosened without thought should fail here.
    static let maximumExposure = 2.0

    @Test(.requiresSystemdAnalyze, arguments: ["roomcast-edge-agent.service", "roomcast-aggregator.service"])
    func exposureIsOK(unit: String) throws {
        let tool = try RequiredTool.systemdAnalyze.require()
        let (status, out) = try ChildProcess.runBlocking(tool, ["security", "--offline=true", "--no-pager", Self.unitPath(unit)])
        #expect(status == 0, "\(out)")
        // "→ Overall exposure level for roomcast-edge-agent.service: 1.8 OK 🙂"
        let line = try #require(out.split(separator: "\n").first { $0.contains("Overall exposure level") }, "\(out)")
        let words = line.split(separator: ":").last?.split(separator: " ") ?? []
        let score = try #require(words.first.flatMap { Double($0) }, "\(line)")
        #expect(words.count >= 2 && ["OK", "SAFE", "PERFECT"].contains(String(words[1])), "\(line)")
        #expect(score <= Self.maximumExposure, "\(out)")
    }

    /// The agent keeps what scanning needs: the Bluetooth socket family, CAP_NET_RAW as an
    /// ambient capability (it is not root), and no user namespace (capabilities in one do not
    /// reach the host's Bluetooth stack). Nothing more: CAP_NET_ADMIN is for ioctls it does not use.
    @Test func agentUnitKeepsWhatScanningNeeds() throws {
        let s = try Self.settings("roomcast-edge-agent.service")
        #expect(s["RestrictAddressFamilies"]?.last?.split(separator: " ").contains("AF_BLUETOOTH") == true)
        #expect(s["CapabilityBoundingSet"] == ["CAP_NET_RAW"])
        #expect(s["AmbientCapabilities"] == ["CAP_NET_RAW"])
        #expect(s["PrivateUsers"] == nil)
        #expect(s["User"] == ["roomcast"] && s["NoNewPrivileges"] == ["yes"])
        #expect(s["ExecStart"] == ["/usr/bin/edge-agent run --config /etc/roomcast/agent.yaml"])
    }

    /// The aggregator has no capability, only network and local sockets, and one writable place.
    @Test func aggregatorUnitIsConfinedToItsStateDirectory() throws {
        let s = try Self.settings("roomcast-aggregator.service")
        #expect(s["CapabilityBoundingSet"] == [""])
        #expect(s["RestrictAddressFamilies"] == ["AF_INET AF_INET6 AF_UNIX"])
        #expect(s["ProtectSystem"] == ["strict"] && s["StateDirectory"] == ["roomcast"])
        #expect(s["ReadWritePaths"] == nil)
        #expect(s["ExecStart"] == ["/usr/bin/aggregator run --config /etc/roomcast/aggregator.yaml"])
    }
}
