import Testing
@testable import Shared
@testable import RoomcastCLI
@testable import RoomcastConfig

@Suite struct CLIParseTests {
    let spec = CLITestSpec.agent

    func run(_ args: [String]) throws -> ParsedCommand {
        guard case .run(let command) = try spec.parse(args) else {
            throw UsageError("not a run", usage: "", commandPath: "")
        }
        return command
    }

    func usageError(_ args: [String]) -> UsageError? {
        do {
            _ = try spec.parse(args)
            return nil
        } catch {
            return error
        }
    }

    @Test func bothOptionFormsFlagsAndDefaultSubcommand() throws {
        let c = try run(["--config=/etc/a.yaml", "--broker", "mqtt://h", "--dry-run", "-vv"])
        #expect(c.commandPath == ["edge-agent", "run"])
        #expect(c[StandardOptions.config] == "/etc/a.yaml")
        #expect(c[StandardOptions.broker] == "mqtt://h")
        #expect(c[StandardOptions.dryRun])
        #expect(!c[StandardOptions.json])
        #expect(c.count(of: CLITestSpec.verbose) == 2)
        #expect(c[StandardOptions.node] == nil)
        #expect(c.isGiven(StandardOptions.broker) && !c.isGiven(StandardOptions.node))
    }

    /// `edge-agent --config a.yaml run`: an option before the subcommand it entered is that
    /// subcommand's; before another subcommand it says to put the subcommand first, not
    /// "unexpected argument".
    @Test func anOptionBeforeTheSubcommandIsReadOrSaidClearly() throws {
        let c = try run(["--config", "/etc/a.yaml", "run", "--dry-run"])
        #expect(c.commandPath == ["edge-agent", "run"] && c[StandardOptions.config] == "/etc/a.yaml" && c[StandardOptions.dryRun])
        #expect(try run(["-c", "a.yaml", "run"])[StandardOptions.config] == "a.yaml")
        #expect(usageError(["--config", "a.yaml", "replay", "f.btsnoop"])?.message
                == "'replay' comes after an option of 'run': write the subcommand first, edge-agent replay [options]")
    }

    @Test func shortOptionsTakeTheirValueAttachedOrNext() throws {
        #expect(try run(["run", "-c", "a.yaml"])[StandardOptions.config] == "a.yaml")
        #expect(try run(["run", "-ca.yaml"])[StandardOptions.config] == "a.yaml")
    }

    @Test func repeatedOptionsKeepEveryValueInOrder() throws {
        let c = try run(["replay", "-b", "mac:a", "--beacon=mac:b", "cap.btsnoop", "--beacon", "mac:c"])
        #expect(c[CLITestSpec.beacon] == ["mac:a", "mac:b", "mac:c"])
        #expect(c[CLITestSpec.capture] == "cap.btsnoop")
        #expect(c.positionals == ["cap.btsnoop"])
    }

    @Test func terminatorMakesEverythingPositional() throws {
        let c = try run(["send", "--qos", "1", "topic", "--", "--not-an-option", "-x"])
        #expect(c[CLITestSpec.topic] == "topic")
        #expect(c[CLITestSpec.payloads] == ["--not-an-option", "-x"])
    }

    @Test func typedAccessorsConvertOrFailWithAUsageError() throws {
        let c = try run(["replay", "--speed", "2.5", "f"])
        #expect(try c[StandardOptions.speed] == 2.5)
        #expect(try run(["replay", "f"])[StandardOptions.speed] == 1)
        let bad = try run(["replay", "--speed", "fast", "f"])
        #expect(throws: UsageError.self) { try bad[StandardOptions.speed] }
        do {
            _ = try bad[StandardOptions.speed]
        } catch {
            #expect(error.message == "invalid value 'fast' for '--speed <x>'")
        }
        let infinite = try run(["replay", "--speed", "inf", "f"])
        do {
            _ = try infinite[StandardOptions.speed]
            Issue.record("inf accepted")
        } catch {
            #expect(error.message == "invalid value 'inf' for '--speed': must be a finite number")
        }
        #expect(try run(["send", "--qos", "-1", "t"])[CLITestSpec.qos] == -1)
        let many = Option<[Int]>("n", value: "n", help: "")
        let tool = CommandSpec("t", abstract: "T.", options: [many])
        guard case .run(let t) = try tool.parse(["--n", "1", "--n=2"]) else { throw UsageError("", usage: "", commandPath: "") }
        #expect(try t[many] == [1, 2])
    }

    @Test func defaultsShowAsTyped() {
        #expect(Option<Double>("s", value: "s", help: "", default: 30).spec.defaultDescription == "30")
        #expect(Option<Double>("s", value: "s", help: "", default: 0.5).spec.defaultDescription == "0.5")
        #expect(Option<Int8>("p", value: "dBm", help: "", default: -59).spec.defaultDescription == "-59")
        #expect(Option<String?>("i", value: "n", help: "", shownDefault: "the host name").spec.defaultDescription == "the host name")
    }

    @Test func subcommandsCarryTheirActions() async {
        let tool = CommandSpec("tool", abstract: "T.", subcommands: [
            CommandSpec("a", abstract: "A.") { _, _ in .success },
            CommandSpec("b", abstract: "B.", options: [CLITestSpec.qos]) { command, out in
                out.output("qos \((try? command[CLITestSpec.qos]).flatMap { $0 } ?? 0)")
                return .dataError
            },
        ])
        #expect(await CommandLineTool.run(tool, arguments: ["a"], output: CommandOutput(output: { _ in }, errorOutput: { _ in })) == .success)
        let said = Said()
        let out = CommandOutput(output: { said.add($0) }, errorOutput: { said.add($0) })
        #expect(await CommandLineTool.run(tool, arguments: ["b", "--qos", "2"], output: out) == .dataError)
        #expect(await CommandLineTool.run(tool, arguments: ["c"], output: out) == .usage)
        #expect(said.text.hasPrefix("qos 2Error: unknown subcommand 'c'"))
    }

    @Test(arguments: [
        (["--brokr", "x"], "unknown option '--brokr'; did you mean '--broker'?"),
        (["run", "--config"], "missing value for '--config <file>'"),
        (["run", "--config", "--dry-run"], "missing value for '--config <file>'"),
        (["run", "-c"], "missing value for '-c <file>'"),
        (["replay"], "missing required argument '<capture>'"),
        (["replay", "a", "b"], "unexpected argument 'b'"),
        (["rn"], "unknown subcommand 'rn'; did you mean 'run'?"),
        (["send", "topic"], "missing required option '--qos <n>'"),
        (["run", "--dry-run=yes"], "flag '--dry-run' does not take a value"),
        (["run", "-x"], "unknown option '-x'"),
        (["--verison"], "unknown option '--verison'; did you mean '--version'?"),
    ])
    func usageErrorsAreClear(_ args: [String], _ message: String) throws {
        let error = try #require(usageError(args))
        #expect(error.message == message)
    }

    @Test func usageErrorPrintsUsageAndExits64() {
        var err = ""
        let decision = CommandLineTool.decide(spec, arguments: ["replay", "--speeed", "2", "f"], output: { _ in }, errorOutput: { err += $0 })
        #expect(decision == .exit(.usage))
        #expect(decision == .exit(ExitCode(64)))
        #expect(err == """
            Error: unknown option '--speeed'; did you mean '--speed'?
            Usage: edge-agent replay [--config <file>] [--speed <x>] [--json] [--beacon <id> ...] <capture>
              See 'edge-agent replay --help' for more information.

            """)
    }

    @Test func commandWithoutDefaultSubcommandNeedsOne() {
        let tool = CommandSpec("tool", abstract: "T.", subcommands: [CommandSpec("a", abstract: "A.")])
        #expect(throws: UsageError.self) { try tool.parse([]) }
        #expect((try? tool.parse(["a"])) == .run(ParsedCommand(chain: [tool, tool.subcommands[0]], values: [:], flags: [:], positionals: [])))
    }

    final class Said: @unchecked Sendable {  // used from one task at a time
        var text = ""
        func add(_ s: String) { text += s }
    }

    @Test func exitCodesFollowSysexits() {
        #expect(ExitCode.success.rawValue == 0)
        #expect(ExitCode.failure.rawValue == 1)
        #expect(ExitCode.usage.rawValue == 64)
        #expect(ExitCode.dataError.rawValue == 65)
        #expect(ExitCode.config.rawValue == 78)
        #expect(ExitCode(for: ConfigError(problems: [])) == .config)
        #expect(ExitCode(for: UsageError("x", usage: "", commandPath: "")) == .usage)
    }

    @Test(arguments: [("brokr", "broker", 1), ("broker", "broker", 0), ("kitchn", "kitchen", 1), ("ab", "ba", 1), ("", "abc", 3)])
    func editDistance(_ a: String, _ b: String, _ d: Int) {
        #expect(Suggestion.distance(a, b) == d)
    }

    @Test func suggestionsOnlyForPlausibleTypos() {
        #expect(Suggestion.closest(to: "kitchn", in: ["kitchen", "bedroom"]) == "kitchen")
        #expect(Suggestion.closest(to: "garage", in: ["kitchen", "bedroom"]) == nil)
    }
}
