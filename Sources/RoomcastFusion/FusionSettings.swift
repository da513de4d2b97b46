/// Tuning of the fusion engine: the `fusion:` section of the aggregator config.
///
/// Every field is optional in the file (snake_case keys) and falls back to the
/// default documented here; the defaults were tuned on the Kolakowski flat
/// recordings (docs/fusion.md explains each choice).
public struct FusionSettings: Codable, Sendable, Equatable {
    // MARK: Time windows

    /// A beacon nobody has heard for this long is away (seconds). A floor: slow
    /// advertisers get `awayIntervals` × their advertising interval instead.
    public var awayTimeout: Double = 30
    /// Away after this many advertising intervals of silence, when that is longer than `awayTimeout`.
    public var awayIntervals: Double = 5
    /// A node's evidence counts while its newest reading is at most this old (seconds); a floor.
    public var freshness: Double = 4
    /// Evidence also stays fresh for this many advertising (or reading) intervals.
    public var freshnessIntervals: Double = 4
    /// A beacon none of whose fresh nodes has a reading newer than this many of its reading
    /// intervals (at least as many seconds) has gone quiet: its room holds until it is
    /// heard again or the away timeout. Evidence that only ages is no news of where the
    /// beacon is, and as it expires node by node the last node left would otherwise take
    /// it (someone leaving the house shown in the kitchen until the timeout). 0 = off.
    public var quietIntervals: Double = 2
    /// For this many seconds after two or more nodes last heard a beacon, one node alone
    /// moves it only if it was the loudest of them or hears it louder than that one did:
    /// when a beacon leaves (or stops), a late, faint packet at a far node is no move, while
    /// a walk into a room only its own node hears is (seconds; 0 = off).
    public var loneNodeHold: Double = 8
    /// A new beacon's first room waits this long after its first reading (seconds; 0 =
    /// decide on the first): agents publish once a second, so the first reading is one
    /// node's, and a static tag placed on it by the node that happened to report first
    /// took a minute and more to put right (a still beacon is sticky).
    public var initialWait: Double = 2
    /// Decisions are re-evaluated at most this often per beacon (seconds); the
    /// geometry estimate runs at this rate, never per reading.
    public var evaluationInterval: Double = 0.25

    // MARK: Input bounds

    /// Readings stamped up to this far ahead of the aggregator clock are node clock
    /// skew: clamped to now silently. Further ahead they are clamped and counted.
    public var skewBound: Double = 2
    /// Readings stamped further ahead than this are rejected (`tooFarFuture`).
    public var maxFuture: Double = 120
    /// Readings older than this (by capture time, against now) are rejected (`tooOld`).
    public var maxAge: Double = 60
    /// RSSI outside this range (dBm) is rejected as invalid.
    public var minRSSI: Double = -127
    public var maxRSSI: Double = 20

    // MARK: Filtering

    /// Which RSSI of a reading feeds the evidence: `raw` (the newest packet's,
    /// filtered here only) or `filtered` (the node's own filter, then this one).
    public var rssiInput: RSSIInput = .filtered
    /// With `filtered` input: how far to lean towards the reading's newest raw RSSI
    /// (0…1). The node's filter lags; a little of the raw value buys back time.
    public var rawWeight: Double = 0

    /// Time constant (seconds) of the per-node RSSI average when the signal rises.
    public var riseTimeConstant: Double = 0.3
    /// Time constant when it falls. Longer than the rise: fading only ever
    /// removes power, so drops are more often noise than movement.
    public var fallTimeConstant: Double = 0.6

    /// Nearest-node mode: time constant of the evidence average while a node's
    /// signal is steady (seconds). Geometry uses the fast average.
    public var steadyTimeConstant: Double = 6
    /// The evidence average jumps to the fast one when they differ by more than
    /// this many standard deviations of single readings.
    public var changeThreshold: Double = 1.0
    /// ... for at least this long (seconds).
    public var changePersistence: Double = 0.6

    // MARK: Decision

    /// Posterior-probability lead a challenger room needs over the current room.
    public var switchMargin: Double = 0.3
    /// With geometry: switch only once the estimated position is this far out of the
    /// current room (metres; 0 = off).
    public var positionMargin: Double = 0.6
    /// How long a challenger must keep that lead before the switch (seconds).
    public var minDwell: Double = 0
    /// A beacon holding still (motion gate on, `room_filter: hmm`: no motion for `motion_hold`
    /// and no creep) switches only on a lead of `still_switch_margin` kept for
    /// `still_min_dwell` seconds (since stop 13): a tag lying where two rooms' evidence
    /// is nearly even otherwise changes room whenever slow shadowing tips it over.
    public var stillSwitchMargin: Double = 0.6
    public var stillMinDwell: Double = 6
    /// Once a beacon has held still for `still_record_after` seconds, it also switches only
    /// when its whole record since it stopped favours the challenger: the room's evidence,
    /// averaged over every second of the stillness, must lead the current room's by
    /// `still_record_margin` (log-likelihood per second). A still beacon has not moved, so a
    /// change is a correction, and what corrects it is all it has said since it stopped, not
    /// the last half-minute of drift (0 = off).
    public var stillRecordAfter: Double = 20
    public var stillRecordMargin: Double = 0.3
    /// A record of hours holds a room for hours: the minutes after a move the gate and the
    /// creep test did not see (a few dB on a link or two) cannot outweigh them, and a tag
    /// still for an hour, then carried 7 dB nearer the other room's node, stayed where it
    /// was. So the record also gives way when its recent part — the same evidence, fading
    /// with `still_recent_time_constant` (seconds) — favours the challenger by
    /// `still_recent_margin` per second, five times the whole record's margin: a still
    /// beacon's last minute rarely says so much against the room it holds (0 = off).
    public var stillRecentTimeConstant: Double = 60
    public var stillRecentMargin: Double = 1.5
    /// Creep: what the motion gate cannot see (a robot vacuum at 0.1 m/s, a slow walker)
    /// still moves the slow averages away from `creep_time_constant` ones, on several
    /// links at once. A beacon whose slow averages part from those by `creep_threshold` ×
    /// `creep_sigma` dB in root-sum-square (every link but the one that parted most)
    /// does not count as holding still (0 = off).
    public var creepTimeConstant: Double = 60
    public var creepSigma: Double = 2
    public var creepThreshold: Double = 2
    /// The challenger's lead integrated over time (probability × seconds) needed
    /// to switch: a decisive lead (≈1) switches in this many seconds, a marginal one
    /// (≈`switch_margin`) takes 1/margin times longer.
    public var switchEvidence: Double = 0
    /// Prior rate of room changes (per second) in the room-level hidden Markov model:
    /// lower is stickier.
    public var switchRate: Double = 0.05
    /// Weight of one evaluation's likelihood in the room filter (readings are
    /// correlated, so less than 1).
    public var evidenceWeight: Double = 1
    /// Nearest-node mode: its own room-filter weight and change rate. One node
    /// against another is coarser evidence than a fit over all nodes, so the
    /// filter is stickier.
    public var nearestEvidenceWeight: Double = 0.5
    public var nearestSwitchRate: Double = 0.01
    /// Nearest-node mode: dB per natural-log unit of likelihood.
    public var nearestTemperature: Double = 3
    /// Nearest-node mode: the temperature is at least this × the noisiest fresh
    /// node's reading-to-reading spread (dB), so noisy links count less.
    public var nearestNoiseFactor: Double = 1
    /// Nearest-node mode: how much weaker than the weakest heard node a room with
    /// no fresh node is taken to be (dB).
    public var unheardPenalty: Double = 8
    /// Without positions, where nodes transmit beacons of their own (`nodes[].beacon`):
    /// match each beacon's pattern across the nodes with each node's beacon's pattern as
    /// the other nodes hear it (since stop 14), and how far (dB per link, after removing
    /// the beacon's own level) a pattern spreads around its room's.
    public var fingerprints = true
    public var fingerprintSigma: Double = 3
    /// ... and how far (dB) the room's own node may hear the beacon, above the pattern's
    /// level, below the loudest other node it hears before that counts against the room
    /// (0 = not checked).
    public var fingerprintOwnSigma: Double = 6

    // MARK: Geometry

    /// Use node positions and room polygons (when configured) to estimate position.
    public var useGeometry: Bool = true
    /// Grid spacing of the position likelihood (metres); coarsened automatically
    /// above `maxCells` cells.
    public var gridResolution: Double = 0.25
    public var maxCells: Int = 6000
    /// Only rooms with a cell within this distance of the strongest node are
    /// evaluated (metres): bounds the cost per beacon on large sites.
    public var geometryRadius: Double = 15
    /// Log-distance path-loss exponent.
    public var pathLossExponent: Double = 2.0
    /// Extra attenuation per wall between node and beacon (dB).
    public var wallLoss: Double = 4
    /// Extra attenuation per floor (dB).
    public var floorLoss: Double = 15
    /// Storey height (metres) for nodes whose floor is not known from their room.
    public var floorHeight: Double = 3
    /// Assumed beacon height above its floor (metres).
    public var beaconHeight: Double = 1.0
    /// RSSI noise around the path-loss model (dB), and its growth per wall.
    public var rssiSigma: Double = 5
    public var wallSigma: Double = 1
    /// Whether a room's prior grows with its area (room likelihood summed over its
    /// cells) or all rooms start equal (averaged; the default since stop 12: a big open
    /// plan next to a small room no longer wins a beacon on the wall between them).
    public var roomAreaPrior: Bool = false
    /// Prior spread of the beacon's real 1 m power around its advertised one (dB).
    public var powerSigma: Double = 6
    /// Motion gate (on by default since stop 12; nearest-node mode too since stop 13): a beacon counts as moving when
    /// the fast averages of its nodes, beyond the one that moved most, part from
    /// their slow (`motion_time_constant`) averages by `motion_threshold` ×
    /// `motion_sigma` dB in root-sum-square — a move changes several links at once,
    /// slow shadowing one — or one link alone by `motion_single_threshold` ×
    /// `motion_sigma`. For `motion_hold` seconds after that the room filter uses
    /// `moving_evidence_weight` and `moving_switch_rate` (quick), otherwise
    /// `still_evidence_weight` and `still_switch_rate` (sticky).
    public var motionGate: Bool = true
    public var motionTimeConstant: Double = 16
    public var motionSigma: Double = 4.5
    public var motionThreshold: Double = 2.0
    public var motionSingleThreshold: Double = 3.5
    /// With two fresh links only (since stop 18): partings in opposite directions that add
    /// up to this many `motion_sigma`, kept for `motion_swing_persistence` seconds, open the
    /// gate. A move shows on both links, shadowing on one. Since stop 19, partings in the
    /// same direction that add up to `motion_single_threshold` do too (a walk away from, or
    /// towards, two nodes by the wall between their rooms), and creep in opposite
    /// directions counts both links. 0 turns every two-link test off.
    public var motionSwingThreshold: Double = 2.5
    public var motionSwingPersistence: Double = 1
    /// The two-link tests also ask for this many times the two links' combined reading
    /// spread (root of the summed variances; 0 = off; since stop 19): on noisy links one
    /// reading parts the fast average from the slow one by as much as a walk does.
    public var motionSwingNoise: Double = 2.5
    public var motionHold: Double = 10
    public var movingEvidenceWeight: Double = 3
    public var movingSwitchRate: Double = 0.2
    public var stillEvidenceWeight: Double = 0.12
    public var stillSwitchRate: Double = 0.008
    /// The gate in nearest-node mode (stop 13): while moving, `moving_switch_rate` and
    /// this weight, on the nodes' fast averages; while still, `nearest_switch_rate` and
    /// `nearest_still_evidence_weight` on their steady ones.
    public var nearestMovingEvidenceWeight: Double = 6
    public var nearestStillEvidenceWeight: Double = 0.06

    /// How the room is tracked over time in geometry mode: `hmm` (a filter over
    /// rooms fed each evaluation's room likelihoods) or `particles` (a particle
    /// filter over positions that tracks each link's shadowing; see
    /// ParticleRoomFilter).
    public enum RoomFilter: String, Codable, Sendable { case hmm, particles }
    public var roomFilter: RoomFilter = .hmm
    public var particleCount: Int = 256
    /// Slow shadowing per link: spread (dB) and correlation time (s).
    public var shadowSigma: Double = 3
    public var shadowTime: Double = 8
    /// Noise of one link's fast average around model plus shadowing (dB).
    public var measurementSigma: Double = 3
    /// How fast the beacon's own power offset may drift (dB/√s): orientation, a body
    /// in the way of every link at once.
    public var powerDrift: Double = 0.5
    /// Particle motion: random-walk spread (m/√s) when still and when walking,
    /// the walking share, and the rate of jumps anywhere near (per second).
    public var stillStep: Double = 0.15
    public var walkingStep: Double = 2.0
    public var walkingShare: Double = 0.3
    public var particleJumpRate: Double = 0.1
    /// Mean time a particle stays still before it starts walking, and walks before it
    /// stops (seconds).
    public var stillTime: Double = 60
    public var walkTime: Double = 6

    // MARK: Learning

    /// Learn a per-node RSSI offset from the data (needs geometry): from the nodes' own
    /// beacons where they transmit (`NodeCalibration`), otherwise from the spots where
    /// tracked beacons held still (`SpotCalibration`, since stop 17).
    public var learnCalibration: Bool = true
    /// Bound of the learned offset (dB). Wide enough for a receiver 12 dB off
    /// (cheap receivers and enclosures differ that much); 4 dB clipped such a node's
    /// correction and left it pulling beacons into its room.
    public var maxLearnedOffset: Double = 12
    /// Spread of receiver offsets before the nodes' own beacons say otherwise (dB): the
    /// prior that settles what node-to-node links cannot tell apart.
    public var receiverOffsetSigma: Double = 6
    /// How often offsets are solved from the nodes' own beacons (seconds).
    public var calibrationInterval: Double = 10

    // MARK: Capacity

    /// Beacons tracked at most; more are rejected (`capacity`).
    public var maxBeacons: Int = 20000
    /// Nodes not in the site become their own room, up to this many nodes in all.
    public var autoNodes: Bool = true
    public var maxNodes: Int = 512
    /// An away beacon not heard for this long is forgotten (seconds).
    public var forgetAfter: Double = 3600

    public init() {}

    enum CodingKeys: String, CodingKey {
        case awayTimeout = "away_timeout"
        case awayIntervals = "away_intervals"
        case freshness
        case freshnessIntervals = "freshness_intervals"
        case evaluationInterval = "evaluation_interval"
        case quietIntervals = "quiet_intervals"
        case loneNodeHold = "lone_node_hold"
        case initialWait = "initial_wait"
        case skewBound = "skew_bound"
        case maxFuture = "max_future"
        case maxAge = "max_age"
        case minRSSI = "min_rssi"
        case maxRSSI = "max_rssi"
        case rssiInput = "rssi_input"
        case rawWeight = "raw_weight"
        case riseTimeConstant = "rise_time_constant"
        case fallTimeConstant = "fall_time_constant"
        case steadyTimeConstant = "steady_time_constant"
        case changeThreshold = "change_threshold"
        case changePersistence = "change_persistence"
        case switchMargin = "switch_margin"
        case positionMargin = "position_margin"
        case minDwell = "min_dwell"
        case stillSwitchMargin = "still_switch_margin"
        case stillMinDwell = "still_min_dwell"
        case stillRecordAfter = "still_record_after"
        case stillRecordMargin = "still_record_margin"
        case stillRecentTimeConstant = "still_recent_time_constant"
        case stillRecentMargin = "still_recent_margin"
        case creepTimeConstant = "creep_time_constant"
        case creepSigma = "creep_sigma"
        case creepThreshold = "creep_threshold"
        case switchRate = "switch_rate"
        case switchEvidence = "switch_evidence"
        case evidenceWeight = "evidence_weight"
        case nearestTemperature = "nearest_temperature"
        case nearestEvidenceWeight = "nearest_evidence_weight"
        case nearestSwitchRate = "nearest_switch_rate"
        case unheardPenalty = "unheard_penalty"
        case fingerprints
        case fingerprintSigma = "fingerprint_sigma"
        case fingerprintOwnSigma = "fingerprint_own_sigma"
        case nearestNoiseFactor = "nearest_noise_factor"
        case useGeometry = "use_geometry"
        case gridResolution = "grid_resolution"
        case maxCells = "max_cells"
        case geometryRadius = "geometry_radius"
        case pathLossExponent = "path_loss_exponent"
        case wallLoss = "wall_loss"
        case floorLoss = "floor_loss"
        case floorHeight = "floor_height"
        case beaconHeight = "beacon_height"
        case rssiSigma = "rssi_sigma"
        case wallSigma = "wall_sigma"
        case powerSigma = "power_sigma"
        case motionGate = "motion_gate"
        case motionTimeConstant = "motion_time_constant"
        case motionSigma = "motion_sigma"
        case motionThreshold = "motion_threshold"
        case motionSingleThreshold = "motion_single_threshold"
        case motionSwingThreshold = "motion_swing_threshold"
        case motionSwingPersistence = "motion_swing_persistence"
        case motionSwingNoise = "motion_swing_noise"
        case motionHold = "motion_hold"
        case movingEvidenceWeight = "moving_evidence_weight"
        case movingSwitchRate = "moving_switch_rate"
        case stillEvidenceWeight = "still_evidence_weight"
        case stillSwitchRate = "still_switch_rate"
        case nearestMovingEvidenceWeight = "nearest_moving_evidence_weight"
        case nearestStillEvidenceWeight = "nearest_still_evidence_weight"
        case roomFilter = "room_filter"
        case particleCount = "particle_count"
        case shadowSigma = "shadow_sigma"
        case shadowTime = "shadow_time"
        case measurementSigma = "measurement_sigma"
        case powerDrift = "power_drift"
        case stillStep = "still_step"
        case walkingStep = "walking_step"
        case walkingShare = "walking_share"
        case particleJumpRate = "particle_jump_rate"
        case stillTime = "still_time"
        case walkTime = "walk_time"
        case roomAreaPrior = "room_area_prior"
        case receiverOffsetSigma = "receiver_offset_sigma"
        case calibrationInterval = "calibration_interval"
        case learnCalibration = "learn_calibration"
        case maxLearnedOffset = "max_learned_offset"
        case maxBeacons = "max_beacons"
        case autoNodes = "auto_nodes"
        case maxNodes = "max_nodes"
        case forgetAfter = "forget_after"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func v<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T {
            try c.decodeIfPresent(T.self, forKey: key) ?? fallback
        }
        let d = FusionSettings()
        awayTimeout = try v(.awayTimeout, d.awayTimeout)
        awayIntervals = try v(.awayIntervals, d.awayIntervals)
        freshness = try v(.freshness, d.freshness)
        freshnessIntervals = try v(.freshnessIntervals, d.freshnessIntervals)
        evaluationInterval = try v(.evaluationInterval, d.evaluationInterval)
        skewBound = try v(.skewBound, d.skewBound)
        maxFuture = try v(.maxFuture, d.maxFuture)
        maxAge = try v(.maxAge, d.maxAge)
        quietIntervals = try v(.quietIntervals, d.quietIntervals)
        loneNodeHold = try v(.loneNodeHold, d.loneNodeHold)
        initialWait = try v(.initialWait, d.initialWait)
        minRSSI = try v(.minRSSI, d.minRSSI)
        maxRSSI = try v(.maxRSSI, d.maxRSSI)
        rssiInput = try v(.rssiInput, d.rssiInput)
        rawWeight = try v(.rawWeight, d.rawWeight)
        riseTimeConstant = try v(.riseTimeConstant, d.riseTimeConstant)
        fallTimeConstant = try v(.fallTimeConstant, d.fallTimeConstant)
        steadyTimeConstant = try v(.steadyTimeConstant, d.steadyTimeConstant)
        changeThreshold = try v(.changeThreshold, d.changeThreshold)
        changePersistence = try v(.changePersistence, d.changePersistence)
        switchMargin = try v(.switchMargin, d.switchMargin)
        positionMargin = try v(.positionMargin, d.positionMargin)
        minDwell = try v(.minDwell, d.minDwell)
        stillSwitchMargin = try v(.stillSwitchMargin, d.stillSwitchMargin)
        stillMinDwell = try v(.stillMinDwell, d.stillMinDwell)
        stillRecordAfter = try v(.stillRecordAfter, d.stillRecordAfter)
        stillRecordMargin = try v(.stillRecordMargin, d.stillRecordMargin)
        stillRecentTimeConstant = try v(.stillRecentTimeConstant, d.stillRecentTimeConstant)
        stillRecentMargin = try v(.stillRecentMargin, d.stillRecentMargin)
        creepTimeConstant = try v(.creepTimeConstant, d.creepTimeConstant)
        creepSigma = try v(.creepSigma, d.creepSigma)
        creepThreshold = try v(.creepThreshold, d.creepThreshold)
        switchRate = try v(.switchRate, d.switchRate)
        switchEvidence = try v(.switchEvidence, d.switchEvidence)
        evidenceWeight = try v(.evidenceWeight, d.evidenceWeight)
        nearestTemperature = try v(.nearestTemperature, d.nearestTemperature)
        nearestEvidenceWeight = try v(.nearestEvidenceWeight, d.nearestEvidenceWeight)
        nearestSwitchRate = try v(.nearestSwitchRate, d.nearestSwitchRate)
        unheardPenalty = try v(.unheardPenalty, d.unheardPenalty)
        fingerprints = try v(.fingerprints, d.fingerprints)
        fingerprintSigma = try v(.fingerprintSigma, d.fingerprintSigma)
        fingerprintOwnSigma = try v(.fingerprintOwnSigma, d.fingerprintOwnSigma)
        nearestNoiseFactor = try v(.nearestNoiseFactor, d.nearestNoiseFactor)
        useGeometry = try v(.useGeometry, d.useGeometry)
        gridResolution = try v(.gridResolution, d.gridResolution)
        maxCells = try v(.maxCells, d.maxCells)
        geometryRadius = try v(.geometryRadius, d.geometryRadius)
        pathLossExponent = try v(.pathLossExponent, d.pathLossExponent)
        wallLoss = try v(.wallLoss, d.wallLoss)
        floorLoss = try v(.floorLoss, d.floorLoss)
        floorHeight = try v(.floorHeight, d.floorHeight)
        beaconHeight = try v(.beaconHeight, d.beaconHeight)
        rssiSigma = try v(.rssiSigma, d.rssiSigma)
        wallSigma = try v(.wallSigma, d.wallSigma)
        powerSigma = try v(.powerSigma, d.powerSigma)
        motionGate = try v(.motionGate, d.motionGate)
        motionTimeConstant = try v(.motionTimeConstant, d.motionTimeConstant)
        motionSigma = try v(.motionSigma, d.motionSigma)
        motionThreshold = try v(.motionThreshold, d.motionThreshold)
        motionSingleThreshold = try v(.motionSingleThreshold, d.motionSingleThreshold)
        motionSwingThreshold = try v(.motionSwingThreshold, d.motionSwingThreshold)
        motionSwingPersistence = try v(.motionSwingPersistence, d.motionSwingPersistence)
        motionSwingNoise = try v(.motionSwingNoise, d.motionSwingNoise)
        motionHold = try v(.motionHold, d.motionHold)
        movingEvidenceWeight = try v(.movingEvidenceWeight, d.movingEvidenceWeight)
        movingSwitchRate = try v(.movingSwitchRate, d.movingSwitchRate)
        stillEvidenceWeight = try v(.stillEvidenceWeight, d.stillEvidenceWeight)
        stillSwitchRate = try v(.stillSwitchRate, d.stillSwitchRate)
        nearestMovingEvidenceWeight = try v(.nearestMovingEvidenceWeight, d.nearestMovingEvidenceWeight)
        nearestStillEvidenceWeight = try v(.nearestStillEvidenceWeight, d.nearestStillEvidenceWeight)
        roomFilter = try v(.roomFilter, d.roomFilter)
        particleCount = try v(.particleCount, d.particleCount)
        shadowSigma = try v(.shadowSigma, d.shadowSigma)
        shadowTime = try v(.shadowTime, d.shadowTime)
        measurementSigma = try v(.measurementSigma, d.measurementSigma)
        powerDrift = try v(.powerDrift, d.powerDrift)
        stillStep = try v(.stillStep, d.stillStep)
        walkingStep = try v(.walkingStep, d.walkingStep)
        walkingShare = try v(.walkingShare, d.walkingShare)
        particleJumpRate = try v(.particleJumpRate, d.particleJumpRate)
        stillTime = try v(.stillTime, d.stillTime)
        walkTime = try v(.walkTime, d.walkTime)
        roomAreaPrior = try v(.roomAreaPrior, d.roomAreaPrior)
        receiverOffsetSigma = try v(.receiverOffsetSigma, d.receiverOffsetSigma)
        calibrationInterval = try v(.calibrationInterval, d.calibrationInterval)
        learnCalibration = try v(.learnCalibration, d.learnCalibration)
        maxLearnedOffset = try v(.maxLearnedOffset, d.maxLearnedOffset)
        maxBeacons = try v(.maxBeacons, d.maxBeacons)
        autoNodes = try v(.autoNodes, d.autoNodes)
        maxNodes = try v(.maxNodes, d.maxNodes)
        forgetAfter = try v(.forgetAfter, d.forgetAfter)
    }

    /// Every problem with these settings, each prefixed with its config path
    /// (`fusion.<key>`); empty when valid.
    public func validate() -> [String] {
        var problems: [String] = []
        func positive(_ value: Double, _ key: CodingKeys) {
            if !(value > 0) || !value.isFinite { problems.append("fusion.\(key.rawValue): must be > 0 (is \(value))") }
        }
        func nonNegative(_ value: Double, _ key: CodingKeys) {
            if !(value >= 0) || !value.isFinite { problems.append("fusion.\(key.rawValue): must be >= 0 (is \(value))") }
        }
        positive(awayTimeout, .awayTimeout)
        nonNegative(awayIntervals, .awayIntervals)
        positive(freshness, .freshness)
        nonNegative(freshnessIntervals, .freshnessIntervals)
        positive(evaluationInterval, .evaluationInterval)
        nonNegative(quietIntervals, .quietIntervals)
        nonNegative(loneNodeHold, .loneNodeHold)
        nonNegative(initialWait, .initialWait)
        nonNegative(skewBound, .skewBound)
        positive(maxFuture, .maxFuture)
        positive(maxAge, .maxAge)
        positive(riseTimeConstant, .riseTimeConstant)
        positive(fallTimeConstant, .fallTimeConstant)
        positive(steadyTimeConstant, .steadyTimeConstant)
        nonNegative(changeThreshold, .changeThreshold)
        nonNegative(changePersistence, .changePersistence)
        nonNegative(minDwell, .minDwell)
        nonNegative(stillMinDwell, .stillMinDwell)
        nonNegative(stillRecordAfter, .stillRecordAfter)
        nonNegative(stillRecordMargin, .stillRecordMargin)
        positive(stillRecentTimeConstant, .stillRecentTimeConstant)
        nonNegative(stillRecentMargin, .stillRecentMargin)
        positive(creepTimeConstant, .creepTimeConstant)
        positive(creepSigma, .creepSigma)
        nonNegative(creepThreshold, .creepThreshold)
        positive(switchRate, .switchRate)
        nonNegative(switchEvidence, .switchEvidence)
        positive(evidenceWeight, .evidenceWeight)
        positive(nearestTemperature, .nearestTemperature)
        positive(fingerprintSigma, .fingerprintSigma)
        nonNegative(fingerprintOwnSigma, .fingerprintOwnSigma)
        positive(nearestEvidenceWeight, .nearestEvidenceWeight)
        positive(nearestSwitchRate, .nearestSwitchRate)
        nonNegative(unheardPenalty, .unheardPenalty)
        nonNegative(nearestNoiseFactor, .nearestNoiseFactor)
        positive(gridResolution, .gridResolution)
        positive(geometryRadius, .geometryRadius)
        positive(pathLossExponent, .pathLossExponent)
        nonNegative(wallLoss, .wallLoss)
        nonNegative(floorLoss, .floorLoss)
        positive(floorHeight, .floorHeight)
        nonNegative(beaconHeight, .beaconHeight)
        positive(rssiSigma, .rssiSigma)
        nonNegative(wallSigma, .wallSigma)
        positive(powerSigma, .powerSigma)
        positive(motionTimeConstant, .motionTimeConstant)
        positive(motionSigma, .motionSigma)
        positive(motionThreshold, .motionThreshold)
        positive(motionSingleThreshold, .motionSingleThreshold)
        nonNegative(motionSwingThreshold, .motionSwingThreshold)
        nonNegative(motionSwingPersistence, .motionSwingPersistence)
        nonNegative(motionSwingNoise, .motionSwingNoise)
        nonNegative(motionHold, .motionHold)
        positive(movingEvidenceWeight, .movingEvidenceWeight)
        positive(movingSwitchRate, .movingSwitchRate)
        positive(stillEvidenceWeight, .stillEvidenceWeight)
        positive(stillSwitchRate, .stillSwitchRate)
        positive(nearestMovingEvidenceWeight, .nearestMovingEvidenceWeight)
        positive(nearestStillEvidenceWeight, .nearestStillEvidenceWeight)
        if particleCount < 8 || particleCount > 4096 { problems.append("fusion.particle_count: must be 8…4096, not \(particleCount)") }
        positive(shadowSigma, .shadowSigma)
        positive(shadowTime, .shadowTime)
        positive(measurementSigma, .measurementSigma)
        nonNegative(powerDrift, .powerDrift)
        nonNegative(stillStep, .stillStep)
        nonNegative(walkingStep, .walkingStep)
        if !(0...1).contains(walkingShare) { problems.append("fusion.walking_share: must be 0…1, not \(walkingShare)") }
        nonNegative(particleJumpRate, .particleJumpRate)
        positive(stillTime, .stillTime)
        positive(walkTime, .walkTime)
        nonNegative(positionMargin, .positionMargin)
        positive(receiverOffsetSigma, .receiverOffsetSigma)
        positive(calibrationInterval, .calibrationInterval)
        nonNegative(maxLearnedOffset, .maxLearnedOffset)
        nonNegative(forgetAfter, .forgetAfter)
        if !(switchMargin >= 0 && switchMargin < 1) {
            problems.append("fusion.switch_margin: must be in 0..<1 (is \(switchMargin))")
        }
        if !(stillSwitchMargin >= 0 && stillSwitchMargin < 1) {
            problems.append("fusion.still_switch_margin: must be in 0..<1 (is \(stillSwitchMargin))")
        }
        if !(minRSSI < maxRSSI) { problems.append("fusion.min_rssi: must be below max_rssi") }
        if !(rawWeight >= 0 && rawWeight <= 1) { problems.append("fusion.raw_weight: must be in 0...1 (is \(rawWeight))") }
        if maxCells < 1 { problems.append("fusion.max_cells: must be >= 1 (is \(maxCells))") }
        if maxBeacons < 1 { problems.append("fusion.max_beacons: must be >= 1 (is \(maxBeacons))") }
        if maxNodes < 1 { problems.append("fusion.max_nodes: must be >= 1 (is \(maxNodes))") }
        if maxAge < freshness { problems.append("fusion.max_age: must be >= freshness") }
        return problems
    }
}

/// Which RSSI of a reading the fusion engine filters.
public enum RSSIInput: String, Codable, Sendable {
    case raw, filtered
}
