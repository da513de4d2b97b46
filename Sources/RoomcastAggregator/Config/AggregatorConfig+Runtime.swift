import RoomcastFusion
import Shared

extension AggregatorConfig {
    /// The site this aggregator decides for: with a partition, only its rooms and their nodes.
    public var partitionedSite: SiteModel {
        var site = self.site
        guard partition.floors != nil || partition.rooms != nil else { return site }
        let rooms = site.rooms.filter { r in
            (partition.floors.map { $0.contains(r.floor) } ?? true) && (partition.rooms.map { $0.contains(r.name) } ?? true)
        }
        let names = Set(rooms.map(\.name))
        site.rooms = rooms
        site.nodes = site.nodes.filter { $0.room.map(names.contains) ?? false }
        return site
    }

    /// A topic-level name for the partition (`floors-0_1`, `rooms-hall_office`), nil without one:
    /// the active/standby pair of each partition elects on its own lease topic. The same
    /// partition written in another order is the same name; room names that a `_` could join
    /// ambiguously (`a_b` against `a` and `b`), or too many to read, are named by a digest
    /// (`rooms-3f9c…`), so two partitions never share a lease.
    public var partitionName: String? {
        var parts: [String] = []
        if let floors = partition.floors { parts.append("floors-" + Set(floors).sorted().map(String.init).joined(separator: "_")) }
        if let rooms = partition.rooms {
            let names = Set(rooms).sorted()
            let joined = names.joined(separator: "_")
            if names.contains(where: { $0.contains("_") }) || joined.utf8.count > 64 {
                parts.append("rooms-" + FNV1a.hex(names.joined(separator: "\u{0}")))
            } else {
                parts.append("rooms-" + joined)
            }
        }
        return parts.isEmpty ? nil : parts.joined(separator: "-")
    }

    /// The aggregator core for this config, with a fresh engine.
    public func makeCore() -> AggregatorCore<FusionEngine> {
        makeCore(engine: FusionEngine(site: partitionedSite, settings: fusion))
    }

    /// The aggregator core for this config around another estimator (evaluations score the
    /// baseline rules and candidate settings behind the same intake and ticks).
    public func makeCore<Engine: PresenceEstimator & Sendable>(engine: Engine) -> AggregatorCore<Engine> {
        let site = partitionedSite
        let topics = mqtt.topics
        var core = AggregatorCore(engine: engine, site: site, topics: topics,
                                  discovery: discovery.enabled
                                      ? HomeAssistantDiscovery(prefix: discovery.prefix, topics: topics, mode: discovery.mode,
                                                               site: site, nodeDistances: discovery.nodeDistances,
                                                               teaching: fusion.learnedRooms, siteRooms: self.site.rooms)
                                      : nil,
                                  outputs: output.enabled, restrictToKnownNodes: !site.nodes.isEmpty)
        core.acceptsESPresense = inputs.espresense
        if !output.enabled.isEmpty { core.homeAssistantStatusTopic = HomeAssistantDiscovery.birthTopic }
        // Not under `partition:`: every partition's configs name the site's one status topic, and
        // another partition, with discovery on, publishes its own.
        if !discovery.enabled, partitionName == nil {
            core.discoveryToClear = HomeAssistantDiscovery(prefix: discovery.prefix, topics: topics, mode: discovery.mode)
        }
        core.awayTimeout = fusion.awayTimeout
        core.otherPartitionsRooms = Set(self.site.rooms.map(\.name)).subtracting(site.rooms.map(\.name))
        // A partition hears its own nodes only, even where it has none: open to every node, it
        // would make each a room of its name (`auto_nodes`) and fight the partition that has it.
        if partitionName != nil {
            core.intake.knownNodes = Set(site.nodes.map(\.name))
            // The nodes standing in the other partitions' rooms: theirs. One in no room of the
            // site is nobody's, and refused.
            let others = core.otherPartitionsRooms
            core.intake.otherPartitionsNodes = Set(self.site.nodes.filter { $0.room.map(others.contains) ?? false }.map(\.name))
        }
        core.wholeSite = self.site
        return core
    }
}
