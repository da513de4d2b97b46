import RoomcastConfig
import RoomcastFusion
import RoomcastHTTP
import RoomcastMQTT
import Shared

/// The aggregator's config file (`/etc/roomcast/aggregator.yaml`): the broker,
/// the site (`rooms`, `nodes`, `beacons`, `people` at the top level) and fusion settings.
public struct AggregatorConfig: Codable, Sendable, Equatable, ConfigValidating {
    public var mqtt: MQTTConfig
    public var rooms: [SiteModel.Room]
    public var nodes: [SiteModel.Node]
    /// Known beacons; empty means every beacon heard is tracked.
    public var beacons: [SiteModel.KnownBeacon]
    /// People and the beacons that are theirs.
    public var people: [SiteModel.Person]
    public var fusion: FusionSettings
    public var discovery: Discovery
    public var output: Output
    public var partition: Partition
    public var standby: Standby
    public var inputs: Inputs
    /// The optional HTTP listener: dashboard, `/metrics`, `/healthz` (off unless `http.listen`).
    public var http: HTTPConfig
    /// `learn:` rooms the user teaches (`aggregator learn`).
    public var learn: Learn
    public var log: LogConfig

    public init(mqtt: MQTTConfig = MQTTConfig(), site: SiteModel = SiteModel(), fusion: FusionSettings = FusionSettings(),
                discovery: Discovery = Discovery(), output: Output = Output(), partition: Partition = Partition(),
                standby: Standby = Standby(), inputs: Inputs = Inputs(), http: HTTPConfig = HTTPConfig(),
                learn: Learn = Learn(), log: LogConfig = LogConfig()) {
        self.mqtt = mqtt
        self.rooms = site.rooms
        self.nodes = site.nodes
        self.beacons = site.beacons
        self.people = site.people
        self.fusion = fusion
        self.discovery = discovery
        self.output = output
        self.partition = partition
        self.standby = standby
        self.inputs = inputs
        self.http = http
        self.learn = learn
        self.log = log
    }

    /// The `rooms`, `nodes` and `beacons` sections as one value.
    public var site: SiteModel {
        get { SiteModel(rooms: rooms, nodes: nodes, beacons: beacons, people: people) }
        set { rooms = newValue.rooms; nodes = newValue.nodes; beacons = newValue.beacons; people = newValue.people }
    }

    enum CodingKeys: String, CodingKey {
        case mqtt, rooms, nodes, beacons, people, fusion, discovery, output, partition, standby, inputs, http, learn, log
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        mqtt = try c.decode(MQTTConfig.self, forKey: .mqtt, default: MQTTConfig())
        rooms = try c.decode([SiteModel.Room].self, forKey: .rooms, default: [])
        nodes = try c.decode([SiteModel.Node].self, forKey: .nodes, default: [])
        beacons = try c.decode([SiteModel.KnownBeacon].self, forKey: .beacons, default: [])
        people = try c.decode([SiteModel.Person].self, forKey: .people, default: [])
        fusion = try c.decode(FusionSettings.self, forKey: .fusion, default: FusionSettings())
        discovery = try c.decode(Discovery.self, forKey: .discovery, default: Discovery())
        output = try c.decode(Output.self, forKey: .output, default: Output())
        partition = try c.decode(Partition.self, forKey: .partition, default: Partition())
        standby = try c.decode(Standby.self, forKey: .standby, default: Standby())
        inputs = try c.decode(Inputs.self, forKey: .inputs, default: Inputs())
        http = try c.decode(HTTPConfig.self, forKey: .http, default: HTTPConfig())
        learn = try c.decode(Learn.self, forKey: .learn, default: Learn())
        log = try c.decode(LogConfig.self, forKey: .log, default: LogConfig())
    }

    /// `discovery:` Home Assistant MQTT discovery.
    public struct Discovery: Codable, Sendable, Equatable {
        /// Default true.
        public var enabled: Bool
        /// Discovery topic prefix (default `homeassistant`).
        public var prefix: String
        /// How configs are published (default `device`).
        public var mode: Mode
        /// Per node, a distance sensor for each beacon it hears (default false).
        public var nodeDistances: Bool

        /// `device`: one config per device (`<prefix>/device/<id>/config` with its components;
        /// Home Assistant 2024.11 and later); `entity`: one config per entity
        /// (`<prefix>/<component>/<id>/config`), for older Home Assistant releases.
        public enum Mode: String, ConfigEnum { case device, entity }

        public init(enabled: Bool = true, prefix: String = "homeassistant", mode: Mode = .device, nodeDistances: Bool = false) {
            self.enabled = enabled
            self.prefix = prefix
            self.mode = mode
            self.nodeDistances = nodeDistances
        }

        enum CodingKeys: String, CodingKey { case enabled, prefix, mode, nodeDistances = "node_distances" }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            enabled = try c.decode(Bool.self, forKey: .enabled, default: true)
            prefix = try c.decode(String.self, forKey: .prefix, default: "homeassistant")
            mode = try c.decode(Mode.self, forKey: .mode, default: .device)
            nodeDistances = try c.decode(Bool.self, forKey: .nodeDistances, default: false)
        }
    }

    /// `output:` what the aggregator publishes besides presence changes.
    public struct Output: Codable, Sendable, Equatable {
        /// Republish every retained presence and room state this often, in seconds; 0 disables (default 60).
        public var refreshIntervalS: Double
        /// Other ecosystems' layouts also published, one `true`/`false` key per `DecisionOutput`
        /// (`mqtt_room`; default false), in the order of `DecisionOutput.all`.
        public var enabled: [DecisionOutput]

        public init(refreshIntervalS: Double = 60, enabled: [DecisionOutput] = []) {
            self.refreshIntervalS = refreshIntervalS
            self.enabled = enabled
        }

        static let refreshKey = SettingCodingKey(stringValue: "refresh_interval_s")

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: SettingCodingKey.self)
            refreshIntervalS = try c.decode(Double.self, forKey: Self.refreshKey, default: 60)
            enabled = try DecisionOutput.all.filter {
                try c.decode(Bool.self, forKey: SettingCodingKey(stringValue: $0.key), default: false)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: SettingCodingKey.self)
            try c.encode(refreshIntervalS, forKey: Self.refreshKey)
            for output in DecisionOutput.all {
                try c.encode(enabled.contains(output), forKey: SettingCodingKey(stringValue: output.key))
            }
        }
    }

    /// `partition:` limit this aggregator to part of the site (one per floor, say).
    public struct Partition: Codable, Sendable, Equatable {
        /// Only rooms on these floors; nil means all.
        public var floors: [Int]?
        /// Only these rooms; nil means all.
        public var rooms: [String]?

        public init(floors: [Int]? = nil, rooms: [String]? = nil) {
            self.floors = floors
            self.rooms = rooms
        }
    }

    /// `standby:` run as a hot standby that takes over when the active aggregator's lease lapses.
    public struct Standby: Codable, Sendable, Equatable {
        /// Default false.
        public var enabled: Bool
        /// Lease length in seconds; the active aggregator renews it at a third of this (default 15).
        public var leaseS: Double
        /// The shortest lease: longer than an instance takes to notice that its broker stopped
        /// answering (`AggregatorRuntime.stallTimeout` + `heartbeatInterval`, 2.5 s). A shorter one
        /// would lapse in a standby that merely could not hear the active instance's renewals, and
        /// it would take over before it knew it was not hearing.
        public static let shortestLeaseS = 3.0
        /// The account of the status guard connection; nil means the aggregator's username + `-guard`
        /// (a broker that ties client ids to usernames lets each account hold only one connection).
        public var guardUsername: String?

        public init(enabled: Bool = false, leaseS: Double = 15, guardUsername: String? = nil) {
            self.enabled = enabled
            self.leaseS = leaseS
            self.guardUsername = guardUsername
        }

        enum CodingKeys: String, CodingKey { case enabled, leaseS = "lease_s", guardUsername = "guard_username" }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            enabled = try c.decode(Bool.self, forKey: .enabled, default: false)
            leaseS = try c.decode(Double.self, forKey: .leaseS, default: 15)
            guardUsername = try c.decodeIfPresent(String.self, forKey: .guardUsername)
        }

        /// The status guard's username, given the aggregator's own.
        public func guardUsername(mainUsername: String?) -> String? {
            guardUsername ?? mainUsername.map { "\($0)-guard" }
        }
    }

    /// `inputs:` readings accepted besides Roomcast agents'.
    public struct Inputs: Codable, Sendable, Equatable {
        /// Also read ESPresense nodes' topics (default false).
        public var espresense: Bool

        public init(espresense: Bool = false) {
            self.espresense = espresense
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            espresense = try c.decode(Bool.self, forKey: .espresense, default: false)
        }
    }

    /// `learn:` where what users teach (`aggregator learn`) is kept.
    public struct Learn: Codable, Sendable, Equatable {
        /// The learned-rooms state file; nil means `learned-rooms.json` in systemd's
        /// `$STATE_DIRECTORY` (the packaged unit's /var/lib/roomcast) when that is set, else
        /// none: what is learned lasts until the aggregator stops.
        public var stateFile: String?

        public init(stateFile: String? = nil) {
            self.stateFile = stateFile
        }

        enum CodingKeys: String, CodingKey { case stateFile = "state_file" }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            stateFile = try c.decodeIfPresent(String.self, forKey: .stateFile)
        }

        /// The file name used in `$STATE_DIRECTORY`.
        public static let defaultFileName = "learned-rooms.json"

        /// The state file in force, given the environment; nil: none.
        public func resolvedStateFile(environment: [String: String]) -> String? {
            if let stateFile { return stateFile }
            guard let directory = environment["STATE_DIRECTORY"], !directory.isEmpty else { return nil }
            // systemd lists several directories separated by ':' when a unit names several.
            let first = directory.split(separator: ":").first.map(String.init) ?? directory
            return first.hasSuffix("/") ? first + Self.defaultFileName : first + "/" + Self.defaultFileName
        }
    }
}
