/// The constants of the decision model (docs/fusion.md): properties of people, rooms and
/// radios rather than of one site, so they are not settings. Each was measured on the
/// recordings and the simulator's tune split (`roomcast-bench results` shows the effect of
/// the model as a whole); tests may build an engine with other values.
public struct FusionModel: Sendable, Equatable {
    // MARK: Motion and room changes (RoomMotionFilter)

    /// Mean time a beacon holds still before it moves, and moves before it stops (seconds).
    public var stillTime: Double = 120
    public var moveTime: Double = 8
    /// Rate of room changes while still (about one an hour: a correction, not a walk) and
    /// while moving (per second).
    public var stillChangeRate: Double = 1.0 / 3600
    public var movingChangeRate: Double = 0.3

    /// The room shown changes when another is likelier by this much (probability): showing
    /// a room a moment late costs less than showing two rooms in turn.
    public var switchCost: Double = 0.2

    /// A still beacon's spot: the variance its shadowing adds to every second it stays, over
    /// the variance of one second's own noise (`RoomMotionFilter.spotInformation`). At 0.3 a
    /// spot's seconds together are worth at most 4.3 independent ones, whatever their number.
    public var spotShare: Double = 0.3

    // MARK: Evidence

    /// Membership likelihood: dB per natural-log unit between the loudest nodes of two rooms.
    public var membershipTemperature: Double = 3
    /// A room none of whose nodes hears the beacon counts as this much weaker than the
    /// weakest node that does (dB).
    public var unheardPenalty: Double = 8
    /// How much of one second's room evidence counts: readings a second apart share most of
    /// their shadowing, so one second is worth less than an independent observation.
    public var membershipWeight: Double = 0.8
    public var geometryWeight: Double = 0.5
    /// The variance of the levels those weights were chosen on (dB²): what the agent's filter
    /// reports for the Kolakowski tag, whose packets arrive about six times a second (±2.05 dB,
    /// the median over the recordings). A beacon whose levels the nodes are less sure of (heard
    /// once a second: 8 dB²) counts in proportion (`FusionEngine.levelCertainty`).
    public var levelVariance: Double = 4.2
    /// With taught rooms, the share of that second's weight their likelihood takes, the rest
    /// staying with membership or positions: they are two readings of the same levels, so the
    /// second counts once. Added on top instead, each second counted 1.6 times, and a taught
    /// site flapped twice as often as an untaught one (kolakowski-calib, sessions 3–4).
    public var learnedShare: Double = 0.5
    /// One second's room evidence never says less of a room than this (log units): a room
    /// ruled out by one second is not ruled out for good.
    public var evidenceFloor: Double = 30

    /// Motion likelihood: how far a link's fast average parts from its slow one, spread
    /// while still and while moving (dB), over the loudest `motionLinks` links (far links
    /// carry noise, not motion), weighed per second of evidence and capped per link. The
    /// weight is below 1 because a link's parting one second and the next share its slow
    /// average; it is 0.6 rather than 0.3 since a still beacon's spot counts once
    /// (`spotShare`), for then a walk is followed mostly through the moving states
    /// (chosen with `spotShare` on the tune split and kolakowski-calib).
    public var stillSpread: Double = 2.5
    public var movingSpread: Double = 7
    public var motionLinks: Int = 3
    public var motionWeight: Double = 0.6
    public var motionCap: Double = 15

    // MARK: Per-node averages

    /// Time constants of the fast RSSI average, the evidence, and of the slow average the
    /// motion likelihood compares it with (seconds). Agents publish about once a second and
    /// already filter each link, so the fast average is close to the newest reading: it
    /// smooths only what arrives in bursts (an agent's early publish on a large change).
    public var fastTimeConstant: Double = 0.3
    public var slowTimeConstant: Double = 16

    // MARK: Time windows

    /// A node's evidence counts while its newest reading is at most this old (seconds), or
    /// this many of its reading intervals when longer.
    public var freshness: Double = 4
    public var freshnessIntervals: Double = 4
    /// Away after this many advertising intervals of silence, when longer than the timeout.
    public var awayIntervals: Double = 5
    /// Each beacon is evaluated at most this often (seconds).
    public var evaluationInterval: Double = 0.25

    // MARK: Input bounds

    /// Readings stamped up to `skewBound` ahead of the aggregator clock are node clock skew,
    /// clamped silently; further, clamped and counted; beyond `maxFuture`, rejected.
    public var skewBound: Double = 2
    public var maxFuture: Double = 120
    /// RSSI outside this range (dBm) is not a reading.
    public var minRSSI: Double = -127
    public var maxRSSI: Double = 20

    // MARK: Positions (SiteGeometry)

    /// Grid spacing (metres), coarsened above `maxCells` cells; rooms farther than
    /// `geometryRadius` from the loudest node are not evaluated.
    public var gridResolution: Double = 0.25
    public var maxCells: Int = 6000
    public var geometryRadius: Double = 15
    /// Storey height for nodes without a room, and the beacon's height above its floor (metres).
    public var floorHeight: Double = 3
    public var beaconHeight: Double = 1.0

    /// The height of a node given no z: a wall or shelf well above the floor it stands on.
    public var defaultNodeHeight: Double { floorHeight * 0.7 }

    /// The floor a node without a room stands on: the storey its z (from floor 0's floor) lies in.
    public func floor(atHeight z: Double) -> Int { Int((z / floorHeight).rounded(.down)) }

    /// RSSI spread around the path-loss model (dB), growing per wall; spread of a beacon's
    /// real 1 m power around its advertised one (dB).
    public var rssiSigma: Double = 5
    public var wallSigma: Double = 1
    public var powerSigma: Double = 6
    /// Where a node stops hearing: the low quantile of every level it reports, tracked in
    /// steps of this many dB from its first. A positioned node that hears nothing fresh of a
    /// beacon says the beacon is where it would be heard below that. Being a quantile of what
    /// it did hear, the estimate lies above the radio's true floor, where it says less: it
    /// speaks from the first level.
    public var hearingFloorQuantile: Double = 0.02
    public var hearingFloorStep: Double = 0.5

    // MARK: Taught rooms

    /// A learned level's spread is never taken below this (dB): a short label is not that sure.
    public var learnedSpreadFloor: Double = 2
    /// Taught levels are scored as Student's t with this many degrees of freedom, not as a
    /// Gaussian: a label samples a few spots of a room, and a spot it did not cover lies in the
    /// tails, where a Gaussian would rule the room out. 4: the usual robust choice (Lange,
    /// Little and Taylor, 1989), not tuned.
    public var learnedDegreesOfFreedom: Double = 4
    /// Prior spread of the offset common to every node between the taught beacon and this one
    /// (dB): another tag of the same kind, or the same tag held differently.
    public var learnedLevelSpread: Double = 4
    /// Probability given to what the label never saw: a node hearing the beacon that never did
    /// in the room, or silent where it always heard it.
    public var learnedRarely: Double = 0.05

    // MARK: Node beacons

    /// Fingerprints: spread of a beacon's pattern around its room's per link (dB), and how
    /// far below the loudest link the room's own node may hear it (dB).
    public var fingerprintSigma: Double = 3
    public var fingerprintOwnSigma: Double = 6
    /// Receiver offsets from node links: prior spread, bound (dB) and how often solved (s).
    public var receiverOffsetSigma: Double = 6
    public var maxLearnedOffset: Double = 12
    public var calibrationInterval: Double = 10

    public init() {}

    /// The model as measured.
    public static let standard = FusionModel()
}
