import Shared
import Testing
@testable import RoomcastAggregator

/// Golden help text: what users read must change only on purpose.
@Suite struct AggregatorCLIHelpTests {
    @Test func rootHelp() {
        #expect(AggregatorCLI.spec.helpText(path: []) == """
            OVERVIEW: Fuse the readings of every node into one room per beacon and publish
            presence.

            USAGE: aggregator [<subcommand>]

            OPTIONS:
              --version               Show the version.
              -h, --help              Show help information.

            SUBCOMMANDS:
              run (default)           Run the live service against a broker (the default).
              replay                  Run the engine over JSONL message logs on a virtual
                                      clock; print what it would publish.
              watch                   Show who is in which room, live, from the retained
                                      presence topics.

              See 'aggregator <subcommand> --help' for detailed help.

            """)
    }

    @Test func runHelp() {
        #expect(AggregatorCLI.spec.helpText(path: ["run"]) == """
            OVERVIEW: Run the live service against a broker (the default).

            USAGE: aggregator run [--config <file>] [--broker <url>] [--log-level <level>]
                   [--instance <name>]

            OPTIONS:
              -c, --config <file>     Config file (YAML or JSON).
              --broker <url>          MQTT broker, mqtt[s]://[user@]host[:port]; overrides
                                      mqtt.broker.
              --log-level <level>     trace, debug, info, notice, warning, error or
                                      critical; overrides log.level.
              --instance <name>       This instance's name for hot standby. (default: the
                                      host name)
              -h, --help              Show help information.

            """)
    }

    @Test func replayHelp() {
        #expect(AggregatorCLI.spec.helpText(path: ["replay"]) == """
            OVERVIEW: Run the engine over JSONL message logs on a virtual clock; print what
            it would publish.

            USAGE: aggregator replay [--config <file>] [--log-level <level>] <input> ...

            ARGUMENTS:
              <input> ...             JSONL files as edge-agent --dry-run writes them.

            OPTIONS:
              -c, --config <file>     Config file (YAML or JSON).
              --log-level <level>     trace, debug, info, notice, warning, error or
                                      critical; overrides log.level.
              -h, --help              Show help information.

            """)
    }
}
