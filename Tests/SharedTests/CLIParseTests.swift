import Testing
@testable import Shared

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
        #expect(c.option("config") == "/etc/a.yaml")
        #expect(c.option("broker") == "mqtt://h")
        #expect(c.flag("dry-run"))
        #expect(!c.flag("json"))
        #expect(c.flagCount("verbose") == 2)
        #expect(c.option("node") == nil)
    }

    @Test func shortOptionsTakeTheirValueAttachedOrNext() throws {
        #expect(try run(["run", "-c", "a.yaml"]).option("config") == "a.yaml")
        #expect(try run(["run", "-ca.yaml"]).option("config") == "a.yaml")
    }

    @Test func repeatedOptionsKeepEveryValueInOrder() throws {
        let c = try run(["replay", "-b", "mac:a", "--beacon=mac:b", "cap.btsnoop", "--beacon", "mac:c"])
        #expect(c.options("beacon") == ["mac:a", "mac:b", "mac:c"])
        #expect(c.argument("capture") == "cap.btsnoop")
        #expect(c.positionals == ["cap.btsnoop"])
    }

    @Test func terminatorMakesEverythingPositional() throws {
        let c = try run(["send", "--qos", "1", "topic", "--", "--not-an-option", "-x"])
        #expect(c.argument("topic") == "topic")
        #expect(c.arguments("payloads") == ["--not-an-option", "-x"])
    }

    @Test func typedAccessorsConvertOrFailWithAUsageError() throws {
        let c = try run(["replay", "--speed", "2.5", "f"])
        #expect(try c.option("speed", as: Double.self) == 2.5)
        #expect(try c.option("config", as: Double.self) == nil)
        let bad = try run(["replay", "--speed", "fast", "f"])
        #expect(throws: UsageError.self) { try bad.option("speed", as: Double.self) }
        do {
            _ = try bad.option("speed", as: Double.self)
        } catch {
            #expect(error.message == "invalid value 'fast' for '--speed <x>'")
        }
        #expect(try run(["send", "--qos", "-1", "t"]).option("qos", as: Int.self) == -1)
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
