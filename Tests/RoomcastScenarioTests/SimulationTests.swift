import Foundation
import Shared
import Testing
import RoomcastFusion
@testable import RoomcastSimulation
import TestSupport
import RoomcastAggregator
import RoomcastConfig
import RoomcastYAML

@Suite("Simulation")
struct SimulationTests {
    static func generate(_ plan: FloorPlan = .house, seed: UInt64 = 7, duration: Double = 120,
                         noise: RadioModel.Noise = .normal) -> GeneratedScenario {
        var s = SimulationSettings(plan: plan, seed: seed, duration: duration)
        s.radio = RadioModel(noise: noise)
        return ScenarioSimulator(settings: s).run()
    }

    @Test("same seed, same scenario; another seed, another one")
    func deterministic() async {
        let (a, b, c) = await offPool { (Self.generate(), Self.generate(), Self.generate(seed: 8)) }
        #expect(a.scenario.packets == b.scenario.packets)
        #expect(a.scenario.truth == b.scenario.truth)
        #expect(a.scenario.layout == b.scenario.layout)
        #expect(a.scenario.beacons == b.scenario.beacons)
        #expect(a.bound == b.bound)
        #expect(a.scenario.packets != c.scenario.packets)
        #expect(a.scenario.layout.nodes != c.scenario.layout.nodes)
    }

    @Test("another day in the same home: the same nodes, receivers and tags, the people walk elsewhere")
    func anotherDay() async throws {
        let (today, tomorrow) = await offPool { () -> (GeneratedScenario, GeneratedScenario) in
            var s = SimulationSettings(plan: .house, seed: 7, duration: 300)
            let today = ScenarioSimulator(settings: s).run()
            s.day = 1
            return (today, ScenarioSimulator(settings: s).run())
        }
        #expect(today.scenario.layout == tomorrow.scenario.layout)
        #expect(today.receiverOffsets == tomorrow.receiverOffsets)
        #expect(today.scenario.beacons == tomorrow.scenario.beacons)
        func truth(_ g: GeneratedScenario, _ name: String) -> [TruthSpan] {
            let id = g.scenario.beacons.first { $0.name == name }?.id
            return g.scenario.truth.filter { $0.id == id }
        }
        // The tags lie where they lay; each person's day differs.
        for tag in ["tag-0", "tag-1"] {
            #expect(!truth(today, tag).isEmpty)
            #expect(truth(today, tag) == truth(tomorrow, tag), "\(tag)")
        }
        for person in ["person-0", "person-1", "person-2"] {
            #expect(truth(today, person) != truth(tomorrow, person), "\(person)")
        }
        // Day 0 is the home as drawn without a day.
        #expect(today.scenario.packets == Self.generate(.house, seed: 7, duration: 300).scenario.packets)

        // Taught from that other day, the labels are the carried tags' only: a still tag's would
        // teach the very spot it is scored at today.
        let run = try await ScenarioRun.generated(tomorrow)
        let still = Set(tomorrow.scenario.beacons.filter { !$0.mobile }.map(\.id))
        #expect(!still.isEmpty && run.carriedBeacons.isDisjoint(with: still))
        let labelled = Set(run.labels(beacons: run.carriedBeacons).compactMap { line -> BeaconID? in
            guard case .success(let command) = LearnCommand.decode(line.payload), case .label(_, let beacon, _) = command.action else { return nil }
            return beacon
        })
        #expect(!labelled.isEmpty && labelled.isSubset(of: run.carriedBeacons))
    }

    @Test("a teaching tour walks every room in turn, floor by floor, 30 s in each")
    func teachingTour() async {
        let plan = FloorPlan.house
        let tour = await offPool { () -> GeneratedScenario in
            var s = SimulationSettings(plan: plan, seed: 7, duration: 900)
            s.makeTeachingDay()
            return ScenarioSimulator(settings: s).run()
        }
        let teacher = tour.scenario.beacons.first { $0.name == "person-0" }?.id
        let stays = Scorer().runs(tour.scenario.truth)[teacher!] ?? []
        // The rooms as the tour takes them: the plan's, floor by floor; each held 30 s or more.
        let expected = plan.rooms.enumerated().sorted { ($0.element.floor, $0.offset) < ($1.element.floor, $1.offset) }.map(\.element.name)
        let long = stays.filter { $0.t1 - $0.t0 >= 30 }.compactMap(\.room)
        var visited: [String] = []
        for room in long where visited.last != room { visited.append(room) }
        #expect(visited == expected, "\(stays.map { ($0.room ?? "away", Int($0.t1 - $0.t0)) })")
    }

    @Test("the teacher walks each room throughout its 30-s label, as README step 9 says")
    func teachingTourWalksTheRoom() {
        let plan = FloorPlan.house
        var rng = SeededRandom(seed: 7, stream: "tour")
        let tour = Trajectory.teachingTour(plan: plan, duration: 900, rng: &rng)
        // Until the last room's label ends, the teacher keeps walking: the only stands are the
        // 5 s before the first room and the 2 s of each climb of the stairs.
        let rooms = plan.rooms.count
        var moving = 0.0
        var stands: [Double] = []
        var spots: [Point] = []
        for leg in tour.legs.dropLast() {
            if leg.from == leg.to { stands.append(leg.t1 - leg.t0) } else { moving += leg.t1 - leg.t0; spots.append(leg.to) }
        }
        #expect(stands.first == 5)
        #expect(stands.dropFirst().allSatisfy { $0 <= 2 }, "stood \(stands) s")
        #expect(moving >= 30 * Double(rooms), "walked \(moving) s over \(rooms) rooms")
        // Several points of each room, not two.
        #expect(spots.count >= 4 * rooms, "\(spots.count) points over \(rooms) rooms")
    }

    @Test("a short scenario is well-formed", arguments: FloorPlan.names)
    func wellFormed(_ name: String) async throws {
        let plan = try #require(FloorPlan.named(name))
        let g = await offPool { Self.generate(plan) }
        let s = g.scenario
        #expect(s.layout.problems().isEmpty)
        // Every room has a receiver (but the plan's nodeless ones), placed inside it.
        for room in plan.rooms {
            let nodes = s.layout.nodes.filter { $0.room == room.name }
            #expect(nodes.isEmpty == plan.nodeless.contains(room.name), "\(room.name): \(nodes.count) nodes")
            for n in nodes { #expect(room.contains(Point(n.x, n.y)), "\(n.name) outside \(room.name)") }
        }
        // Truth covers every tracked beacon for the whole run, without gaps or overlaps.
        for b in s.beacons {
            let spans = s.truth.filter { $0.id == b.id }
            #expect(spans.first?.t0 == s.layout.t0)
            #expect(spans.last?.t1 == s.layout.t0 + s.layout.duration)
            #expect(zip(spans, spans.dropFirst()).allSatisfy { $0.t1 == $1.t0 && $0.room != $1.room })
            if !b.mobile { #expect(spans.count == 1) }
        }
        let nodeNames = Set(s.layout.nodes.map(\.name))
        #expect(s.packets.allSatisfy { nodeNames.contains($0.node) && (-98)...(-20) ~= $0.rssi })
        #expect(zip(s.packets, s.packets.dropFirst()).allSatisfy { $0.t <= $1.t })
        // A beacon at 200 ms heard by a few nodes gives thousands of packets in two minutes.
        #expect(s.packets.count > (s.layout.nodes.count > 2 ? 2000 : 1000))
        // Nobody is heard while away.
        for span in s.truth where span.room == nil {
            #expect(!s.packets.contains { $0.id == span.id && $0.t > span.t0 + 0.01 && $0.t < span.t1 - 0.01 })
        }
    }

    @Test("centred placement puts every node in the middle third of its room (or its half of an open space)")
    func centredPlacement() async throws {
        for plan in FloorPlan.names.compactMap(FloorPlan.named) {
            let (nodes, offCentre) = await offPool {
                var settings = SimulationSettings(plan: plan, seed: 5, duration: 60)
                settings.placement = .centred
                return (ScenarioSimulator(settings: settings).run().scenario.layout.nodes,
                        ScenarioSimulator(settings: SimulationSettings(plan: plan, seed: 5, duration: 60)).run().scenario.layout.nodes)
            }
            #expect(nodes.map(\.name) == offCentre.map(\.name))
            // A plan's fixed nodes stay where the plan puts them, however placed.
            for room in plan.rooms where plan.fixedNodes[room.name] == nil {
                let mine = nodes.filter { $0.room == room.name }
                let xs = room.outline.map(\.x), ys = room.outline.map(\.y)
                let alongX = xs.max()! - xs.min()! >= ys.max()! - ys.min()!
                for (i, n) in mine.enumerated() {
                    #expect(room.contains(Point(n.x, n.y)), "\(n.name) outside \(room.name)")
                    // Distance from the centre of its part, as a share of the part's size.
                    let parts = Double(mine.count)
                    let w = (xs.max()! - xs.min()!) / (alongX ? parts : 1), h = (ys.max()! - ys.min()!) / (alongX ? 1 : parts)
                    let cx = alongX ? xs.min()! + w * (Double(i) + 0.5) : (xs.min()! + xs.max()!) / 2
                    let cy = alongX ? (ys.min()! + ys.max()!) / 2 : ys.min()! + h * (Double(i) + 0.5)
                    let inMiddle = abs(n.x - cx) <= w / 6 + 0.01 && abs(n.y - cy) <= h / 6 + 0.01
                    // An L-shaped room whose middle is outside it falls back to anywhere inside.
                    let lShaped = !room.contains(Point(cx, cy))
                    #expect(inMiddle || lShaped, "\(n.name) at (\(n.x), \(n.y)), part centre (\(cx), \(cy))")
                }
            }
        }
    }

    @Test("deep fades are off by default and, when on, pull the lower tail of RSSI down")
    func deepFades() {
        #expect(RadioModel().deepFadeProbability == 0)
        for noise in RadioModel.Noise.allCases { #expect(RadioModel(noise: noise).deepFadeProbability == 0) }
        var settings = SimulationSettings(plan: .flat, seed: 4, duration: 120)
        // Hear everything, so no faded packet is lost below sensitivity and the tails compare.
        settings.radio.sensitivity = -200
        let plain = ScenarioSimulator(settings: settings).run().scenario.packets.map { Double($0.rssi) }
        settings.radio.deepFadeProbability = 0.3
        settings.radio.deepFadeDepth = 10
        let faded = ScenarioSimulator(settings: settings).run().scenario.packets.map { Double($0.rssi) }
        func quantile(_ v: [Double], _ q: Double) -> Double { v.sorted()[Int(Double(v.count - 1) * q)] }
        let lowerDrop = quantile(plain, 0.1) - quantile(faded, 0.1), upperDrop = quantile(plain, 0.9) - quantile(faded, 0.9)
        // A heavier lower tail: the weakest tenth drops by more than the strongest.
        #expect(lowerDrop > 2, "lower tenth dropped \(lowerDrop) dB")
        #expect(lowerDrop > upperDrop + 1, "lower tenth dropped \(lowerDrop) dB, upper \(upperDrop) dB")
    }

    @Test("phones rotate their address; tags keep theirs")
    func rotation() throws {
        var settings = SimulationSettings(plan: .flat, seed: 3, duration: 120)
        settings.addressRotation = 30
        settings.leaveProbability = 0
        let s = ScenarioSimulator(settings: settings).run().scenario
        let phone = try #require(BeaconID.irk("phone-0"))
        let macs = Set(s.packets.filter { $0.id == phone }.compactMap(\.mac))
        #expect(macs.count >= 3)
        #expect(s.packets.filter { $0.id.scheme == "ibeacon" }.allSatisfy { $0.mac == nil })
    }

    @Test("the nearest-node bound beats the baselines and the scores are sane")
    func bound() async throws {
        let g = Self.generate(.house, seed: 11, duration: 600, noise: .low)
        let run = try await ScenarioRun.generated(g)
        let (bound, scores) = try await offPool {
            (g.boundScore(), try Baselines.all.map { ($0.name, try run.baseline($0).score) })
        }
        #expect(bound.settledAccuracy > 0.8)
        #expect(bound.settledSamples > 1000)
        for (name, score) in scores {
            #expect((0...1).contains(score.settledAccuracy))
            #expect(score.settledSamples == bound.settledSamples)
            #expect(score.settledAccuracy <= bound.settledAccuracy + 0.02, "\(name): \(score.summary)")
            #expect(score.settledAccuracy > 0.5, "\(name): \(score.summary)")
        }
    }

    @Test("walls: shared walls count once, floors are separate")
    func walls() {
        let sim = ScenarioSimulator(settings: SimulationSettings(plan: .house, seed: 1, duration: 10))
        let w = FloorPlan.house.walls()
        // Each wall between two rooms is stored once, so crossing it counts once.
        #expect(sim.walls(between: Point(3, 3), Point(9, 3), on: 0, w) == 1)  // living → kitchen
        #expect(sim.walls(between: Point(3, 3), Point(9, 8), on: 0, w) == 2)  // living → office
        #expect(sim.walls(between: Point(1, 1), Point(2, 2), on: 0, w) == 0)
        #expect(sim.walls(between: Point(-1, 3), Point(3, 3), on: 0, w) == 1)  // from outside
    }

    @Test("walls can differ in loss: off by default; each wall draws its own, the same for every path through it")
    func wallLossSpread() {
        #expect(RadioModel().wallLossSpread == 0)
        for noise in RadioModel.Noise.allCases { #expect(RadioModel(noise: noise).wallLossSpread == 0) }
        var settings = SimulationSettings(plan: .house, seed: 1, duration: 10)
        settings.radio.wallLossSpread = 3
        let sim = ScenarioSimulator(settings: settings)
        let w = FloorPlan.house.walls()
        #expect(sim.wallLoss(between: Point(1, 1), Point(2, 2), on: 0, w) == 0)
        // Two paths through the living room / kitchen wall at different heights: one wall, one loss.
        let a = sim.wallLoss(between: Point(3, 3), Point(9, 3), on: 0, w)
        let b = sim.wallLoss(between: Point(3, 2), Point(9, 2.5), on: 0, w)
        #expect(a == b && a >= 0)
        // Across the walls of the house, the losses spread around `wallLoss`.
        var losses: [Double] = []
        for floor in FloorPlan.house.floors {
            for (x, y) in [(1.0, 1.0), (3, 3), (5, 5), (7, 2), (9, 8), (2, 9), (11, 5)] {
                for (u, v) in [(12.0, 1.0), (1, 11), (11, 11), (6, 0.5)] {
                    let l = sim.wallLoss(between: Point(x, y), Point(u, v), on: floor, w)
                    let n = sim.walls(between: Point(x, y), Point(u, v), on: floor, w)
                    if n == 1 { losses.append(l) }
                }
            }
        }
        #expect(Set(losses).count >= 3, "\(losses)")
        var same = settings
        same.radio.wallLossSpread = 3
        #expect(ScenarioSimulator(settings: same).wallLoss(between: Point(3, 3), Point(9, 3), on: 0, w) == a)
        // Off, the loss is the count of walls times `wallLoss`, as before.
        let plain = ScenarioSimulator(settings: SimulationSettings(plan: .house, seed: 1, duration: 10))
        let node = ScenarioLayout.Node(name: "n", room: "kitchen", floor: 0, x: 9, y: 3, z: 1)
        #expect(plain.loss(at: Point(3, 3), floor: 0, node: node, walls: w)
                == plain.settings.radio.meanRSSI(power: 0, distance: 6, walls: 1, floors: 0))
    }

    @Test("a written scenario loads back the same, plain and gzip")
    func roundTrip() throws {
        let g = Self.generate(.flat, seed: 5, duration: 60)
        for gzip in [false, true] {
            let dir = FileManager.default.temporaryDirectory
                .appendingPathComponent("roomcast-sim-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: dir) }
            try DirectoryScenarioWriter(directory: dir, gzip: gzip).write(g)
            let back = try Scenario.load(from: dir)
            #expect(back.layout == g.scenario.layout)
            #expect(back.beacons == g.scenario.beacons)
            #expect(back.packets == g.scenario.packets)
            #expect(back.truth.count == g.scenario.truth.count)
            for (x, y) in zip(back.truth, g.scenario.truth) {
                #expect(x.id == y.id && x.room == y.room && abs(x.t0 - y.t0) < 1e-3 && abs(x.t1 - y.t1) < 1e-3)
            }
            #expect(try DecisionTimeline.load(boundIn: dir) == g.bound)
        }
    }

    @Test("the loader names the file and line of bad input")
    func loadErrors() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-bad-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        try DirectoryScenarioWriter(directory: dir).write(Self.generate(.flat, seed: 1, duration: 10))
        try Data("{\"t\": 1, \"node\": \"x\", \"id\": \"ibeacon:nope\", \"rssi\": -50}\n".utf8)
            .write(to: dir.appendingPathComponent("raw.jsonl"))
        #expect(throws: Scenario.LoadError.self) { try Scenario.load(from: dir) }
        do { _ = try Scenario.load(from: dir) } catch {
            #expect("\(error)".contains("raw.jsonl:1"))
        }
    }
}

@Suite("Simulation ceilings")
struct SimulationCeilingTests {
    static func settings(seed: UInt64, shadowing: Double) -> SimulationSettings {
        var s = SimulationSettings(plan: .flat, seed: seed, duration: 300)
        s.radio = RadioModel(noise: .normal)
        s.radio.shadowingSigma = shadowing
        return s
    }

    @Test("without shadowing the nearest-node ceiling is the bound, and the position ceiling is at least as good")
    func noShadowing() async {
        let (generated, ceilings) = await offPool {
            let sim = ScenarioSimulator(settings: Self.settings(seed: 3, shadowing: 0))
            return (sim.run(), sim.ceilings())
        }
        #expect(ceilings.nearest == generated.bound)
        let scorer = Scorer(), truth = generated.scenario.truth, start = generated.scenario.layout.t0
        let bound = scorer.score(generated.bound, truth: truth, start: start)
        let position = scorer.score(ceilings.position, truth: truth, start: start)
        #expect(position.settledSamples == bound.settledSamples)
        #expect(position.settledAccuracy >= bound.settledAccuracy)
        #expect(position.settledAccuracy > 0.97)
    }

    @Test("shadowing costs the nearest-node rule even with infinite averaging; the position fit recovers most of it")
    func shadowing() async {
        let (generated, ceilings) = await offPool {
            let sim = ScenarioSimulator(settings: Self.settings(seed: 1003, shadowing: 4))
            return (sim.run(), sim.ceilings())
        }
        let scorer = Scorer(), truth = generated.scenario.truth, start = generated.scenario.layout.t0
        let bound = scorer.score(generated.bound, truth: truth, start: start)
        let nearest = scorer.score(ceilings.nearest, truth: truth, start: start)
        let position = scorer.score(ceilings.position, truth: truth, start: start)
        #expect(nearest.settledAccuracy < bound.settledAccuracy - 0.05, "nearest \(nearest.summary), bound \(bound.summary)")
        #expect(position.settledAccuracy > nearest.settledAccuracy + 0.05, "position \(position.summary)")
        // Same world as run(): the ceilings see the same people, so away matches the truth.
        for span in truth where span.room == nil && span.t1 - span.t0 > 2 {
            #expect(ceilings.position.room(of: span.id, at: (span.t0 + span.t1) / 2) == nil)
        }
    }
}

@Suite("Simulation: the nodes' own beacons")
struct SimulationNodeBeaconTests {
    @Test("nodes transmit their own iBeacon: heard by every other node, never by itself, no truth, same world otherwise")
    func nodeBeacons() async throws {
        var settings = SimulationSettings(plan: .flat, seed: 4, duration: 60)
        let plain = ScenarioSimulator(settings: settings).run()
        settings.nodeBeacons = true
        let g = ScenarioSimulator(settings: settings).run()
        let nodes = g.scenario.layout.nodes
        let ids = nodes.compactMap(\.beacon)
        #expect(ids.count == nodes.count && Set(ids).count == ids.count)
        let transmitter = Dictionary(uniqueKeysWithValues: nodes.map { ($0.beacon!, $0.name) })
        var heardBy: [BeaconID: Set<String>] = [:]
        for p in g.scenario.packets where transmitter[p.id] != nil {
            #expect(p.node != transmitter[p.id], "\(p.node) heard its own beacon")
            heardBy[p.id, default: []].insert(p.node)
        }
        for id in ids { #expect((heardBy[id]?.count ?? 0) >= 2, "\(id) heard by \(heardBy[id] ?? [])") }
        // Not tracked: no truth, not in beacons.json; everything else as without them.
        #expect(g.scenario.beacons == plain.scenario.beacons)
        #expect(g.scenario.truth == plain.scenario.truth)
        #expect(g.bound == plain.bound)
        #expect(g.scenario.packets.filter { transmitter[$0.id] == nil } == plain.scenario.packets)
        // site.yaml names each node's beacon, and loads.
        let config = try ConfigLoader.parse(AggregatorConfig.self, yaml: ScenarioConfigWriter.siteYAML(g))
        #expect(config.site.nodes.map(\.beacon) == nodes.map(\.beacon))
        #expect(config.validate().isEmpty)
        // What reaches the aggregator from them is calibration, not presence.
        let run = try await ScenarioRun.generated(g)
        let (_, engine) = try run.fusionWithEngine(FusionSettings())
        #expect(engine.counters.calibrationReadings > 0)
        #expect(nodes.contains { engine.isCalibratedByLinks($0.name) })
        for id in ids { #expect(engine.decision(for: id) == nil) }
        #expect(run.inputs.readings() > 0)
    }
}

@Suite("Simulation: walking out")
struct SimulationWalkOutTests {
    @Test("with walk-out, people leave through the exit room's outer wall heard as they go; nothing else changes")
    func walkOut() async throws {
        let (vanish, walk) = await offPool {
            var settings = SimulationSettings(plan: .house, seed: 21, duration: 900)
            settings.leaveProbability = 0.5
            let vanish = ScenarioSimulator(settings: settings).run().scenario
            settings.walkOut = true
            return (vanish, ScenarioSimulator(settings: settings).run().scenario)
        }
        #expect(vanish.layout == walk.layout)
        var departures = 0
        for beacon in vanish.beacons where beacon.mobile {
            let before = vanish.truth.filter { $0.id == beacon.id }, after = walk.truth.filter { $0.id == beacon.id }
            #expect(before.count == after.count)
            for (a, b) in zip(before, after) {
                #expect(a.room == b.room)
                // Only the start of an away spell moves: later, by the walk to the door.
                #expect(a.t1 == b.t1 || a.room != nil && b.t1 > a.t1 && b.t1 - a.t1 < 20, "\(a) \(b)")
                guard a.room == nil, a.t0 > vanish.layout.t0 else { continue }
                departures += 1
                #expect(b.t0 >= a.t0 && b.t0 - a.t0 < 20)
                // Vanishing, nobody hears them once away; walking out, the nodes still do
                // for a few seconds after the door.
                let heard = { (s: Scenario, t0: Double) in s.packets.contains { $0.id == beacon.id && $0.t > t0 + 0.5 && $0.t < t0 + 4 } }
                #expect(!heard(vanish, a.t0))
                #expect(heard(walk, b.t0))
            }
        }
        #expect(departures >= 2)
    }
}
