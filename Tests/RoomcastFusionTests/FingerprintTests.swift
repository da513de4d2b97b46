import Foundation
import Testing
import RoomcastFusion
import RoomcastSimulation
import Shared
import TestSupport

@Suite("Fingerprints: sites without positions learn from the nodes' own beacons")
struct FingerprintTests {
    /// Four 4 × 4 m rooms in a square; one node in the middle of each, every node advertising.
    /// The engine gets rooms and membership only; positions live in the test's radio model.
    static let positions: [String: [Double]] = ["kitchen-pi": [2, 2], "living-pi": [6, 2], "bath-pi": [2, 6], "bed-pi": [6, 6]]
    static let rooms = ["kitchen-pi": "kitchen", "living-pi": "living", "bath-pi": "bath", "bed-pi": "bedroom"]
    static let order = ["kitchen-pi", "living-pi", "bath-pi", "bed-pi"]
    /// The living room's receiver reads 9 dB high: enough for it to be the strongest node
    /// for a beacon in the kitchen 0.4 m from their shared wall.
    static let offsets = ["living-pi": 9.0]

    static func site(transmitting: Bool) -> SiteModel {
        SiteModel(rooms: ["kitchen", "living", "bath", "bedroom"].map { .init(name: $0) },
                  nodes: order.enumerated().map { k, name in
                      .init(name: name, room: rooms[name]!, beacon: transmitting ? beacon(UInt16(k + 1)) : nil)
                  })
    }

    static func beacon(_ minor: UInt16) -> BeaconID {
        BeaconID("ibeacon:f7826da6-4fa2-4e98-8024-bc5b71e0893e-900-\(minor)")!
    }

    /// Log-distance (n = 2, −59 dBm at 1 m), 4 dB per wall (x = 4 and y = 4), plus the receiver's offset.
    static func rssi(at p: [Double], by node: String) -> Double {
        let q = positions[node]!
        let d = max(((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1])).squareRoot(), 0.3)
        let walls = ((p[0] < 4) != (q[0] < 4) ? 1.0 : 0) + ((p[1] < 4) != (q[1] < 4) ? 1.0 : 0)
        return -59 - 20 * log10(d) - 4 * walls + (offsets[node] ?? 0)
    }

    /// 90 s: every node hears the others' beacons once a second, and the tag at `tag` five
    /// times a second, with 2 dB of noise. Returns the tag's room at the end.
    static func roomOfTag(at tag: [Double], site: SiteModel, fingerprints: Bool) -> String? {
        var settings = FusionSettings()
        settings.fingerprints = fingerprints
        var engine = FusionEngine(site: site, settings: settings)
        var rng = SeededRandom(seed: 14), synth = Synthetic()
        for step in 0..<450 {
            let t = Double(step) * 0.2
            if step % 5 == 0 {
                for (k, tx) in order.enumerated() {
                    for rx in order where rx != tx {
                        let r = synth.reading(rx, rssi: rssi(at: positions[tx]!, by: rx) + rng.gaussian(sigma: 2), at: t,
                                              id: beacon(UInt16(k + 1)), interval: 1)
                        engine.ingest(r, now: t)
                    }
                }
            }
            for rx in order {
                engine.ingest(synth.reading(rx, rssi: rssi(at: tag, by: rx) + rng.gaussian(sigma: 2), at: t), now: t)
            }
            _ = engine.tick(now: t)
        }
        return engine.decision(for: Synthetic.tag)?.room
    }

    @Test("a hot receiver next door wins the nearest-node rule; fingerprints keep the beacon in its room")
    func fingerprintsCancelAHotReceiver() {
        let tag = [3.6, 2.0]
        // The premise: through the wall and 2.4 m away, the hot living-room node is the strongest.
        #expect(Self.rssi(at: tag, by: "living-pi") > Self.rssi(at: tag, by: "kitchen-pi"))
        let site = Self.site(transmitting: true)
        #expect(FusionSettings().fingerprints)
        #expect(Self.roomOfTag(at: tag, site: site, fingerprints: false) == "living")
        #expect(Self.roomOfTag(at: tag, site: site, fingerprints: true) == "kitchen")
    }

    @Test("the start-up summary says how the engine decides and what node beacons are for")
    func modeSummary() {
        #expect(FusionEngine(site: Self.site(transmitting: true)).modeSummary
                == "node membership; room fingerprints from 4 node beacons")
        var off = FusionSettings()
        off.fingerprints = false
        #expect(FusionEngine(site: Self.site(transmitting: true), settings: off).modeSummary.contains("node beacons ignored (fingerprints off)"))
        #expect(FusionEngine(site: Self.site(transmitting: false)).modeSummary == "node membership")
        // Two Pis: each one's beacon is heard by one other node only, which teaches nothing.
        var two = Self.site(transmitting: true)
        two.nodes.removeLast(2)
        #expect(FusionEngine(site: two).modeSummary == "node membership; node beacons unused (each needs two other nodes to hear it)")
        var placed = Self.site(transmitting: true)
        for i in placed.nodes.indices { placed.nodes[i].position = Self.positions[placed.nodes[i].name]! + [1] }
        // Positions without polygons: geometry cannot draw the rooms, and the summary says so.
        #expect(FusionEngine(site: placed).modeSummary.hasPrefix("node membership (room 'kitchen' has a node but no polygon)"))
        let corners: [String: [[Double]]] = ["kitchen": [[0, 0], [4, 0], [4, 4], [0, 4]], "living": [[4, 0], [8, 0], [8, 4], [4, 4]],
                                             "bath": [[0, 4], [4, 4], [4, 8], [0, 8]], "bedroom": [[4, 4], [8, 4], [8, 8], [4, 8]]]
        for i in placed.rooms.indices { placed.rooms[i].polygon = corners[placed.rooms[i].name] }
        #expect(FusionEngine(site: placed).modeSummary
                == "positions and room polygons; receiver calibration from 4 node beacons")
        for i in placed.nodes.indices { placed.nodes[i].beacon = nil }
        #expect(FusionEngine(site: placed).modeSummary
                == "positions and room polygons")
        placed.nodes[0].beacon = Self.site(transmitting: true).nodes[0].beacon
        #expect(FusionEngine(site: placed).modeSummary
                == "positions and room polygons; receiver calibration from 1 node beacon")
    }

    @Test("without node beacons fingerprints change nothing")
    func noTransmittersNoChange() {
        let site = Self.site(transmitting: false)
        for tag in [[3.6, 2.0], [1.0, 6.5], [6.5, 5.0]] {
            #expect(Self.roomOfTag(at: tag, site: site, fingerprints: true)
                    == Self.roomOfTag(at: tag, site: site, fingerprints: false))
        }
    }
}
