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
    public var radio = RadioModel()

    public init(plan: FloorPlan, seed: UInt64, duration: Double) {
        self.plan = plan
        self.seed = seed
        self.duration = duration
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
