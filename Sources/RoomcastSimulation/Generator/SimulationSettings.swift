/// What to simulate: the building, who is in it, how noisy the radio is.
public struct SimulationSettings: Sendable {
    public var plan: FloorPlan
    public var seed: UInt64
    /// Seconds.
    public var duration: Double
    /// Unix seconds of the scenario start (fixed so output does not depend on the clock).
    public var t0: Double = 1_767_225_600
    /// People walking about, each carrying a tag (iBeacon, 200 ms or 1 s).
    public var people: Int = 3
    /// How many of the people also carry a phone (rotating address, resolved to an `irk:` id).
    public var phones: Int = 1
    /// Beacons lying still in a room (iBeacon / Eddystone, 1–2 s).
    public var staticTags: Int = 2
    /// Untracked devices heard by the nodes (neighbours, TVs).
    public var strangers: Int = 3
    /// Neighbours' phones heard through the wall: rotating addresses from keys nobody configured.
    public var neighbourPhones: Int = 1
    /// Mean stay in a room, seconds.
    public var meanStay: Double = 90
    /// Chance of leaving the building after a stay.
    public var leaveProbability: Double = 0.12
    /// Seconds between a phone's address rotations.
    public var addressRotation: Double = 900
    /// Every node also transmits an iBeacon of its own (the agent's `advertise:`, 1 s),
    /// which the other nodes hear and the aggregator calibrates receivers with.
    public var nodeBeacons = false
    /// Where the nodes sit in their rooms.
    public var placement = NodePlacement.offCentre
    /// People leaving walk out through the exit room's outer wall and on for 8 m, heard as
    /// their signal fades (truth: away from the wall on), instead of vanishing where they
    /// stood in the exit room. Off by default: the tune/check/holdout homes were made
    /// without it (a diagnostic: `roomcast-bench simulation --walk-out`).
    public var walkOut = false
    /// Which day in this home: the same world (nodes, receivers, shadowing, the tags where they
    /// lie, the people and their tags) with other walks. Day 0 is the home as first drawn; a
    /// user teaching the rooms one day and living with them the next is day 1 and day 0.
    public var day = 0
    /// Person 0 teaches the rooms instead of living the day: every room in turn, 30 s walking
    /// round each (`Trajectory.teachingTour`), as a user labelling rooms with `aggregator learn`.
    public var teachingTour = false

    /// A day on which one person, alone in the home (no phone, no tags lying about), teaches
    /// the rooms: `teachingTour`, and what that person's labels alone should teach.
    public mutating func makeTeachingDay() {
        teachingTour = true
        (people, phones, staticTags) = (1, 0, 0)
    }
    /// Nodes that go silent for minutes now and then (the plan's `silentNodes` unless set).
    public var outages = NodeOutages()
    public var radio = RadioModel()

    public init(plan: FloorPlan, seed: UInt64, duration: Double) {
        self.plan = plan
        self.seed = seed
        self.duration = duration
        outages.nodes = plan.silentNodes
    }
}

/// Nodes that stop hearing anything for minutes at a time, as when an agent is down or a
/// controller stops delivering reports: their captures simply have no packets then.
/// Which nodes, and when, come from sub-streams of their own (`outage-nodes`,
/// `outage-<node>`), so a scenario with outages is the one without minus those packets.
public struct NodeOutages: Sendable, Equatable {
    /// How many nodes go silent (0 = none; at most every node).
    public var nodes = 0
    /// How long each silence lasts, seconds (uniform): minutes, long enough to outlast any
    /// away timeout.
    public var length: ClosedRange<Double> = 120...600
    /// Mean seconds a node works between two silences (exponential, at least 60 s). The
    /// first silence starts between a tenth and half of the run, so every chosen node has
    /// at least one.
    public var meanUptime = 900.0

    public init(nodes: Int = 0) { self.nodes = nodes }
}

/// One spell in which a node hears nothing, unix seconds.
public struct NodeOutage: Sendable, Equatable, Codable {
    public var node: String
    public var t0: Double
    public var t1: Double

    public init(node: String, t0: Double, t1: Double) {
        self.node = node
        self.t0 = t0
        self.t1 = t1
    }
}

/// Where a simulated home's nodes sit in their rooms.
public enum NodePlacement: String, Sendable, CaseIterable {
    /// Out of the middle third, as real receivers end up: on shelves, by sockets, often
    /// near the neighbour's wall (the default).
    case offCentre = "off-centre"
    /// What a careful installer does: in the middle third of the room (of its half, where
    /// an open space has two), well away from shared walls — the "reasonably placed".
    case centred
}
