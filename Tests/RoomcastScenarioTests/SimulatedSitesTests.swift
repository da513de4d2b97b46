import Foundation
import RoomcastAdvertising
import Shared
import TestSupport
import Testing
@testable import RoomcastSimulation

/// The sites unlike the standard homes (`FloorPlan.siteNames`): each generates, is scored
/// without trouble, and really has the property it is there for.
@Suite("Simulated sites")
struct SimulatedSitesTests {
    static func generate(_ plan: FloorPlan, seed: UInt64 = 1001, duration: Double = 120,
                         noise: RadioModel.Noise = .normal) -> GeneratedScenario {
        var s = SimulationSettings(plan: plan, seed: seed, duration: duration)
        s.radio = RadioModel(noise: noise)
        return ScenarioSimulator(settings: s).run()
    }

    @Test("each site generates, its truth covers every walker's whole run, and every estimator scores it",
          arguments: FloorPlan.siteNames)
    func generatesAndScores(_ name: String) async throws {
        let plan = try #require(FloorPlan.named(name))
        let (g, ceilings) = await offPool {
            var s = SimulationSettings(plan: plan, seed: 1001, duration: 120)
            s.radio = RadioModel(noise: .normal)
            let sim = ScenarioSimulator(settings: s)
            // A coarse grid: the point is that the ceilings run on these sites, not their value.
            return (sim.run(), sim.ceilings(gridStep: 1.0))
        }
        // Every baseline and Roomcast itself, through the agent's and the aggregator's real path.
        let run = try await ScenarioRun.generated(g)
        var scores = try Baselines.all.map { ($0.name, try run.baseline($0).score) }
        scores.append(("roomcast", try run.roomcast().score))
        let s = g.scenario
        #expect(s.layout.problems().isEmpty)
        let rooms = Set(plan.rooms.map(\.name))
        let walkers = s.beacons.filter(\.mobile)
        #expect(walkers.count >= 3)
        for b in s.beacons {
            let spans = s.truth.filter { $0.id == b.id }
            #expect(spans.first?.t0 == s.layout.t0, "\(b.name ?? "")")
            #expect(spans.last?.t1 == s.layout.t0 + s.layout.duration, "\(b.name ?? "")")
            #expect(zip(spans, spans.dropFirst()).allSatisfy { $0.t1 == $1.t0 })
            #expect(spans.allSatisfy { $0.room.map(rooms.contains) ?? true })
        }
        let bound = g.boundScore()
        #expect(bound.settledSamples > 0)
        for (estimator, score) in scores {
            #expect(score.settledSamples == bound.settledSamples, "\(estimator)")
            #expect((0...1).contains(score.settledAccuracy), "\(estimator): \(score.summary)")
        }
        let scorer = Scorer()
        for timeline in [ceilings.nearest, ceilings.position] {
            #expect(scorer.score(timeline, truth: s.truth, start: s.layout.t0).settledSamples == bound.settledSamples)
        }
    }

    @Test("the open plan: the recording's four zones and twelve receivers, and no wall between zones")
    func openPlan() {
        let plan = FloorPlan.openplan
        let layout = Self.generate(plan, duration: 10).scenario.layout
        #expect(layout.rooms.count == 4)
        for room in plan.rooms {
            let nodes = layout.nodes.filter { $0.room == room.name }
            #expect(nodes.count == 3, "\(room.name)")
            #expect(nodes.allSatisfy { room.contains(Point($0.x, $0.y)) }, "\(room.name)")
        }
        #expect(layout.nodes.first { $0.name == "sensor30" }.map { [$0.x, $0.y, $0.z] } == [13.14, 12.33, 1.22])
        let sim = ScenarioSimulator(settings: SimulationSettings(plan: plan, seed: 1, duration: 10))
        let walls = plan.walls()
        // Corner to corner across all four zones: nothing in the way.
        #expect(sim.walls(between: Point(1, 1), Point(19, 16), on: 0, walls) == 0)
        #expect(sim.walls(between: Point(5, 4), Point(15, 4), on: 0, walls) == 0)
        #expect(sim.walls(between: Point(5, 4), Point(5, 13), on: 0, walls) == 0)
        // The outer walls stand.
        #expect(sim.walls(between: Point(-2, 4), Point(5, 4), on: 0, walls) == 1)
        #expect(sim.walls(between: Point(15, 20), Point(15, 13), on: 0, walls) == 1)
    }

    /// Mean RSSI per node of the walkers' packets sent from where `region` holds.
    static func meanRSSI(_ g: GeneratedScenario, world: ScenarioSimulator.World,
                         where region: (Point, Int) -> Bool) -> (mean: [String: Double], packets: Int) {
        let t0 = g.scenario.layout.t0
        let paths = Dictionary(world.transmitters.filter { $0.tracked && $0.beacon.mobile }.map { ($0.beacon.id, $0.trajectory) },
                               uniquingKeysWith: { a, _ in a })
        var sum: [String: (Double, Int)] = [:]
        var packets = 0
        for p in g.scenario.packets {
            guard let path = paths[p.id], let (point, floor) = path.indoorPosition(at: p.t - t0), region(point, floor) else { continue }
            let s = sum[p.node] ?? (0, 0)
            sum[p.node] = (s.0 + Double(p.rssi), s.1 + 1)
            packets += 1
        }
        return (sum.mapValues { $0.0 / Double($0.1) }, packets)
    }

    @Test("the townhouse: in the east of the bedroom the kitchen's node below hears the walkers louder than the bedroom's own")
    func heardThroughTheFloor() async throws {
        let bedroom = try #require(FloorPlan.townhouse.room("bedroom"))
        let (layout, east, west) = await offPool {
            let sim = ScenarioSimulator(settings: SimulationSettings(plan: .townhouse, seed: 1001, duration: 3600))
            let (g, world) = (sim.run(), sim.makeWorld())
            // Above the kitchen (x ≥ 8 m), and in the L's other leg for contrast.
            return (g.scenario.layout,
                    Self.meanRSSI(g, world: world) { p, floor in floor == 1 && bedroom.contains(p) && p.x >= 8 },
                    Self.meanRSSI(g, world: world) { p, floor in floor == 1 && bedroom.contains(p) && p.x < 4 && p.y >= 4 })
        }
        let kitchen = try #require(layout.nodes.first { $0.room == "kitchen" })
        let own = try #require(layout.nodes.first { $0.room == "bedroom" })
        #expect(kitchen.floor == 0 && own.floor == 1)
        try #require(east.packets > 500, "walkers spent too little time in the bedroom's east")
        try #require(west.packets > 500, "walkers spent too little time in the bedroom's west leg")
        let (k, b) = (try #require(east.mean[kitchen.name]), try #require(east.mean[own.name]))
        // By several dB: more than receiver offsets and shadowing could make up.
        #expect(k > b + 3, "east: kitchen \(k) dBm, bedroom \(b) dBm")
        let (kw, bw) = (try #require(west.mean[kitchen.name]), try #require(west.mean[own.name]))
        #expect(bw > kw + 3, "west leg: kitchen \(kw) dBm, bedroom \(bw) dBm")
    }

    @Test("the sparse home: one node per floor, and walkers spend time in rooms without one")
    func oneNodePerFloor() async {
        let g = await offPool { Self.generate(.sparse, duration: 900) }
        let layout = g.scenario.layout
        #expect(layout.nodes.count == FloorPlan.sparse.floors.count)
        #expect(Set(layout.nodes.map(\.floor)) == Set(FloorPlan.sparse.floors))
        let withNode = Set(layout.nodes.compactMap(\.room))
        let nodeless = FloorPlan.sparse.rooms.map(\.name).filter { !withNode.contains($0) }
        #expect(nodeless.count == 6)
        #expect(Set(nodeless) == FloorPlan.sparse.nodeless)
        let seconds = g.scenario.truth.filter { $0.room.map(nodeless.contains) ?? false }.map { $0.t1 - $0.t0 }.reduce(0, +)
        #expect(seconds > 300, "\(seconds) s of truth in rooms without a node")
    }

    @Test("silent nodes: the chosen nodes' captures have gaps of minutes, and nothing else changes")
    func silentNodes() async throws {
        var settings = SimulationSettings(plan: .house, seed: 1001, duration: 900)
        settings.outages.nodes = 2
        let quiet = settings
        settings.outages.nodes = 0
        let plain = settings
        let (g, without) = await offPool { (ScenarioSimulator(settings: quiet).run(), ScenarioSimulator(settings: plain).run()) }
        let silent = Set(g.outages.map(\.node))
        #expect(silent.count == 2)
        #expect(g.outages.allSatisfy { $0.t1 - $0.t0 >= 119.99 || $0.t1 == g.scenario.layout.t0 + 900 })
        #expect(without.outages.isEmpty)
        // The scenario with outages is the one without, minus what the silent nodes missed.
        func missed(_ p: RawPacket) -> Bool { g.outages.contains { $0.node == p.node && $0.t0 <= p.t && p.t < $0.t1 } }
        #expect(g.scenario.packets == without.scenario.packets.filter { !missed($0) })
        #expect(g.scenario.truth == without.scenario.truth)
        #expect(without.scenario.packets.contains(where: missed))

        // What an agent replaying the written captures sees: gaps of minutes at those nodes only.
        let dir = SimulationCaptureTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try DirectoryScenarioWriter(directory: dir, configs: false).write(g)
        let nodes = g.scenario.layout.nodes.map(\.name)
        let replayed = try await CaptureReplay.run(directory: dir, nodes: nodes, config: g.advertisingConfig)
        let written = try Scenario.decodeLines(Data(contentsOf: dir.appendingPathComponent("outages.jsonl")),
                                               "outages.jsonl") as [NodeOutage]
        #expect(written == g.outages)
        for node in nodes {
            let times = [g.scenario.layout.t0] + replayed.packets.filter { $0.node == node }.map(\.t) + [g.scenario.layout.t0 + 900]
            let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
            let longest = gaps.max() ?? 0
            if silent.contains(node) {
                #expect(longest >= 120, "\(node): longest gap \(longest) s")
                for o in g.outages where o.node == node {
                    #expect(!replayed.packets.contains { $0.node == node && o.t0 <= $0.t && $0.t < o.t1 })
                }
            } else {
                // Tags at 200 ms: a working node hears something every few seconds.
                #expect(longest < 10, "\(node): longest gap \(longest) s")
            }
        }
    }

    @Test("the check split scores the standard homes and these sites; tune and holdout the standard homes only")
    func checkSplit() {
        #expect(FloorPlan.benchmarkNames(split: "check") == FloorPlan.benchmarkNames + FloorPlan.siteNames)
        #expect(FloorPlan.benchmarkNames(split: "tune") == FloorPlan.benchmarkNames)
        #expect(FloorPlan.benchmarkNames(split: "holdout") == FloorPlan.benchmarkNames)
        #expect(FloorPlan.siteNames.allSatisfy { FloorPlan.named($0) != nil && FloorPlan.names.contains($0) })
        #expect(SimulationSettings(plan: .houseOutages, seed: 1, duration: 1).outages.nodes == 2)
        #expect(SimulationSettings(plan: .house, seed: 1, duration: 1).outages.nodes == 0)
    }
}
