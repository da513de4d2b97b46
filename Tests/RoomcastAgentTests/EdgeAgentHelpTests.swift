import Shared
import Testing
@testable import RoomcastAgent

/// Golden help text: what users read must change only on purpose.
@Suite struct EdgeAgentCLIHelpTests {
    @Test func rootHelp() {
        #expect(EdgeAgentCLI.spec.helpText(path: []) == """
            OVERVIEW: Scan BLE beacons, range them and publish readings to MQTT.

            USAGE: edge-agent [<subcommand>]

            OPTIONS:
              --version               Show the version.
              -h, --help              Show help information.

            SUBCOMMANDS:
              run (default)           Run the agent (the default).
              scan                    Show the beacons in view, nearest first (the ranging
                                      table).
              decode                  Decode an HCI event, an advertising report or AD
                                      structures given in hex.
              advertise               Transmit as an iBeacon (non-connectable) until
                                      stopped.
              irks                    Identity resolving keys of phones and watches.
              check                   Check the config file as run reads it, without the
                                      radio or the broker; print what it describes.

              See 'edge-agent <subcommand> --help' for detailed help.

            """)
    }

    @Test func checkHelp() {
        #expect(EdgeAgentCLI.spec.helpText(path: ["check"]) == """
            OVERVIEW: Check the config file as run reads it, without the radio or the
            broker; print what it describes.

            Every problem is printed with its path, and the exit code is 78, as run's would
            be. The package runs this before it restarts a running agent on an upgrade, and
            leaves the service running as it was when the config does not pass.

            USAGE: edge-agent check [--config <file>] [--broker <url>] [--node <name>]
                   [--source <src>]

            OPTIONS:
              -c, --config <file>     Config file (YAML or JSON).
              --broker <url>          MQTT broker, mqtt[s]://[user@]host[:port]; overrides
                                      mqtt.broker.
              --node <name>           This node's name; overrides node.
              --source <src>          BLE source: hci, hci:<dev>, h4:<tty> or
                                      btsnoop:<file>; overrides source.
              -h, --help              Show help information.

            """)
    }

    @Test func runHelp() {
        #expect(EdgeAgentCLI.spec.helpText(path: ["run"]) == """
            OVERVIEW: Run the agent (the default).

            USAGE: edge-agent run [--config <file>] [--broker <url>] [--node <name>]
                   [--source <src>] [--speed <speed>] [--record <file>]
                   [--record-limit <MB>] [--dry-run] [--log-level <level>]

            OPTIONS:
              -c, --config <file>     Config file (YAML or JSON).
              --broker <url>          MQTT broker, mqtt[s]://[user@]host[:port]; overrides
                                      mqtt.broker.
              --node <name>           This node's name; overrides node.
              --source <src>          BLE source: hci, hci:<dev>, h4:<tty> or
                                      btsnoop:<file>; overrides source.
              --speed <speed>         Replay speed for btsnoop sources: realtime, max or a
                                      factor. (default: realtime)
              --record <file>         Also write what the radio delivers to a btsnoop file
                                      (btmon -r reads it).
              --record-limit <MB>     Past this size the --record file becomes <file>.1
                                      (replacing the one before) and a new one begins.
                                      (default: 64)
              --dry-run               Print every message as JSONL on stdout instead of
                                      connecting to a broker.
              --log-level <level>     trace, debug, info, notice, warning, error or
                                      critical; overrides log.level.
              -h, --help              Show help information.

            """)
    }

    @Test func irksHelp() {
        #expect(EdgeAgentCLI.spec.helpText(path: ["irks"]) == """
            OVERVIEW: Identity resolving keys of phones and watches.

            USAGE: edge-agent irks <subcommand>

            OPTIONS:
              -h, --help              Show help information.

            SUBCOMMANDS:
              import                  Print the IRKs of the devices paired with this
                                      computer (BlueZ) as agent.yaml irks entries.

              See 'edge-agent irks <subcommand> --help' for detailed help.

            """)
    }

    @Test func irksImportHelp() {
        #expect(EdgeAgentCLI.spec.helpText(path: ["irks", "import"]) == """
            OVERVIEW: Print the IRKs of the devices paired with this computer (BlueZ) as
            agent.yaml irks entries.

            Pair the phone first (bluetoothctl; docs/fingerprints.md). BlueZ's pairing store
            is readable by root only: run with sudo. With --write the keys not yet in the
            --config file are added to its irks list; the old file is kept as <file>.bak.

            USAGE: edge-agent irks import [--bluetooth-dir <dir>] [--config <file>]
                   [--write]

            OPTIONS:
              --bluetooth-dir <dir>   BlueZ's pairing store. (default: /var/lib/bluetooth)
              -c, --config <file>     Config file (YAML or JSON).
              --write                 Add the keys to the --config file instead of printing
                                      them.
              -h, --help              Show help information.

            """)
    }

    @Test func decodeHelp() {
        #expect(EdgeAgentCLI.spec.helpText(path: ["decode"]) == """
            OVERVIEW: Decode an HCI event, an advertising report or AD structures given in
            hex.

            USAGE: edge-agent decode [--config <file>] <hex>

            ARGUMENTS:
              <hex>                   The bytes in hex (spaces and ':' allowed).

            OPTIONS:
              -c, --config <file>     Config file (YAML or JSON).
              -h, --help              Show help information.

            """)
    }

    @Test func advertiseHelp() {
        #expect(EdgeAgentCLI.spec.helpText(path: ["advertise"]) == """
            OVERVIEW: Transmit as an iBeacon (non-connectable) until stopped.

            USAGE: edge-agent advertise --uuid <uuid> [--major <n>] [--minor <n>]
                   [--power <dBm>] [--interval-ms <ms>] [--source <src>]
                   [--log-level <level>]

            OPTIONS:
              --uuid <uuid>           Proximity UUID.
              --major <n>             Major, 0-65535. (default: 0)
              --minor <n>             Minor, 0-65535. (default: 0)
              --power <dBm>           Measured power at 1 m. (default: -59)
              --interval-ms <ms>      Advertising interval. (default: 100)
              --source <src>          BLE source: hci, hci:<dev>, h4:<tty> or
                                      btsnoop:<file>; overrides source.
              --log-level <level>     trace, debug, info, notice, warning, error or
                                      critical; overrides log.level.
              -h, --help              Show help information.

            """)
    }

    @Test func scanHelp() {
        #expect(EdgeAgentCLI.spec.helpText(path: ["scan"]) == """
            OVERVIEW: Show the beacons in view, nearest first (the ranging table).

            USAGE: edge-agent scan [--config <file>] [--source <src>] [--speed <speed>]
                   [--json] [--log-level <level>]

            OPTIONS:
              -c, --config <file>     Config file (YAML or JSON).
              --source <src>          BLE source: hci, hci:<dev>, h4:<tty> or
                                      btsnoop:<file>; overrides source.
              --speed <speed>         Replay speed for btsnoop sources: realtime, max or a
                                      factor. (default: realtime)
              --json                  Print one JSON reading per line instead of the table.
              --log-level <level>     trace, debug, info, notice, warning, error or
                                      critical; overrides log.level.
              -h, --help              Show help information.

            """)
    }
}
