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
              calibrate               Suggest a node's rx_adjust from a beacon held 1 m from
                                      it.
              learn                   Teach the aggregator a room: what every node hears of
                                      a beacon carried there.
              check                   Check the config file as run reads it, without
                                      connecting; print what it describes.

              See 'aggregator <subcommand> --help' for detailed help.

            """)
    }

    @Test func checkHelp() {
        #expect(AggregatorCLI.spec.helpText(path: ["check"]) == """
            OVERVIEW: Check the config file as run reads it, without connecting; print what
            it describes.

            Every problem is printed with its path, and the exit code is 78, as run's would
            be. The package runs this before it restarts a running aggregator on an upgrade,
            and leaves the service running as it was when the config does not pass. The
            broker, the environment variables of its password and HTTP token, and TLS files
            are checked by run when it starts.

            USAGE: aggregator check [--config <file>] [--broker <url>]

            OPTIONS:
              -c, --config <file>     Config file (YAML or JSON).
              --broker <url>          MQTT broker, mqtt[s]://[user@]host[:port]; overrides
                                      mqtt.broker.
              -h, --help              Show help information.

            """)
    }

    @Test func runHelp() {
        #expect(AggregatorCLI.spec.helpText(path: ["run"]) == """
            OVERVIEW: Run the live service against a broker (the default).

            USAGE: aggregator run [--config <file>] [--broker <url>] [--log-level <level>]
                   [--instance <name>] [--http <host:port>]

            OPTIONS:
              -c, --config <file>     Config file (YAML or JSON).
              --broker <url>          MQTT broker, mqtt[s]://[user@]host[:port]; overrides
                                      mqtt.broker.
              --log-level <level>     trace, debug, info, notice, warning, error or
                                      critical; overrides log.level.
              --instance <name>       This instance's name for hot standby. (default: the
                                      host name)
              --http <host:port>      Serve the dashboard, /metrics and /healthz here (e.g.
                                      127.0.0.1:8267).
              -h, --help              Show help information.

            """)
    }

    @Test func replayHelp() {
        #expect(AggregatorCLI.spec.helpText(path: ["replay"]) == """
            OVERVIEW: Run the engine over JSONL message logs on a virtual clock; print what
            it would publish.

            USAGE: aggregator replay [--config <file>] [--log-level <level>]
                   [--learned <file>] [--save-learned <file>] <input> ...

            ARGUMENTS:
              <input> ...             JSONL files as edge-agent --dry-run writes them.

            OPTIONS:
              -c, --config <file>     Config file (YAML or JSON).
              --log-level <level>     trace, debug, info, notice, warning, error or
                                      critical; overrides log.level.
              --learned <file>        Start from the learned rooms in this state file.
              --save-learned <file>   Write the learned rooms here at the end.
              -h, --help              Show help information.

            """)
    }

    @Test func calibrateHelp() {
        #expect(AggregatorCLI.spec.helpText(path: ["calibrate"]) == """
            OVERVIEW: Suggest a node's rx_adjust from a beacon held 1 m from it.

            Carry one beacon slowly round the node at 1 m, at the node's height, while this
            listens; then the next node, with the same beacon. It prints the rx_adjust that
            makes the node read what the beacon's 1 m power predicts. Worth it for a
            receiver of another kind (an external antenna, another adapter), which reads
            many dB off the others. Between receivers of one kind the spots round a node
            differ about as much; teaching the rooms (learn) gains more there.

            USAGE: aggregator calibrate [--config <file>] [--broker <url>]
                   [--log-level <level>] [--node <name>] [--beacon <id>] [--seconds <s>]
                   [--distance <m>]

            OPTIONS:
              -c, --config <file>     Config file (YAML or JSON).
              --broker <url>          MQTT broker, mqtt[s]://[user@]host[:port]; overrides
                                      mqtt.broker.
              --log-level <level>     trace, debug, info, notice, warning, error or
                                      critical; overrides log.level.
              --node <name>           The node the beacon is held by.
              --beacon <id>           The beacon held (default: the one the node hears
                                      loudest).
              --seconds <s>           How long to listen. (default: 30)
              --distance <m>          How far the beacon is from the node. (default: 1)
              -h, --help              Show help information.

            """)
    }

    @Test func learnHelp() {
        #expect(AggregatorCLI.spec.helpText(path: ["learn"]) == """
            OVERVIEW: Teach the aggregator a room: what every node hears of a beacon carried
            there.

            With --room and --beacon, carry the beacon round the room (at the height you
            carry it every day) while the running aggregator records what each node hears;
            it keeps what it learned in its state file. --show prints what was learned;
            --forget drops a room. Talks to the aggregator over the broker
            (<prefix>/aggregator/learn), so it works from any machine with access.

            USAGE: aggregator learn [--config <file>] [--broker <url>] [--log-level <level>]
                   [--room <name>] [--beacon <id>] [--seconds <s>] [--cancel]
                   [--forget <room>] [--show] [--file <file>]

            OPTIONS:
              -c, --config <file>     Config file (YAML or JSON).
              --broker <url>          MQTT broker, mqtt[s]://[user@]host[:port]; overrides
                                      mqtt.broker.
              --log-level <level>     trace, debug, info, notice, warning, error or
                                      critical; overrides log.level.
              --room <name>           The room the beacon is carried in.
              --beacon <id>           The beacon carried (its id, as in beacons:).
              --seconds <s>           How long to learn, 5–600. (default: 30)
              --cancel                Stop the label running for --beacon; learn nothing
                                      from it.
              --forget <room>         Forget what was learned for this room.
              --show                  Print what was learned (the aggregator's retained
                                      learn state).
              --file <file>           With --show: read this state file instead of the
                                      broker; it also lists the rooms beacons leave from.
              -h, --help              Show help information.

            """)
    }
}
