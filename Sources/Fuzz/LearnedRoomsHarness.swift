import RoomcastFusion
import Shared

/// Fuzzes the learned-rooms state file (`learn.state_file`), which the aggregator reads at
/// start-up and hands to fusion (`FusionEngine.restore`).
///
/// Input: the file's bytes. A file that decodes must hold only what the bounds allow
/// (rooms, nodes, departure counts, placements, names, finite numbers in range, sorted and
/// unique), re-encode to itself, and survive a restore (which keeps the counts of the site's
/// rooms only; the placements are the aggregator's, not fusion's), a taught label and a
/// forget: what the aggregator would then write must decode again. One that does not decode
/// must fail with a `LearnedRoomsError`.
enum LearnedRoomsHarness {
    static func run(_ input: [UInt8]) {
        let learned: LearnedRooms
        do { learned = try LearnedRooms.decode(input) } catch {
            FuzzCheck.require(!error.description.isEmpty, "an empty error")
            return
        }
        check(learned, "decoded")
        FuzzCheck.require((try? LearnedRooms.decode(learned.encoded())) == learned, "the state changed in a round trip")

        var engine = FusionEngine(site: FuzzSite.site)
        engine.restore(learned)
        var restored = learned
        let siteRooms = Set(FuzzSite.site.rooms.map(\.name))
        restored.departures.removeAll { !siteRooms.contains($0.room) || $0.left + $0.returned == 0 }
        // The rooms last published are resumed by the aggregator's runtime, not fusion.
        restored.placed = []
        FuzzCheck.require(engine.learnedRooms == restored, "restore changed the state")
        let room = FuzzSite.site.rooms[0].name
        do { try engine.beginLabel(room: room, beacon: FuzzSite.cat, seconds: 5, now: FuzzSite.start) } catch {
            FuzzCheck.require(false, "a label on a site room was refused: \(error)")
        }
        var seq: UInt64 = 0
        for step in 0..<8 {
            let now = FuzzSite.start + Double(step)
            for (k, node) in FuzzSite.site.nodes.enumerated() {
                seq += 1
                engine.ingest(FuzzSite.reading(node.name, FuzzSite.cat, rssi: -50 - 9 * k, ts: now, seq: seq), now: now)
            }
            _ = engine.tick(now: now + 0.5)
        }
        let finished = engine.takeFinishedLabels()
        FuzzCheck.require(finished.count == 1, "the label did not finish once: \(finished.count)")
        check(engine.learnedRooms, "after a label")
        FuzzCheck.require((try? LearnedRooms.decode(engine.learnedRooms.encoded())) == engine.learnedRooms,
                          "what the aggregator would write after a label does not read back")
        if let first = learned.rooms.first {
            engine.forgetLearned(room: first.name)
            FuzzCheck.require(engine.learnedRooms.room(named: first.name) == nil, "forget left the room")
        }
    }

    static func check(_ learned: LearnedRooms, _ when: String) {
        FuzzCheck.require(learned.rooms.count <= LearnedRooms.maximumRooms, "\(when): \(learned.rooms.count) rooms")
        FuzzCheck.require(zip(learned.rooms, learned.rooms.dropFirst()).allSatisfy { $0.name < $1.name }, "\(when): rooms not sorted and unique")
        for room in learned.rooms {
            FuzzCheck.require(TopicName.isValid(room.name), "\(when): room name '\(room.name)'")
            FuzzCheck.require(room.seconds.isFinite && room.seconds >= 0 && room.seconds <= LearnedRooms.secondsBound, "\(when): \(room.name) seconds \(room.seconds)")
            FuzzCheck.require(room.nodes.count <= LearnedRooms.maximumNodes, "\(when): \(room.nodes.count) nodes")
            FuzzCheck.require(zip(room.nodes, room.nodes.dropFirst()).allSatisfy { $0.node < $1.node }, "\(when): nodes not sorted and unique")
            for n in room.nodes {
                FuzzCheck.require(TopicName.isValid(n.node), "\(when): node name '\(n.node)'")
                FuzzCheck.require(n.seconds.isFinite && n.seconds >= 0 && n.seconds <= LearnedRooms.secondsBound, "\(when): \(n.node) seconds \(n.seconds)")
                FuzzCheck.require(n.mean.isFinite && abs(n.mean) <= LearnedRooms.meanBound, "\(when): \(n.node) mean \(n.mean)")
                FuzzCheck.require(n.spread.isFinite && n.spread >= 0 && n.spread <= LearnedRooms.spreadBound, "\(when): \(n.node) spread \(n.spread)")
            }
        }
        FuzzCheck.require(learned.departures.count <= LearnedRooms.maximumDepartureRooms, "\(when): \(learned.departures.count) departure records")
        FuzzCheck.require(zip(learned.departures, learned.departures.dropFirst()).allSatisfy { $0.room < $1.room },
                          "\(when): departure records not sorted and unique")
        for d in learned.departures {
            FuzzCheck.require(TopicName.isValid(d.room), "\(when): departure room name '\(d.room)'")
            FuzzCheck.require((0...LearnedRooms.countBound).contains(d.left) && (0...LearnedRooms.countBound).contains(d.returned),
                              "\(when): \(d.room) counts \(d.left)/\(d.returned)")
        }
        FuzzCheck.require(learned.placed.count <= LearnedRooms.maximumPlacements, "\(when): \(learned.placed.count) placements")
        FuzzCheck.require(zip(learned.placed, learned.placed.dropFirst()).allSatisfy { $0.beacon < $1.beacon },
                          "\(when): placements not sorted and unique")
        let times = -LearnedRooms.timeBound...LearnedRooms.timeBound
        for p in learned.placed {
            FuzzCheck.require(BeaconID(p.beacon.rawValue) == p.beacon, "\(when): beacon id '\(p.beacon)'")
            FuzzCheck.require(TopicName.isValid(p.room) && p.node.map(TopicName.isValid) ?? true, "\(when): \(p.beacon) room or node name")
            FuzzCheck.require(times.contains(p.since) && times.contains(p.at) && p.seen.map(times.contains) ?? true,
                              "\(when): \(p.beacon) times \(p.since) \(p.at) \(String(describing: p.seen))")
            FuzzCheck.require((0...1).contains(p.confidence), "\(when): \(p.beacon) confidence \(p.confidence)")
            FuzzCheck.require(p.name.map(LearnedRooms.isValidDisplayName) ?? true && p.reason.map(TopicName.isValid) ?? true,
                              "\(when): \(p.beacon) name or reason")
        }
    }
}
