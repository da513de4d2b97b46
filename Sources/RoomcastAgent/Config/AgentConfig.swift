import RoomcastAdvertising
import RoomcastConfig
import RoomcastHTTP
import RoomcastMQTT

/// The edge agent's config file (`/etc/roomcast/agent.yaml`). Every key but
/// `node` has a default; docs/configuration.md lists them all.
public struct AgentConfig: Codable, Sendable, Equatable, ConfigValidating {
    /// This receiver's name: one topic level, unique per site.
    public var node: String
    /// The room this node stands in, if it is fixed.
    public var room: String?
    public var mqtt: MQTTConfig
    /// Where advertisements come from (default `hci`: the first adapter that is up).
    public var source: SourceSpec
    public var scan: Scan
    public var ranging: Ranging
    public var publish: Publish
    /// Beacon regions (CLBeaconRegion): only beacons inside one are tracked when any is given,
    /// and enter/exit events are reported per region.
    public var regions: [RegionConfig]
    /// Known beacons (names, calibrated power); with neither regions nor beacons, every beacon heard is tracked.
    public var beacons: [KnownBeaconConfig]
    /// Identity resolving keys for phones with rotating addresses.
    public var irks: [IRKConfig]
    /// Built-in and custom rules that give devices without a beacon frame a stable id.
    public var fingerprints: FingerprintConfig
    /// Companies besides Apple whose `02 15` frames count as iBeacons.
    public var ibeaconCompanyIds: [ConfigNumber]
    /// Resolvable private addresses whose IRK resolution is remembered.
    public var irkCacheSize: Int
    /// Most beacons the agent tracks at once; when full, a new one replaces the least recently
    /// heard (unlisted before region members before known beacons and IRK phones).
    public var maxTrackedBeacons: Int
    public var advertise: Advertise
    public var outputs: Outputs
    /// The optional HTTP listener: `/metrics` and `/healthz` (off unless `http.listen`).
    public var http: HTTPConfig
    public var log: LogConfig

    public init(node: String, room: String? = nil, mqtt: MQTTConfig = MQTTConfig(), source: SourceSpec = .firstAdapter,
                scan: Scan = Scan(), ranging: Ranging = Ranging(), publish: Publish = Publish(),
                regions: [RegionConfig] = [], beacons: [KnownBeaconConfig] = [], irks: [IRKConfig] = [],
                fingerprints: FingerprintConfig = FingerprintConfig(), ibeaconCompanyIds: [ConfigNumber] = [],
                irkCacheSize: Int = 4096, maxTrackedBeacons: Int = AgentConfig.defaultMaxTrackedBeacons,
                advertise: Advertise = Advertise(),
                outputs: Outputs = Outputs(), http: HTTPConfig = HTTPConfig(), log: LogConfig = LogConfig()) {
        self.node = node
        self.room = room
        self.mqtt = mqtt
        self.source = source
        self.scan = scan
        self.ranging = ranging
        self.publish = publish
        self.regions = regions
        self.beacons = beacons
        self.irks = irks
        self.fingerprints = fingerprints
        self.ibeaconCompanyIds = ibeaconCompanyIds
        self.irkCacheSize = irkCacheSize
        self.maxTrackedBeacons = maxTrackedBeacons
        self.advertise = advertise
        self.outputs = outputs
        self.http = http
        self.log = log
    }

    enum CodingKeys: String, CodingKey {
        case node, room, mqtt, source, scan, ranging, publish, regions, beacons, irks, fingerprints, advertise, outputs, http, log
        case ibeaconCompanyIds = "ibeacon_company_ids"
        case irkCacheSize = "irk_cache_size"
        case maxTrackedBeacons = "max_tracked_beacons"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        node = try c.decode(String.self, forKey: .node)
        room = try c.decodeIfPresent(String.self, forKey: .room)
        mqtt = try c.decode(MQTTConfig.self, forKey: .mqtt, default: MQTTConfig())
        source = try c.decode(SourceSpec.self, forKey: .source, default: .firstAdapter)
        scan = try c.decode(Scan.self, forKey: .scan, default: Scan())
        ranging = try c.decode(Ranging.self, forKey: .ranging, default: Ranging())
        publish = try c.decode(Publish.self, forKey: .publish, default: Publish())
        regions = try c.decode([RegionConfig].self, forKey: .regions, default: [])
        beacons = try c.decode([KnownBeaconConfig].self, forKey: .beacons, default: [])
        irks = try c.decode([IRKConfig].self, forKey: .irks, default: [])
        fingerprints = try c.decode(FingerprintConfig.self, forKey: .fingerprints, default: FingerprintConfig())
        ibeaconCompanyIds = try c.decode([ConfigNumber].self, forKey: .ibeaconCompanyIds, default: [])
        irkCacheSize = try c.decode(Int.self, forKey: .irkCacheSize, default: 4096)
        maxTrackedBeacons = try c.decode(Int.self, forKey: .maxTrackedBeacons, default: AgentConfig.defaultMaxTrackedBeacons)
        advertise = try c.decode(Advertise.self, forKey: .advertise, default: Advertise())
        outputs = try c.decode(Outputs.self, forKey: .outputs, default: Outputs())
        http = try c.decode(HTTPConfig.self, forKey: .http, default: HTTPConfig())
        log = try c.decode(LogConfig.self, forKey: .log, default: LogConfig())
    }
}

extension AgentConfig {
    /// Room for the beacons of a crowded place (a few hundred real ones, many more
    /// fingerprinted phones) at about 1 kB each, a few MB on a 1 GB Pi; a flood of spoofed
    /// advertisers stops there instead of at the Pi's memory.
    public static let defaultMaxTrackedBeacons = 4096

    /// The tracking part of the config, as the advertising layer takes it. Its
    /// own validation (ids, keys, fingerprint rules) runs when the decoder is
    /// built; paths there say `known_beacons` where this file says `beacons`.
    public var advertising: AdvertisingConfig {
        AdvertisingConfig(regions: regions, knownBeacons: beacons, irks: irks, fingerprints: fingerprints,
                          ibeaconCompanyIds: ibeaconCompanyIds, irkCacheSize: irkCacheSize)
    }
}
