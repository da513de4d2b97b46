import Foundation
import RoomcastAdvertising
import Shared

/// Generates a scenario from `SimulationSettings`: places nodes, moves people and
/// tags, and draws every packet through the `RadioModel`. Seeded and deterministic:
/// the same settings always give the same output.
public struct ScenarioSimulator: Sendable {
    public var settings: SimulationSettings

    public init(settings: SimulationSettings) { self.settings = settings }

    /// One simulated transmitter.
    struct Transmitter {
        var beacon: ScenarioBeacon
        var trajectory: Trajectory
        /// True 1 m power, dBm.
        var power: Double
        var tracked: Bool
        /// Rotating advertiser addresses (phones), nil = fixed.
        var rotation: Double?
        /// What it puts on the air.
        var advertiser: SimulatedAdvertiser
        /// Height above its floor, metres (a tag in a pocket or on a table: 1 m).
        var height = 1.0
        /// The node it is, when a node transmits it: that node does not hear it.
        var node: String?
    }

    /// Everything drawn before the first packet: where the receivers are, how they are
    /// off, who carries what, and each receiver's shadowing field.
    struct World {
        var layout: ScenarioLayout
        var nodes: [ScenarioLayout.Node]
        var offsets: [String: Double]
        var transmitters: [Transmitter]
        var walls: [Int: [(Point, Point)]]
        var fields: [ShadowingField]
        /// Per receiver, one field per advertising channel (`RadioModel.frozenFadingSigma`;
        /// empty when off).
        var channelFields: [[ShadowingField]] = []
        /// Per receiver, the spells in which it hears nothing (`SimulationSettings.outages`;
        /// empty lists when none), unix seconds to the millisecond like packet times, so
        /// whether a packet fell in one reads the same from `raw.jsonl` and `outages.jsonl`.
        var silences: [[(t0: Double, t1: Double)]] = []

        /// Whether receiver `i` hears at unix time `t`.
        func hears(_ i: Int, at t: Double) -> Bool {
            i >= silences.count || !silences[i].contains { $0.t0 <= t && t < $0.t1 }
        }
    }

    func makeWorld() -> World {
        let s = settings
        var rng = SeededRandom(seed: s.seed)
        var nodes = placeNodes(&rng)
        var offsets: [String: Double] = [:]
        for n in nodes { offsets[n.name] = (rng.gaussian() * s.radio.receiverOffsetSigma * 10).rounded() / 10 }
        var transmitters = makeTransmitters(&rng)
        if s.nodeBeacons {
            for i in nodes.indices {
                let tx = nodeBeacon(nodes[i], index: i)
                nodes[i].beacon = tx.beacon.id
                transmitters.append(tx)
            }
        }
        let layout = ScenarioLayout(rooms: s.plan.rooms, nodes: nodes, t0: s.t0, duration: s.duration)
        // One shadowing field per receiver, shared by every transmitter: the spot, not the tag, is biased.
        let fields = nodes.map { node in
            var frng = SeededRandom(seed: s.seed, stream: "shadowing-\(node.name)")
            return ShadowingField(sigma: s.radio.shadowingSigma, correlationDistance: s.radio.shadowingDistance,
                                  kernel: s.radio.shadowingKernel, rng: &frng)
        }
        // Fading that stays with each advertising channel while nothing moves: a field per
        // receiver and channel, from streams of their own.
        let channelFields = s.radio.frozenFadingSigma > 0 ? nodes.map { node in
            (0..<3).map { c in
                var crng = SeededRandom(seed: s.seed, stream: "channel-\(node.name)-\(c)")
                return ShadowingField(sigma: s.radio.frozenFadingSigma, correlationDistance: s.radio.frozenFadingDistance,
                                      kernel: .exponential, rng: &crng)
            }
        } : []
        return World(layout: layout, nodes: nodes, offsets: offsets, transmitters: transmitters,
                     walls: s.plan.walls(), fields: fields, channelFields: channelFields,
                     silences: silences(of: nodes))
    }

    /// When each node is silent (`settings.outages`): which nodes from the stream
    /// `outage-nodes`, their spells from `outage-<node>`; nothing else is drawn from them.
    func silences(of nodes: [ScenarioLayout.Node]) -> [[(t0: Double, t1: Double)]] {
        let s = settings, o = s.outages
        var out = nodes.map { _ in [(t0: Double, t1: Double)]() }
        guard o.nodes > 0, !nodes.isEmpty else { return out }
        var pick = SeededRandom(seed: s.seed, stream: "outage-nodes")
        var order = Array(nodes.indices)
        for i in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(i, pick.index(i + 1)) }
        for i in order.prefix(min(o.nodes, nodes.count)) {
            var rng = SeededRandom(seed: s.seed, stream: "outage-\(nodes[i].name)")
            var t = rng.uniform(0.1, 0.5) * s.duration
            while t < s.duration {
                let length = rng.uniform(o.length.lowerBound, o.length.upperBound)
                out[i].append((WireFormat.milliseconds(s.t0 + t), WireFormat.milliseconds(s.t0 + min(t + length, s.duration))))
                t += length + max(60, rng.exponential(mean: o.meanUptime))
            }
        }
        return out
    }

    /// The iBeacon node `index` transmits (the agent's `advertise:`): one UUID for every
    /// node of the site, major 900, minor index + 1, 1 s, drawn from their own sub-streams.
    func nodeBeacon(_ node: ScenarioLayout.Node, index: Int) -> Transmitter {
        var trng = SeededRandom(seed: settings.seed, stream: "node-beacon-\(node.name)")
        let (uuid, uuidBytes) = Self.randomUUID(randomBytes(16, stream: "node-beacon-uuid"))
        let major: UInt16 = 900, minor = UInt16(truncatingIfNeeded: index + 1)
        let advertised = -59
        let beacon = ScenarioBeacon(id: .iBeacon(uuid: uuid, major: major, minor: minor), name: node.name,
                                    kind: "ibeacon", measuredPower: advertised, interval: 1.0, mobile: false)
        let air = SimulatedAdvertiser(id: beacon.id, address: .fixed(staticAddress(for: beacon.id), random: true),
                                      eventType: 0x03,
                                      data: AdvertisingPayload.iBeacon(uuid: uuidBytes, major: major, minor: minor, power: advertised))
        return Transmitter(beacon: beacon, trajectory: .fixed(at: Point(node.x, node.y), floor: node.floor, duration: settings.duration),
                           power: Double(advertised) + trng.gaussian() * settings.radio.powerSpread,
                           tracked: false, rotation: nil, advertiser: air, height: node.z, node: node.name)
    }

    public func run() -> GeneratedScenario {
        let s = settings
        let world = makeWorld()
        let (layout, nodes, offsets, transmitters, walls, fields) =
            (world.layout, world.nodes, world.offsets, world.transmitters, world.walls, world.fields)

        var packets: [RawPacket] = []
        for tx in transmitters {
            packets += simulatePackets(tx, nodes: nodes, offsets: offsets, fields: fields, channelFields: world.channelFields,
                                       walls: walls, silences: world.silences)
        }
        packets.sort { a, b in
            a.t != b.t ? a.t < b.t : (a.node != b.node ? a.node < b.node : a.id < b.id)
        }
        let tracked = transmitters.filter(\.tracked)
        var truth: [TruthSpan] = []
        var bound = DecisionTimeline()
        for tx in tracked {
            truth += truthSpans(tx, layout: layout)
            for k in stride(from: 1.0, through: s.duration, by: 1.0) {
                bound.record(tx.beacon.id, room: strongestRoom(tx, at: k, nodes: nodes, walls: walls, world: world), at: s.t0 + k)
            }
        }
        let scenario = Scenario(name: "\(s.plan.name)-\(s.seed)", layout: layout,
                                beacons: tracked.map(\.beacon), truth: truth, packets: packets)
        var advertisers: [BeaconID: SimulatedAdvertiser] = [:]
        var irks: [IdentityResolvingKey] = []
        for tx in transmitters {
            advertisers[tx.beacon.id] = tx.advertiser
            if tx.tracked, case let .resolvable(irk) = tx.advertiser.address { irks.append(irk) }
        }
        let outages = nodes.indices.flatMap { i in
            world.silences[i].map { NodeOutage(node: nodes[i].name, t0: $0.t0, t1: $0.t1) }
        }
        return GeneratedScenario(scenario: scenario, bound: bound, receiverOffsets: offsets,
                                 advertisers: advertisers, irks: irks, floorHeight: s.plan.floorHeight, outages: outages)
    }

    // MARK: - Set-up

    /// One node per room (two in open spaces, none in `plan.nodeless` rooms, the plan's
    /// own in `plan.fixedNodes` rooms), at 0.8–2.2 m; off-centre or centred
    /// (`settings.placement`; fixed nodes stay where the plan puts them).
    func placeNodes(_ rng: inout SeededRandom) -> [ScenarioLayout.Node] {
        var nodes: [ScenarioLayout.Node] = []
        for room in settings.plan.rooms {
            if settings.plan.nodeless.contains(room.name) { continue }
            if let spots = settings.plan.fixedNodes[room.name] {
                for (i, spot) in spots.enumerated() {
                    let name = spot.name ?? (spots.count == 1 ? "\(room.name)-pi" : "\(room.name)-pi\(i + 1)")
                    nodes.append(ScenarioLayout.Node(name: name, room: room.name, floor: room.floor,
                                                     x: spot.x, y: spot.y, z: spot.z))
                }
                continue
            }
            let count = settings.plan.doubleNodes.contains(room.name) ? 2 : 1
            let centre = Geometry.centre(room.outline)
            let box = Geometry.bounds(room.outline) ?? (0, 0, 0, 0)
            let width = box.x1 - box.x0, height = box.y1 - box.y0
            for i in 0..<count {
                var p: Point
                switch settings.placement {
                case .offCentre:
                    // Keep the node out of the middle third: real receivers sit on shelves,
                    // sockets and walls, often near the neighbour's wall.
                    p = Trajectory.randomPoint(in: room, rng: &rng, margin: 0.2)
                    for _ in 0..<20 {
                        if abs(p.x - centre.x) > width / 6 || abs(p.y - centre.y) > height / 6 { break }
                        p = Trajectory.randomPoint(in: room, rng: &rng, margin: 0.2)
                    }
                case .centred:
                    p = centredPoint(in: room, part: i, of: count, rng: &rng)
                }
                let name = count == 1 ? "\(room.name)-pi" : "\(room.name)-pi\(i + 1)"
                nodes.append(ScenarioLayout.Node(name: name, room: room.name, floor: room.floor,
                                                 x: (p.x * 100).rounded() / 100, y: (p.y * 100).rounded() / 100,
                                                 z: (rng.uniform(0.8, 2.2) * 10).rounded() / 10))
            }
        }
        return nodes
    }

    /// A point in the middle third of part `part` of `count` equal parts of `room`, cut
    /// along its longer side; inside the room (an L-shaped room's centre may not be).
    func centredPoint(in room: ScenarioLayout.Room, part: Int, of count: Int, rng: inout SeededRandom) -> Point {
        let (x0, y0, x1, y1) = Geometry.bounds(room.outline) ?? (0, 0, 0, 0)
        let alongX = x1 - x0 >= y1 - y0
        let (w, h) = alongX ? ((x1 - x0) / Double(count), y1 - y0) : (x1 - x0, (y1 - y0) / Double(count))
        let cx = alongX ? x0 + w * (Double(part) + 0.5) : (x0 + x1) / 2
        let cy = alongX ? (y0 + y1) / 2 : y0 + h * (Double(part) + 0.5)
        for _ in 0..<50 {
            let p = Point(cx + rng.uniform(-w / 6, w / 6), cy + rng.uniform(-h / 6, h / 6))
            if room.contains(p) { return p }
        }
        return Trajectory.randomPoint(in: room, rng: &rng, margin: 0.5)
    }

    func makeTransmitters(_ rng: inout SeededRandom) -> [Transmitter] {
        let s = settings
        let (uuid, uuidBytes) = Self.randomUUID((0..<16).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        var out: [Transmitter] = []
        for i in 0..<s.people {
            var trng = SeededRandom(seed: s.seed, stream: "person-\(i)")
            var path = Trajectory.walker(plan: s.plan, duration: s.duration, rng: &trng, meanStay: s.meanStay,
                                         leaveProbability: s.leaveProbability, walkOut: s.walkOut)
            if s.teachingTour && i == 0 {
                // The tour from its own stream; the tag is drawn on from `trng` as on any day.
                var tour = SeededRandom(seed: s.seed, stream: "person-0-tour-\(s.day)")
                path = Trajectory.teachingTour(plan: s.plan, duration: s.duration, rng: &tour)
            } else if s.day != 0 {
                // Another day's walks from their own stream; the person's tag is drawn on from
                // `trng` as on day 0, so it is the same tag.
                var walks = SeededRandom(seed: s.seed, stream: "person-\(i)-day-\(s.day)")
                path = Trajectory.walker(plan: s.plan, duration: s.duration, rng: &walks, meanStay: s.meanStay,
                                         leaveProbability: s.leaveProbability, walkOut: s.walkOut)
            }
            let advertised = -59 - trng.index(5)
            let major = UInt16(100 + i), minor = UInt16(truncatingIfNeeded: trng.next())
            let beacon = ScenarioBeacon(
                id: .iBeacon(uuid: uuid, major: major, minor: minor),
                name: "person-\(i)", kind: "ibeacon", measuredPower: advertised,
                interval: i % 3 == 2 ? 1.0 : 0.2, mobile: true)
            let tag = SimulatedAdvertiser(
                id: beacon.id, address: .fixed(staticAddress(for: beacon.id), random: true), eventType: 0x03,
                data: AdvertisingPayload.iBeacon(uuid: uuidBytes, major: major, minor: minor, power: advertised))
            out.append(Transmitter(beacon: beacon, trajectory: path,
                                   power: Double(advertised) + trng.gaussian() * s.radio.powerSpread,
                                   tracked: true, rotation: nil, advertiser: tag))
            if i < s.phones, let id = BeaconID.irk("phone-\(i)"),
               let irk = IdentityResolvingKey(name: "phone-\(i)", key: randomBytes(16, stream: "irk-phone-\(i)")) {
                // A phone in the same pocket: no advertised power, a weaker antenna, rotating address.
                let phone = ScenarioBeacon(id: id, name: "phone-\(i)", kind: "device", measuredPower: nil,
                                           interval: 0.5, mobile: true)
                let noise = randomBytes(5, stream: "payload-phone-\(i)")
                // iPhones change their Nearby Info status bytes with the address; an Android
                // phone's Fast Pair model id stays.
                let air = i % 2 == 0
                    ? SimulatedAdvertiser(id: id, address: .resolvable(irk), eventType: 0x00,
                                          data: AdvertisingPayload.applePhone(status: noise),
                                          rotatingBytes: AdvertisingPayload.applePhoneStatusBytes)
                    : SimulatedAdvertiser(id: id, address: .resolvable(irk), eventType: 0x00,
                                          data: AdvertisingPayload.androidPhone(model: noise))
                out.append(Transmitter(beacon: phone, trajectory: path, power: -64 + trng.gaussian() * 3,
                                       tracked: true, rotation: s.addressRotation, advertiser: air))
            }
        }
        for i in 0..<s.staticTags {
            var trng = SeededRandom(seed: s.seed, stream: "tag-\(i)")
            let room = s.plan.rooms[trng.index(s.plan.rooms.count)]
            let p = Trajectory.randomPoint(in: room, rng: &trng)
            let advertised = -60 - trng.index(6)
            let id: BeaconID
            let data: [UInt8]
            if i % 2 == 0 {
                let major = UInt16(200 + i), minor = UInt16(truncatingIfNeeded: trng.next())
                id = .iBeacon(uuid: uuid, major: major, minor: minor)
                data = AdvertisingPayload.iBeacon(uuid: uuidBytes, major: major, minor: minor, power: advertised)
            } else {
                let namespace = (0..<10).map { _ in UInt8(truncatingIfNeeded: trng.next()) }
                let instance = (0..<6).map { _ in UInt8(truncatingIfNeeded: trng.next()) }
                id = .eddystone(namespace: namespace, instance: instance)
                data = AdvertisingPayload.eddystoneUID(namespace: namespace, instance: instance, power: advertised)
            }
            let beacon = ScenarioBeacon(id: id, name: "tag-\(i)", kind: i % 2 == 0 ? "ibeacon" : "eddystone",
                                        measuredPower: advertised, interval: i % 2 == 0 ? 1.0 : 2.0, mobile: false)
            let air = SimulatedAdvertiser(id: id, address: .fixed(staticAddress(for: id), random: true),
                                          eventType: 0x03, data: data)
            out.append(Transmitter(beacon: beacon, trajectory: .fixed(at: p, floor: room.floor, duration: s.duration),
                                   power: Double(advertised) + trng.gaussian() * s.radio.powerSpread,
                                   tracked: true, rotation: nil, advertiser: air))
        }
        for i in 0..<s.strangers {
            var trng = SeededRandom(seed: s.seed, stream: "stranger-\(i)")
            let room = s.plan.rooms[trng.index(s.plan.rooms.count)]
            // Neighbours' devices: just outside the outline, heard through a wall.
            var p = Trajectory.randomPoint(in: room, rng: &trng)
            p.x += trng.chance(0.5) ? 6 : -6
            let mac = (0..<6).map { _ in UInt8(truncatingIfNeeded: trng.next()) }
            let beacon = ScenarioBeacon(id: .mac(mac), name: nil, kind: "device", measuredPower: nil,
                                        interval: trng.uniform(0.1, 2), mobile: false)
            // A PC, a TV, a speaker: nothing any config tracks.
            let noise = randomBytes(4, stream: "payload-stranger-\(i)")
            let data = switch i % 3 {
            case 0: AdvertisingPayload.microsoftCDP(salt: noise)
            case 1: AdvertisingPayload.named("LE-Device")
            default: AdvertisingPayload.named("TV-" + Hex.encode(noise.prefix(2)))
            }
            let air = SimulatedAdvertiser(id: beacon.id, address: .fixed(mac, random: false),
                                          eventType: i % 3 == 0 ? 0x03 : 0x00, data: data)
            out.append(Transmitter(beacon: beacon, trajectory: .fixed(at: p, floor: room.floor, duration: s.duration),
                                   power: -60 + trng.gaussian() * 4, tracked: false, rotation: nil, advertiser: air))
        }
        for i in 0..<s.neighbourPhones {
            var trng = SeededRandom(seed: s.seed, stream: "neighbour-phone-\(i)")
            let room = s.plan.rooms[trng.index(s.plan.rooms.count)]
            var p = Trajectory.randomPoint(in: room, rng: &trng)
            p.y += trng.chance(0.5) ? 6 : -6
            // The id only labels the phone in raw.jsonl; on the air it is its rotating `mac`,
            // from a key no agent has, so it must stay untracked.
            let label = (0..<6).map { _ in UInt8(truncatingIfNeeded: trng.next()) }
            guard let irk = IdentityResolvingKey(name: "neighbour-\(i)", key: randomBytes(16, stream: "irk-neighbour-phone-\(i)"))
            else { continue }
            let beacon = ScenarioBeacon(id: .mac(label), name: nil, kind: "device", measuredPower: nil,
                                        interval: trng.uniform(0.3, 1), mobile: false)
            let air = SimulatedAdvertiser(id: beacon.id, address: .resolvable(irk), eventType: 0x00,
                                          data: AdvertisingPayload.applePhone(status: randomBytes(5, stream: "payload-neighbour-phone-\(i)")),
                                          rotatingBytes: AdvertisingPayload.applePhoneStatusBytes)
            out.append(Transmitter(beacon: beacon, trajectory: .fixed(at: p, floor: room.floor, duration: s.duration),
                                   power: -62 + trng.gaussian() * 3, tracked: false, rotation: s.addressRotation,
                                   advertiser: air))
        }
        return out
    }

    /// A version-4 (random) UUID made of 16 random bytes, and its bytes.
    static func randomUUID(_ random: [UInt8]) -> (UUID, [UInt8]) {
        var bytes = random
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return (UUID(uuidString: BeaconID.uuidString(bytes)) ?? UUID(), bytes)
    }

    /// Bytes from their own sub-stream, so drawing them leaves every other stream as it was.
    func randomBytes(_ count: Int, stream: String) -> [UInt8] {
        var rng = SeededRandom(seed: settings.seed, stream: stream)
        return (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
    }

    /// A tag's random static address (top bits 11), fixed for the scenario.
    func staticAddress(for id: BeaconID) -> [UInt8] { Self.staticAddress(for: id, seed: settings.seed) }

    /// A static random address (the two top bits set, Core 5.4 Vol 6 Part B §1.3.2.1) drawn
    /// from the id and `seed`: the same id always gets the same address.
    static func staticAddress(for id: BeaconID, seed: UInt64) -> [UInt8] {
        var rng = SeededRandom(seed: seed, stream: "address-\(id.rawValue)")
        var bytes = (0..<6).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        bytes[0] |= 0xC0
        return bytes
    }

    // MARK: - Truth and bound

    func truthSpans(_ tx: Transmitter, layout: ScenarioLayout) -> [TruthSpan] {
        let s = settings
        var spans: [TruthSpan] = []
        var current: String?? = .none
        var since = 0.0
        var t = 0.0
        let step = 0.1
        while t < s.duration {
            var room: String?
            if let (p, floor) = tx.trajectory.indoorPosition(at: t) {
                // On a wall line (between rooms) keep the previous room.
                room = layout.room(at: p, floor: floor)?.name ?? (current ?? nil)
            }
            if current == nil || current! != room {
                if let c = current, t > since {
                    spans.append(TruthSpan(id: tx.beacon.id, t0: s.t0 + since, t1: s.t0 + t, room: c))
                }
                current = .some(room)
                since = t
            }
            t = ((t + step) * 10).rounded() / 10
        }
        if let c = current {
            spans.append(TruthSpan(id: tx.beacon.id, t0: s.t0 + since, t1: s.t0 + s.duration, room: c))
        }
        return spans
    }

    /// The room of the node with the strongest noise-free signal among those that hear at
    /// `t` (a silent node helps no rule).
    func strongestRoom(_ tx: Transmitter, at t: Double, nodes: [ScenarioLayout.Node],
                       walls: [Int: [(Point, Point)]], world: World) -> String? {
        guard let (p, floor) = tx.trajectory.indoorPosition(at: t) else { return nil }
        var best: (rssi: Double, room: String?)?
        for (i, node) in nodes.enumerated() where world.hears(i, at: settings.t0 + t) {
            let r = meanRSSI(tx, at: p, floor: floor, node: node, walls: walls)
            if best == nil || r > best!.rssi { best = (r, node.room) }
        }
        return best?.room
    }
}
