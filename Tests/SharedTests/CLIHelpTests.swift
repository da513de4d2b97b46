import Testing
@testable import Shared
@testable import RoomcastCLI

@Suite struct CLIHelpTests {
    let spec = CLITestSpec.agent

    @Test func rootHelp() {
        #expect(spec.helpText() == """
            OVERVIEW: Scans BLE advertisements and publishes beacon readings to MQTT.

            USAGE: edge-agent [<subcommand>]

            OPTIONS:
              --version               Show the version.
              -h, --help              Show help information.

            SUBCOMMANDS:
              run (default)           Scan and publish until stopped.
              replay                  Replay a btsnoop capture through the pipeline.
              check-config            Load the config, print every problem, and exit.
              send                    Publish raw payloads.

              See 'edge-agent <subcommand> --help' for detailed help.

            """)
    }

    @Test func subcommandHelpWrapsLongHelpUnderItsColumn() {
        #expect(spec.helpText(path: ["run"]) == """
            OVERVIEW: Scan and publish until stopped.

            USAGE: edge-agent run [--config <file>] [--broker <url>] [--node <name>]
                   [--source <src>] [--log-level <level>] [--dry-run] [--verbose]

            OPTIONS:
              -c, --config <file>     Config file (YAML or JSON).
              --broker <url>          MQTT broker, mqtt[s]://[user@]host[:port]; overrides
                                      mqtt.broker.
              --node <name>           This node's name; overrides node.
              --source <src>          BLE source: hci, hci:<dev>, h4:<tty> or
                                      btsnoop:<file>; overrides source.
              --log-level <level>     trace, debug, info, notice, warning, error or
                                      critical; overrides log.level.
              --dry-run               Do everything except publish to MQTT.
              -v, --verbose           Log more; repeat for even more.
              -h, --help              Show help information.

            """)
    }

    @Test func argumentsDefaultsAndRepeatedOptions() {
        #expect(spec.helpText(path: ["replay"]) == """
            OVERVIEW: Replay a btsnoop capture through the pipeline.

            USAGE: edge-agent replay [--config <file>] [--speed <x>] [--json]
                   [--beacon <id> ...] <capture>

            ARGUMENTS:
              <capture>               btsnoop file to replay.

            OPTIONS:
              -c, --config <file>     Config file (YAML or JSON).
              --speed <x>             Replay speed factor (0 = as fast as possible).
                                      (default: 1)
              --json                  Print machine-readable JSON.
              -b, --beacon <id> ...   Only report this beacon; may be repeated.
              -h, --help              Show help information.

            """)
    }

    @Test func requiredOptionsAndOptionalRepeatingArguments() {
        #expect(spec.helpText(path: ["send"]) == """
            OVERVIEW: Publish raw payloads.

            USAGE: edge-agent send --qos <n> <topic> [<payloads> ...]

            ARGUMENTS:
              <topic>                 Topic.
              <payloads> ...          Payloads to publish.

            OPTIONS:
              --qos <n>               QoS level.
              -h, --help              Show help information.

            """)
    }

    @Test func longLabelsPutHelpOnTheNextLine() {
        let s = CommandSpec("t", abstract: "T.", options: [
            .option("a-very-long-option-name", value: "value", help: "Something."),
        ])
        #expect(s.helpText().contains("""
              --a-very-long-option-name <value>
                                      Something.
            """))
    }

    @Test(arguments: [["--help"], ["-h"], ["run", "--help"], ["--config", "x.yaml", "-h"], ["replay", "file", "--bogus", "-h"]])
    func helpIsAvailableAtEveryLevel(_ args: [String]) throws {
        guard case .help(let text) = try spec.parse(args) else {
            Issue.record("expected help for \(args)")
            return
        }
        let path = args.filter { spec.subcommand($0) != nil }
        #expect(text == spec.helpText(path: path))
    }

    @Test func versionPrintsTheVersion() throws {
        #expect(try spec.parse(["--version"]) == .version("0.1.0"))
        var out = ""
        #expect(CommandLineTool.decide(spec, arguments: ["--version"], output: { out += $0 }) == .exit(.success))
        #expect(out == "0.1.0\n")
    }
}
