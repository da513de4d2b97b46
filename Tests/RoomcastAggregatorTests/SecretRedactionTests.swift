import Foundation
import Shared
import Testing
import TestSupport

/// Every secret a config can hold (the MQTT password in the file, in the broker URL and in
/// `ROOMCAST_MQTT_PASSWORD`, and the phones' IRKs) fed to the built programs as a user runs
/// them: no output stream of any run may contain one.
@Suite(.serialized) struct SecretRedactionTests {
    static let filePassword = "file-secret-9c21e4"
    static let urlPassword = "url-secret-7f3a0b"
    static let envPassword = "env-secret-51d2aa"
    /// An IRK given most significant byte first and one given as BlueZ stores it.
    static let watchKey = "a1b2c3d4e5f60718293a4b5c6d7e8f90"

    /// The secrets and, for keys, their other byte order and case (a leak in any form counts).
    static func forms(_ secrets: [String]) -> [String] {
        secrets.flatMap { s -> [String] in
            guard let bytes = Hex.decode(s) else { return [s] }
            return [s.lowercased(), Hex.encode(bytes.reversed()).lowercased()]
        }
    }

    static func expectClean(_ text: String, of what: String, _ secrets: [String]) {
        let lower = text.lowercased()
        for s in forms(secrets) {
            #expect(!lower.contains(s.lowercased()), "\(what) shows the secret \(s):\n\(text.suffix(2000))")
        }
    }

    @Test func noProgramOutputShowsASecret() async throws {
        let bin = try FaultRig.productsDirectory()
        let dir = NSTemporaryDirectory() + "roomcast-secrets-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try await ChildProcess.run("\(bin)/roomcast-sim", ["generate", "--layout", "house", "--seed", "4", "--duration", "30",
                                                           "--out", "\(dir)/home", "--phones", "1"], in: dir)
        // The simulated phone's key, so the agent really resolves a phone with a configured key.
        let generated = try String(contentsOfFile: "\(dir)/home/agent.yaml", encoding: .utf8)
        let phoneKey = try #require(generated.split(separator: "\"").first { $0.count == 32 && Hex.decode(String($0)) != nil }.map(String.init))
        let secrets = [Self.filePassword, Self.urlPassword, Self.envPassword, phoneKey, Self.watchKey]

        // Nothing listens there: the live runs fail to connect, and say so.
        let nobody = try RefusingPort()
        defer { withExtendedLifetime(nobody) {} }
        let deadPort = nobody.port
        let mqtt = """
            mqtt:
              broker: mqtt://kitchen-pi:\(Self.urlPassword)@127.0.0.1:\(deadPort)
              password: \(Self.filePassword)
            log:
              level: trace

            """
        let agentYAML = mqtt + """
            node: kitchen-pi
            irks:
              - name: phone-0
                key: "\(phoneKey)"
              - name: watch
                key: "\(Self.watchKey)"
                byte_order: lsb_first

            """
        try agentYAML.write(toFile: "\(dir)/agent.yaml", atomically: true, encoding: .utf8)
        let site = try String(contentsOfFile: "\(dir)/home/site.yaml", encoding: .utf8)
        try (site + "\n" + mqtt).write(toFile: "\(dir)/site.yaml", atomically: true, encoding: .utf8)
        // Each secret in the place where a mistake makes the loader complain about it.
        let badAgent = """
            node: kitchen-pi
            mqtt:
              broker: mqtt://kitchen-pi:\(Self.urlPassword)@127.0.0.1:99999
              password: [\(Self.filePassword)]
            irks:
              - name: phone-0
                key: "\(phoneKey.dropLast())"
              - name: watch
                key: "\(Self.watchKey)zz"

            """
        try badAgent.write(toFile: "\(dir)/bad-agent.yaml", atomically: true, encoding: .utf8)
        try (site + "\n" + badAgent.replacingOccurrences(of: "node: kitchen-pi\n", with: "")
             .replacingOccurrences(of: "irks:", with: "unknown_irks:"))
            .write(toFile: "\(dir)/bad-site.yaml", atomically: true, encoding: .utf8)

        let env = ["ROOMCAST_MQTT_PASSWORD": Self.envPassword, "PATH": "/usr/bin:/bin"]
        var n = 0
        struct Run { let child: ChildProcess; let exitCode: Int32
            var stdout: String { child.stdout }
            var stderr: String { child.stderr }
        }
        func run(_ program: String, _ args: [String], until: ((ChildProcess) -> Bool)? = nil) async throws -> Run {
            n += 1
            let child = try ChildProcess("\(bin)/\(program)", args, stdoutPath: "\(dir)/\(n).out", stderrPath: "\(dir)/\(n).err",
                                         environment: env)
            if let until {
                try await eventually("\(program) \(args.first ?? "") to get going", timeout: .seconds(30),
                                     detail: { child.stderr.suffix(1500).description }) { until(child) || !child.isRunning }
                child.send(SIGTERM)
            }
            let status = try await withTimeout(.seconds(60), "\(program) to exit") { await child.waitForExit() }
            return Run(child: child, exitCode: status)
        }
        let capture = "btsnoop:\(dir)/home/nodes/kitchen-pi.btsnoop"

        let dryRun = try await run("edge-agent", ["run", "--dry-run", "-c", "\(dir)/agent.yaml", "--source", capture, "--speed", "max"])
        #expect(dryRun.stderr.contains("effective config"), "the agent logged no effective config: \(dryRun.stderr.prefix(500))")
        #expect(dryRun.stdout.contains("\"irk:phone-0\""), "the configured key resolved no phone")
        #expect(dryRun.stdout.contains("/telemetry"), "no telemetry in the dry run")
        try dryRun.stdout.write(toFile: "\(dir)/kitchen.jsonl", atomically: true, encoding: .utf8)
        let live = try await run("edge-agent", ["run", "-c", "\(dir)/agent.yaml", "--source", capture], until: {
            $0.stderr.contains("mqtt connect failed")
        })
        let badAgentRun = try await run("edge-agent", ["run", "-c", "\(dir)/bad-agent.yaml", "--source", capture])
        #expect(badAgentRun.exitCode == 78)
        #expect(badAgentRun.stderr.contains("irks[0].key") && badAgentRun.stderr.contains("irks[1].key")
                && badAgentRun.stderr.contains("mqtt.password") && badAgentRun.stderr.contains("broker URL"),
                "the config error does not name each bad secret field: \(badAgentRun.stderr)")
        let replay = try await run("aggregator", ["replay", "-c", "\(dir)/site.yaml", "\(dir)/kitchen.jsonl"])
        #expect(replay.exitCode == 0, "\(replay.stderr.suffix(800))")
        let aggregatorLive = try await run("aggregator", ["run", "-c", "\(dir)/site.yaml", "--instance", "secrets"], until: {
            $0.stderr.contains("mqtt connect failed")
        })
        let badSite = try await run("aggregator", ["run", "-c", "\(dir)/bad-site.yaml"])
        #expect(badSite.exitCode == 78)

        for (what, child) in [("edge-agent --dry-run", dryRun), ("edge-agent run, broker down", live),
                              ("edge-agent, bad config", badAgentRun), ("aggregator replay", replay),
                              ("aggregator run, broker down", aggregatorLive), ("aggregator, bad config", badSite)] {
            Self.expectClean(child.stdout, of: "\(what) stdout", secrets)
            Self.expectClean(child.stderr, of: "\(what) stderr", secrets)
        }
        #expect(live.stderr.contains("mqtt connect failed") && aggregatorLive.stderr.contains("mqtt connect failed"))
    }

    /// A mistake that puts a secret where an error message echoes what it found: the env file
    /// given as the config file, a broker URL without its option, an entry run together
    /// (`password:…` with no space, read as the value of the key before it), an IRK in the wrong
    /// field. Each is refused, and no message shows the secret.
    @Test(arguments: [
        ("edge-agent", ["run", "--config", "{dir}/agent.env"], "ROOMCAST_MQTT_PASSWORD={secret}\nROOMCAST_HTTP_TOKEN={secret}\n"),
        ("aggregator", ["mqtt://bob:{secret}@broker.local"], ""),
        ("edge-agent", ["run", "--broker:mqtt://bob:{secret}@broker.local"], ""),
        ("aggregator", ["run", "--broker", "mqtt://bob:{secret}@broker.local", "mqtt://bob:{secret}@broker.local"], ""),
        ("aggregator", ["run", "--config", "{dir}/file.yaml", "--broker", "mqtt://broker.local"], "mqtt:\n  password:{secret}\n"),
        ("edge-agent", ["run", "--config", "{dir}/file.yaml"], "node: hall-pi\nmqtt:\n  keepalive: 30\n    password:{secret}\n"),
        ("edge-agent", ["run", "--config", "{dir}/file.yaml"], "node: hall-pi\nmqtt:\n  protocol: 5\n    password:{secret}\n"),
        ("edge-agent", ["run", "--config", "{dir}/file.yaml"], "node: hall-pi\nlog:\n  level: info\n    pasword:{secret}\n"),
        ("edge-agent", ["run", "--config", "{dir}/file.yaml"],
         "node: hall-pi\nirks:\n  - name: watch\n    key: lsb_first\n    byte_order: \"{key}\"\n"),
        ("edge-agent", ["run", "--config", "{dir}/file.yaml"],
         "node: hall-pi\nirks:\n  - name: \"{key} \"\n    key: watch\n"),
    ])
    func aSecretInTheWrongPlaceIsNotEchoed(program: String, arguments: [String], file: String) async throws {
        let bin = try FaultRig.productsDirectory()
        let dir = NSTemporaryDirectory() + "roomcast-misplaced-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Like a real password: no word in it that would have it hidden for its own sake.
        let secret = "hunter2-4e1b", key = Self.watchKey.uppercased()
        func fill(_ text: String) -> String {
            text.replacingOccurrences(of: "{dir}", with: dir).replacingOccurrences(of: "{secret}", with: secret)
                .replacingOccurrences(of: "{key}", with: key)
        }
        if !file.isEmpty {
            let name = arguments.contains("{dir}/agent.env") ? "agent.env" : "file.yaml"
            try fill(file).write(toFile: "\(dir)/\(name)", atomically: true, encoding: .utf8)
        }
        let child = try ChildProcess("\(bin)/\(program)", arguments.map(fill), stdoutPath: "\(dir)/out", stderrPath: "\(dir)/err",
                                     environment: ["PATH": "/usr/bin:/bin"])
        let status = try await withTimeout(.seconds(60), "\(program) to exit") { await child.waitForExit() }
        #expect(status == 64 || status == 78, "refused as a usage or config error: exit \(status)\n\(child.stderr)")
        #expect(!child.stderr.isEmpty, "no message")
        Self.expectClean(child.stdout + child.stderr, of: "\(program) \(arguments.joined(separator: " "))", [secret, key])
    }
}
