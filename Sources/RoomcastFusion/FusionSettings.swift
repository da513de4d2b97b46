import Shared

/// The `fusion:` section of the aggregator's config: what a user can set about how the
/// readings of every node become one room per beacon.
///
/// The model itself (docs/fusion.md) has no knobs here: its rates and spreads are
/// properties of people, rooms and radios, measured on the recordings, and live beside the
/// model (`FusionModel`). What is here is what differs from site to site: how long silence
/// means away, which knowledge of the site to use, the radio physics of its walls, and how
/// much it may track.
public struct FusionSettings: SettingTable, Codable, Equatable {
    /// A beacon no node has heard for this long is away (seconds). Slow advertisers get
    /// five of their advertising intervals when that is longer.
    public var awayTimeout: Double = 30
    /// A new beacon's first room waits this long after its first reading (seconds), so that
    /// every node that hears it has reported once.
    public var initialWait: Double = 2
    /// Readings captured longer ago than this are ignored (seconds).
    public var maxAge: Double = 60
    /// Use node positions and room polygons when the site gives them.
    public var useGeometry: Bool = true
    /// Learn each receiver's offset from the links between the nodes' own beacons
    /// (`nodes[].beacon`).
    public var learnCalibration: Bool = true
    /// Without positions, compare a beacon's pattern across the nodes with the pattern of
    /// each node's own beacon.
    public var fingerprints: Bool = true
    /// Use the rooms taught with `aggregator learn`.
    public var learnedRooms: Bool = true
    /// Radio physics for positions: log-distance path-loss exponent, and the extra loss
    /// through one wall and one floor (dB).
    public var pathLossExponent: Double = 2.0
    public var wallLoss: Double = 4
    public var floorLoss: Double = 15
    /// Beacons tracked at most; a flood of strangers is evicted first.
    public var maxBeacons: Int = 20000
    /// Nodes not in the site become a room of their own name, up to this many nodes in all.
    public var autoNodes: Bool = true
    public var maxNodes: Int = 512
    /// An away beacon not heard for this long is forgotten (seconds; 0 = never).
    public var forgetAfter: Double = 3600

    public init() {}

    public static let section = "fusion"

    public static let keys: [SettingKey<FusionSettings>] = {
        let d = FusionSettings()
        return [
            .number("away_timeout_s", \.awayTimeout, stage: "Decision", unit: "s", range: 1...86400,
                    "A beacon no node has heard for this long is away; slow advertisers get five of their cadences when that is longer (the advertising interval, or how often the readings come when that is longer: a tag sending bursts). From a room beacons have left more often than they came back after a silence (an entrance), or, once beacons have left, from a room where nothing has fallen silent before, five cadences (at least 4 s) suffice.",
                    defaultValue: d.awayTimeout),
            .number("initial_wait_s", \.initialWait, stage: "Decision", unit: "s", range: 0...60,
                    "A new beacon's first room waits this long, so that every node that hears it has reported once. A beacon the site does not list must also be heard over this span.",
                    defaultValue: d.initialWait),
            .number("max_reading_age_s", \.maxAge, stage: "Decision", unit: "s", range: 1...3600,
                    "Readings captured longer ago than this are ignored.", defaultValue: d.maxAge),
            .flag("use_geometry", \.useGeometry, stage: "Knowledge of the site",
                  "Use node positions and room polygons when the site gives them (every room with a node needs a polygon, and two nodes a position).",
                  defaultValue: d.useGeometry),
            .flag("learn_calibration", \.learnCalibration, stage: "Knowledge of the site",
                  "With positions, learn each receiver's offset from the links between the nodes' own beacons (`nodes[].beacon`).",
                  defaultValue: d.learnCalibration),
            .flag("fingerprints", \.fingerprints, stage: "Knowledge of the site",
                  "Without positions, compare a beacon's pattern across the nodes with the pattern of each node's own beacon.",
                  defaultValue: d.fingerprints),
            .flag("learned_rooms", \.learnedRooms, stage: "Knowledge of the site",
                  "Use the rooms taught with `aggregator learn` (docs/fusion.md, Training). False also leaves out Home Assistant's \"Teach room\" selects, as does a site of one room.",
                  defaultValue: d.learnedRooms),
            .number("path_loss_exponent", \.pathLossExponent, stage: "Radio physics (positions only)", range: 1...6,
                    "How fast the signal falls with distance (2 in free space, 2–3.5 indoors). What each value gives on the recordings (an open plan, a furnished flat): docs/results.md, \"The path-loss exponent\".", defaultValue: d.pathLossExponent),
            .number("wall_loss_db", \.wallLoss, stage: "Radio physics (positions only)", unit: "dB", range: 0...40,
                    "Extra loss through one wall.", defaultValue: d.wallLoss),
            .number("floor_loss_db", \.floorLoss, stage: "Radio physics (positions only)", unit: "dB", range: 0...60,
                    "Extra loss through one floor.", defaultValue: d.floorLoss),
            .integer("max_beacons", \.maxBeacons, stage: "Capacity", range: 1...1_000_000,
                     "Beacons tracked at most, at least the beacons listed; beyond it, strangers never placed in a room are evicted first, listed beacons never.",
                     defaultValue: d.maxBeacons),
            .flag("auto_nodes", \.autoNodes, stage: "Capacity",
                  "On a site whose `nodes:` is empty, each node heard becomes a room of its own name (but one named `not_home`, which is refused: its room would read as away). Once `nodes:` lists any node, one it does not list is refused (`unknown_node`).", defaultValue: d.autoNodes),
            .integer("max_nodes", \.maxNodes, stage: "Capacity", range: 1...4096,
                     "Nodes at most, listed and automatic together, at least the nodes listed; automatic ones also at most 2097152 ÷ max_beacons, and at least 16 (104 at the default), so their evidence stays within 128 MiB up to 131072 beacons.", defaultValue: d.maxNodes),
            .number("forget_after_s", \.forgetAfter, stage: "Capacity", unit: "s", range: 0...2_592_000,
                    "An away beacon, or one never placed, not heard for this long is forgotten (0 = never); at least away_timeout_s. A listed beacon's or a person's away presence is still refreshed (not under partition:).", defaultValue: d.forgetAfter),
        ]
    }()

    public init(from decoder: any Decoder) throws {
        try self.init(fromTable: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        try encodeTable(to: encoder)
    }

    /// Every value outside its bounds, each with its path (`fusion.<key>`); empty when valid.
    public func validate() -> [String] {
        tableProblems().map { "\($0.path): \($0.message)" }
    }
}
