import Foundation
import Testing
import RoomcastFusion
import RoomcastSimulation
import Shared
import TestSupport

/// The smallest site: two rooms, a node in each. A move shows on two links only, so
/// every second of evidence counts.
@Suite struct TwoNodeSiteTests {
    /// A tag heard every `gap` s, `noise` dB a reading, shadowing drifting by `drift` dB
    /// (8 s), at -72 dBm by the kitchen's node and `office` by the office's (3 dB nearer the
    /// kitchen); and, from `moveAt`, `kitchenMove`/`officeMove` dB, reached over `moveOver`
    /// seconds. Readings say how sure their node is of them (`rssi_sd`) when `sd` is given.
    static func tagOnTwoLinks(_ settings: FusionSettings, seconds: Double, moveAt: Double = .infinity, moveOver: Double = 0,
                              gap: Double = 2, noise: Double = 6, drift: Double = 3, office: Double = -75,
                              kitchenMove: Double = -8, officeMove: Double = 13, sd: Double? = nil,
                              seed: UInt64) -> [(Double, PresenceDecision)] {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: settings)
        var rng = SeededRandom(seed: seed), synth = Synthetic()
        var shadow = ["n-kitchen": 0.0, "n-office": 0.0]
        var out: [(Double, PresenceDecision)] = []
        var t = 0.0
        let keep = exp(-gap / 8)
        while t < seconds {
            let moved = t < moveAt ? 0 : moveOver > 0 ? min(1, (t - moveAt) / moveOver) : 1
            for node in shadow.keys.sorted() {
                shadow[node]! = shadow[node]! * keep + rng.gaussian(sigma: drift * (1 - keep * keep).squareRoot())
                let mean = node == "n-kitchen" ? -72 + moved * kitchenMove : office + moved * officeMove
                var reading = synth.reading(node, rssi: mean + shadow[node]! + rng.gaussian(sigma: noise), at: t, interval: gap)
                reading.rssiSD = sd
                engine.ingest(reading, now: t)
            }
            for d in engine.tick(now: t + gap / 2) { out.append((t + gap / 2, d)) }
            t += gap
        }
        return out
    }

    @Test func aWalkBetweenTwoNodesIsFollowedAtTheMovingPace() throws {
        // Two nodes: a tag sat 3 dB nearer the kitchen's for five minutes, then walks to
        // where the office's hears it 10 dB louder and the kitchen's 6 dB fainter.
        var followed: [Double] = []
        var stillChanges = 0
        for seed in UInt64(21)...30 {
            let changes = Self.tagOnTwoLinks(FusionSettings(), seconds: 400, moveAt: 300, gap: 1, noise: 2, drift: 2,
                                             kitchenMove: -6, officeMove: 10, seed: seed)
            followed.append(changes.first { $0.0 >= 300 && $0.1.room == "office" }.map { $0.0 - 300 } ?? 100)
            // The same tag left where it sat, for an hour: drift on two links that happens
            // to go opposite ways must rarely pass for a walk.
            stillChanges += Self.tagOnTwoLinks(FusionSettings(), seconds: 3600, gap: 1, noise: 2, drift: 2, seed: seed)
                .filter { $0.0 > 30 }.count
        }
        #expect(followed.filter { $0 <= 4 }.count >= 8, "followed after \(followed) s")
        withKnownIssue("still beacons under drifting shadowing: the shadow moves the spot's mean itself (docs/fusion.md, Known limits)") {
            #expect(stillChanges <= 10, "\(stillChanges) changes in ten still hours")
        }
    }

    @Test func aStillTagThatBothNodesHearAlikeHoldsOneRoomAndIsFollowedWhenItMoves() {
        // A tag left for half an hour where the two nodes hear it alike, each second with
        // noise of its own: a spot's evidence counted once settles on one room, where counted
        // per second it follows runs of noise. Then it walks into the office.
        var stillChanges: [Int] = [], followed: [Double] = []
        for seed in UInt64(21)...30 {
            let changes = Self.tagOnTwoLinks(FusionSettings(), seconds: 1830, moveAt: 1800, gap: 1, noise: 2, drift: 0,
                                             office: -72, kitchenMove: -6, officeMove: 10, seed: seed)
            stillChanges.append(changes.filter { $0.0 > 30 && $0.0 < 1800 }.count)
            // Seconds from the move until the office is shown for good (0: shown already before
            // it; 100: never).
            let lastOther = changes.lastIndex { $0.1.room != "office" } ?? -1
            let since = changes.indices.contains(lastOther + 1) ? max(changes[lastOther + 1].0, 1800) : 1900
            followed.append(since - 1800)
        }
        // Counted per second (spot_share 0), these seeds change room 534 times in 4.9 hours.
        #expect(stillChanges.reduce(0, +) <= 30, "room changes while still, per seed: \(stillChanges)")
        #expect(followed.filter { $0 <= 5 }.count >= 6, "followed after \(followed) s")
        #expect(followed.allSatisfy { $0 <= 10 }, "followed after \(followed) s")
    }

    /// When each seed's tag is first shown in the office after `moveAt` (100: never, in the run).
    static func officeTimes(seconds: Double = 460, moveAt: Double = 300, moveOver: Double = 0, noise: Double = 2,
                            kitchenMove: Double, officeMove: Double) -> [Double] {
        (UInt64(21)...30).map { seed in
            let changes = tagOnTwoLinks(FusionSettings(), seconds: seconds, moveAt: moveAt, moveOver: moveOver, gap: 1,
                                        noise: noise, drift: noise, kitchenMove: kitchenMove, officeMove: officeMove, seed: seed)
            return changes.first { $0.0 >= moveAt && $0.1.room == "office" }.map { $0.0 - moveAt - moveOver } ?? 100
        }
    }

    @Test func aWalkThatLosesBothLinksIsFollowed() {
        // Both nodes by the wall between their rooms: a walk deep into the office loses
        // both links, the kitchen's 14 dB and the office's 6, and leaves the office's 5 dB
        // the louder. Nothing gains, yet the pattern has changed for good.
        let times = Self.officeTimes(noise: 1, kitchenMove: -14, officeMove: -6)
        #expect(times.filter { $0 <= 5 }.count >= 7, "followed after \(times) s")
        #expect(times.allSatisfy { $0 <= 30 }, "followed after \(times) s")
    }

    @Test func aSlowWalkBetweenTheNodesIsFollowed() {
        // A walk over 60 s (a slow walker, a robot vacuum): the links part from their slow
        // averages by little at a time.
        let times = Self.officeTimes(moveOver: 60, kitchenMove: -6, officeMove: 10)
        #expect(times.filter { $0 <= 10 }.count >= 8, "followed \(times) s after the walk")
    }

    @Test func aMoveAfterAnHourStillIsFollowed() {
        // An hour still 3 dB nearer the kitchen's node, then carried over 20 s to where the
        // office's hears it 7 dB louder and the kitchen's 3 dB fainter (quiet links, 1 dB):
        // an hour of stillness must not outweigh what the next minutes say.
        let on = (UInt64(21)...30).map { seed in
            let changes = Self.tagOnTwoLinks(FusionSettings(), seconds: 4000, moveAt: 3600, moveOver: 20, gap: 1, noise: 1,
                                             drift: 1, kitchenMove: -3, officeMove: 7, seed: seed)
            return changes.first { $0.0 >= 3600 && $0.1.room == "office" }.map { $0.0 - 3620 } ?? 999
        }
        #expect(on.allSatisfy { $0 <= 150 }, "followed \(on) s after the move")
    }

    /// The nodes' filters say how sure they are of each level (`rssi_sd`), and a second of a
    /// beacon they are unsure of counts for less (docs/fusion.md): a tag heard once a second
    /// through noisy links holds its room where counting each second in full follows runs of
    /// noise, and is still followed when it walks off.
    @Test func levelsTheNodesAreUnsureOfCountForLess() {
        func run(sd: Double?, seed: UInt64) -> (changes: Int, followed: Double) {
            let changes = Self.tagOnTwoLinks(FusionSettings(), seconds: 1830, moveAt: 1800, gap: 1, noise: 4, drift: 0,
                                             kitchenMove: -6, officeMove: 10, sd: sd, seed: seed)
            let followed = changes.first { $0.0 >= 1800 && $0.1.room == "office" }.map { $0.0 - 1800 } ?? 100
            return (changes.filter { $0.0 > 30 && $0.0 < 1800 }.count, followed)
        }
        let seeds = UInt64(41)...50
        let unsure = seeds.map { run(sd: 4, seed: $0) }, sure = seeds.map { run(sd: nil, seed: $0) }
        // Counted in full, these seeds change room 273 times in 4.9 still hours; counted by
        // how sure the nodes are, 105.
        let (unsureChanges, sureChanges) = (unsure.map(\.changes).reduce(0, +), sure.map(\.changes).reduce(0, +))
        #expect(2 * unsureChanges < sureChanges, "\(unsureChanges) changes against \(sureChanges)")
        #expect(unsure.allSatisfy { $0.followed <= 10 }, "followed after \(unsure.map(\.followed)) s")
        // A level known better than the weights assume counts in full, never more.
        let sharp = seeds.map { run(sd: 1, seed: $0) }
        #expect(sharp.map(\.changes) == sure.map(\.changes) && sharp.map(\.followed) == sure.map(\.followed))
    }

    @Test func aStillTagBetweenTheRoomsRarelyChangesRoom() {
        // A tag as near one node as the other, its links drifting 4 dB (3 dB a reading), ten
        // hours: drift tips the evidence one way for a while, which is no walk.
        let changes = (UInt64(1)...10).reduce(0) {
            $0 + Self.tagOnTwoLinks(FusionSettings(), seconds: 3600, gap: 1, noise: 3, drift: 4, kitchenMove: 0, officeMove: 0, seed: $1)
                .filter { $0.0 > 30 }.count
        }
        withKnownIssue("still beacons under drifting shadowing: the shadow moves the spot's mean itself (docs/fusion.md, Known limits)") {
            #expect(changes <= 40, "\(changes) changes in ten hours")
        }
    }

    @Test func aStillTagOnNoisyLinksRarelyChangesRoom() {
        // A tag heard every 2 s through two noisy links (6 dB a reading, 3 dB of drifting
        // shadowing), ten hours: one reading parts a fast average from its slow one as far as
        // a walk does.
        let changes = (UInt64(1)...10).reduce(0) { $0 + Self.tagOnTwoLinks(FusionSettings(), seconds: 3600, seed: $1).filter { $0.0 > 30 }.count }
        withKnownIssue("still beacons under drifting shadowing: the shadow moves the spot's mean itself (docs/fusion.md, Known limits)") {
            #expect(changes <= 40, "\(changes) changes in ten hours")
        }
    }
}
