import Foundation
import RoomcastAggregator
import RoomcastMQTT
import Shared
import Testing
import TestSupport

/// Faults injected into the running system (real edge-agent, aggregator and mosquitto
/// processes, a simulated home replayed in real time). Each test prints what was lost
/// and how long recovery took; docs/reliability.md records the figures.
/// The slower faults (a 20 s outage, aggregator restart, clock skew) run when
/// `ROOMCAST_FAULTS=1` is set, which scripts/faults.sh does (it also runs the slow-link case).
@Suite(.serialized, .requiresMosquitto) struct FaultTests {
    static var extended: Bool { ProcessInfo.processInfo.environment["ROOMCAST_FAULTS"] == "1" }

    static func s(_ seconds: Double) -> String { String(format: "%.2f s", seconds) }

    /// Runs `body` on a fresh rig and always tears it down.
    static func withRig(refreshInterval: Double = 60, relayed: Set<String> = [],
                        _ body: (FaultRig) async throws -> Void) async throws {
        let rig = try await FaultRig.start(refreshInterval: refreshInterval, relayed: relayed)
        do { try await body(rig) } catch {
            await rig.shutdown()
            throw error
        }
        let errors = rig.errorLines()
        await rig.shutdown()
        #expect(errors.isEmpty, "error-level log lines: \(errors.prefix(10))")
    }

    /// Waits until every beacon of the home has a room; returns the decisions.
    static func warmUp(_ rig: FaultRig) async throws -> [String: PresenceDecision] {
        try await rig.waitFor("a room for every beacon", timeout: .seconds(40)) { _ in
            rig.latestPresence().values.filter { $0.room != nil }.count == rig.beacons.count
        }
        return rig.latestPresence()
    }

    /// The nodes that hear the probe; it starts loud at the kitchen's.
    static let probeNodes = ["kitchen-pi", "office-pi", "living-pi"]

    /// Starts the probe in the kitchen and moves it to the office once: the switch time of a
    /// move with no fault, in this run, on this machine.
    static func probeBaseline(_ rig: FaultRig) async throws -> (probe: FaultRig.Probe, normal: Double) {
        let probe = try rig.startProbe(nodes: probeNodes, loudAt: "kitchen-pi")
        _ = try await rig.follow(probe, to: "kitchen-pi", room: "kitchen")
        let normal = try await rig.follow(probe, to: "office-pi", room: "office")
        return (probe, normal)
    }

    /// After a fault that ended at `faultEnded`: the probe moves back to the kitchen and must be
    /// followed within its normal switch time (plus the aggregator's 3 s grace after it hears
    /// again, and a second of scheduling), with decisions stamped after the fault.
    static func probeFollowed(_ rig: FaultRig, _ probe: FaultRig.Probe, normal: Double, faultEnded: Double,
                              _ fault: String) async throws -> Double {
        let after = try await rig.follow(probe, to: "kitchen-pi", room: "kitchen")
        #expect(after <= normal + 4, "\(fault): the move after the fault took \(after) s, without a fault \(normal) s")
        let stamps = rig.probeDecisions(since: faultEnded).map(\.ts)
        #expect(stamps.contains { $0 > faultEnded }, "\(fault): decisions carry fresh timestamps after the fault: \(stamps)")
        return after
    }

    /// Beacons published away since `since` (a listed beacon no node has heard at all is away
    /// from the start: it did not go).
    static func wentAway(_ rig: FaultRig, since: Double) -> [String] {
        rig.messages.filter { $0.at >= since }.compactMap(\.presence)
            .filter { $0.room == nil && $0.reason != PresencePublisher.neverHeardReason }.map(\.id.rawValue)
    }

    @Test func aKilledAgentsLastWillFiresAndItsEvidenceDropsOut() async throws {
        // Presence goes out on a room change; a 2 s refresh shows the evidence of every beacon.
        try await Self.withRig(refreshInterval: 2) { rig in
            var before = try await Self.warmUp(rig)
            let warm = FaultRig.now
            try await rig.waitFor("one refresh of every decision") { _ in rig.latestPresence(since: warm).count >= before.count }
            before = rig.latestPresence()
            // The node that hears most beacons, of those the probe does not use: its loss matters
            // most, and the probe's move between two other rooms after it shows the rest still decide.
            let hearers = before.values.flatMap { $0.evidence.map(\.node) }.filter { !Self.probeNodes.contains($0) }
            let victim = try #require(Dictionary(grouping: hearers, by: { $0 }).max { $0.value.count < $1.value.count }?.key)
            let heardByVictim = before.values.filter { $0.evidence.contains { $0.node == victim } }.map(\.id.rawValue)
            try #require(!heardByVictim.isEmpty, "the node that hears most beacons hears some")
            let status = "roomcast/nodes/\(victim)/status"
            let probe = try rig.startProbe(nodes: Self.probeNodes, loudAt: "kitchen-pi")
            _ = try await rig.follow(probe, to: "kitchen-pi", room: "kitchen")

            let killedAt = FaultRig.now
            await rig.killAgent(victim, signal: SIGKILL)
            try await rig.waitFor("the Last Will `offline` on \(status)", timeout: .seconds(10)) {
                $0.contains { $0.at >= killedAt && $0.topic == status && $0.text == "offline" }
            }
            let will = try #require(rig.messages.first { $0.at >= killedAt && $0.topic == status && $0.text == "offline" })

            // Its evidence drops out once it is no longer fresh; the others' decisions stand.
            try await rig.waitFor("decisions without \(victim)'s evidence for \(heardByVictim)", timeout: .seconds(30)) { all in
                let after = all.filter { $0.at >= killedAt }.compactMap(\.presence)
                return heardByVictim.allSatisfy { id in
                    after.contains { $0.id.rawValue == id && !$0.evidence.contains { $0.node == victim } }
                }
            }
            let dropTimes = heardByVictim.compactMap { id in
                rig.messages.first { $0.at >= killedAt && $0.presence.map { $0.id.rawValue == id && !$0.evidence.contains { $0.node == victim } } == true }?.at
            }
            let evidenceGone = (dropTimes.max() ?? killedAt) - killedAt
            let lastCiting = rig.messages.filter { $0.at >= killedAt && $0.presence?.evidence.contains { $0.node == victim } == true }
                .map(\.at).max().map { $0 - killedAt }
            // Wait one more refresh of every decision, then nothing after the freshness window may cite the victim.
            let settle = FaultRig.now
            try await rig.waitFor("one more refresh of every decision") { _ in rig.latestPresence(since: settle).count >= before.count }
            let stale = rig.messages.filter { $0.at > killedAt + evidenceGone + 0.5 }.compactMap(\.presence)
                .filter { $0.evidence.contains { $0.node == victim } }
            #expect(stale.isEmpty, "decisions citing the dead node \(victim) after its evidence dropped out: \(stale.map(\.id))")
            let away = Self.wentAway(rig, since: killedAt)
            #expect(away.isEmpty, "beacons other nodes still hear must not go away: \(away)")
            // Without the dead node the rest still decide: a move between two others is followed.
            let followed = try await rig.follow(probe, to: "office-pi", room: "office")
            await probe.stop()
            let now = rig.latestPresence()
            let moves = before.keys.sorted().map { id in
                "\(id.suffix(14)): \(before[id]?.room ?? "away") → \(now[id]?.room ?? "away")"
            }
            print("""
                fault agent-sigkill: node \(victim) killed; Last Will offline after \(Self.s(will.at - killedAt)); \
                first decision without it for all \(heardByVictim.count) beacons it heard after \(Self.s(evidenceGone)), \
                last decision citing it \(lastCiting.map { Self.s($0) + " after the kill" } ?? "before the kill"); \
                went away: \(away.count); rooms before → after: \(moves.joined(separator: ", ")); \
                a move between two other nodes followed in \(Self.s(followed))
                """)
        }
    }

    /// Outages shorter than the away timeout (30 s); the 20 s one runs under ROOMCAST_FAULTS=1.
    static let outages: [Double] = extended ? [5, 20] : [5]

    @Test(arguments: FaultTests.outages)
    func brokerKilledAndRestartedEverythingRecoversWithoutAway(outage: Double) async throws {
        try await Self.withRig { rig in
            let before = try await Self.warmUp(rig)
            let (probe, normal) = try await Self.probeBaseline(rig)
            let warm = FaultRig.now
            let killedAt = FaultRig.now
            await rig.broker.kill()
            // The outage itself is the fault being injected, not a wait for something to happen.
            try await Task.sleep(for: .seconds(outage))
            try await rig.broker.startAgain()
            let upAt = FaultRig.now

            func onlineAfter(_ topic: String, _ all: [FaultRig.Seen]) -> Double? {
                all.first { $0.at >= upAt && $0.topic == topic && $0.text == "online" }?.at
            }
            try await rig.waitFor("every agent and the aggregator online again", timeout: .seconds(30)) { all in
                rig.nodes.allSatisfy { onlineAfter("roomcast/nodes/\($0)/status", all) != nil }
                    && onlineAfter("roomcast/aggregator/status", all) != nil
            }
            try await rig.waitFor("fresh presence for every beacon", timeout: .seconds(30)) { _ in
                rig.latestPresence(since: upAt).count == rig.beacons.count
            }
            let all = rig.messages
            let agentsBack = rig.nodes.compactMap { onlineAfter("roomcast/nodes/\($0)/status", all) }.max()! - upAt
            let aggregatorBack = onlineAfter("roomcast/aggregator/status", all)! - upAt
            let presenceBack = rig.beacons.compactMap { id in
                all.first { $0.at >= upAt && $0.presence?.id.rawValue == id }?.at
            }.max()! - upAt
            // Readings lost: the gap in each node's beacon stream across the outage.
            let gaps = rig.nodes.map { node -> Double in
                let prefix = "roomcast/nodes/\(node)/beacons/"
                let lastBefore = all.last { $0.at < upAt && $0.topic.hasPrefix(prefix) }?.at ?? killedAt
                let firstAfter = all.first { $0.at >= upAt && $0.topic.hasPrefix(prefix) }?.at ?? upAt
                return firstAfter - lastBefore
            }

            // A new client (Home Assistant after its own restart) finds the retained state again.
            // Each snapshot ends at a live message; on a loaded machine a snapshot can end before
            // the broker has sent every retained topic, so take another until all are in or 10 s pass.
            var retained = try await rig.retained()
            let deadline = ContinuousClock.now + .seconds(10)
            while rig.beacons.contains(where: { retained["roomcast/presence/\($0)"] == nil }), ContinuousClock.now < deadline {
                retained = try await rig.retained()
            }
            #expect(retained["roomcast/aggregator/status"] == "online", "aggregator availability is retained again")
            for node in rig.nodes { #expect(retained["roomcast/nodes/\(node)/status"] == "online") }
            let retainedPresence = rig.beacons.filter { retained["roomcast/presence/\($0)"] != nil }
            #expect(retainedPresence.count == rig.beacons.count, "retained presence after the restart: \(retainedPresence)")
            let away = Self.wentAway(rig, since: warm)
            #expect(away.isEmpty, "a blip shorter than the away timeout must not send anyone away: \(away)")
            let followed = try await Self.probeFollowed(rig, probe, normal: normal, faultEnded: upAt, "broker outage \(outage) s")
            await probe.stop()
            print("""
                fault broker-sigkill: down \(Self.s(upAt - killedAt)); agents online again after \(Self.s(agentsBack)), \
                aggregator after \(Self.s(aggregatorBack)), presence for all \(before.count) beacons after \(Self.s(presenceBack)); \
                reading gap per node max \(Self.s(gaps.max() ?? 0)) (readings in the gap are dropped, not queued); \
                went away: \(away.count); retained presence topics after: \(retainedPresence.count)/\(rig.beacons.count); \
                a move after it followed in \(Self.s(followed)) (without a fault \(Self.s(normal)))
                """)
        }
    }

    /// A frozen broker (SIGSTOP: a broker stuck on its disk, a host that hangs) keeps every
    /// connection open with nothing delivered, longer than the away timeout: every node's
    /// silence was read as every beacon leaving. The aggregator's heartbeats stop coming back,
    /// and it holds its decisions until they do.
    @Test func aFrozenBrokerSendsNobodyAway() async throws {
        try await Self.withRig { rig in
            _ = try await Self.warmUp(rig)
            let (probe, normal) = try await Self.probeBaseline(rig)
            let frozenAt = FaultRig.now
            rig.broker.pause()
            // The freeze itself is the fault being injected, longer than the away timeout (30 s).
            try await Task.sleep(for: .seconds(35))
            rig.broker.resume()
            let thawedAt = FaultRig.now
            try await rig.waitFor("fresh presence for every beacon", timeout: .seconds(40)) { _ in
                rig.latestPresence(since: thawedAt).count == rig.beacons.count
            }
            let away = Self.wentAway(rig, since: frozenAt)
            #expect(away.isEmpty, "a frozen broker must not send anyone away: \(away)")
            let followed = try await Self.probeFollowed(rig, probe, normal: normal, faultEnded: thawedAt, "frozen broker 35 s")
            await probe.stop()
            print("fault broker-sigstop-35s: went away: \(away.count); a move after it followed in \(Self.s(followed)) (without a fault \(Self.s(normal)))")
        }
    }

    /// The site's Wi-Fi goes (an access point rebooting): every agent stops sending without
    /// closing its connection (SIGSTOP), so no Last Will comes for 45 s (1.5 × the 30-s
    /// keep-alive). Their silence was read as every beacon leaving: all went away after the away
    /// timeout, and people `not_home`. The agents' heartbeats stop with them, and the aggregator
    /// holds every beacon where it was (`nodes_offline`) where it would have gone away; when the
    /// Wi-Fi is back, every beacon is placed again where it is, and a move is followed.
    @Test func aSiteWideWiFiOutageSendsNobodyAway() async throws {
        try await Self.withRig(refreshInterval: 2) { rig in
            _ = try await Self.warmUp(rig)
            let before = rig.latestPresence()
            let cutAt = FaultRig.now
            for node in rig.nodes { rig.signalAgent(node, SIGSTOP) }
            let heldAt = try await rig.waitFor("every beacon held where it was (nodes_offline)", timeout: .seconds(36)) { _ in
                let latest = rig.latestPresence(since: cutAt)
                return latest.count == rig.beacons.count
                    && latest.allSatisfy { $0.value.reason == "nodes_offline" && $0.value.room == before[$0.key]?.room }
            }
            // The outage itself is the fault being injected: past the away timeout (30 s), short of
            // the Last Will (45 s).
            try await Task.sleep(for: .seconds(max(0, cutAt + 37 - FaultRig.now)))
            let away = Self.wentAway(rig, since: cutAt)
            #expect(away.isEmpty, "a Wi-Fi outage must not send anyone away: \(away)")
            let wills = rig.messages.filter { $0.at >= cutAt && $0.topic.hasSuffix("/status") && $0.text == "offline" }
            #expect(wills.isEmpty, "no Last Will yet: the outage is the silent kind")
            for node in rig.nodes { rig.signalAgent(node, SIGCONT) }
            let backAt = FaultRig.now
            try await rig.waitFor("every beacon placed afresh after the outage", timeout: .seconds(40)) { _ in
                let latest = rig.latestPresence(since: backAt)
                return latest.count == rig.beacons.count && latest.values.allSatisfy { $0.room != nil && $0.reason != "nodes_offline" }
            }
            let after = rig.latestPresence()
            let moved = rig.stationary.filter { after[$0]?.room != before[$0]?.room }
            #expect(moved.isEmpty, "beacons that lie still are where they were: \(moved.map { "\($0): \(before[$0]?.room ?? "-") → \(after[$0]?.room ?? "-")" })")
            // The rest still decide: a move is followed.
            let (probe, normal) = try await Self.probeBaseline(rig)
            await probe.stop()
            print("fault wifi-outage-37s: every beacon held after \(Self.s(heldAt - cutAt)); went away: \(away.count); "
                  + "still beacons moved: \(moved.count) of \(rig.stationary.count); a move after it followed in \(Self.s(normal))")
        }
    }

    @Test(.enabled(if: FaultTests.extended, "set ROOMCAST_FAULTS=1 (scripts/faults.sh) for the slower faults"))
    func aggregatorKilledAndRestartedResumesWithoutFlap() async throws {
        try await Self.withRig { rig in
            let before = try await Self.warmUp(rig)
            let (probe, normal) = try await Self.probeBaseline(rig)
            let killedAt = FaultRig.now
            await rig.killAggregator(signal: SIGKILL)
            try await rig.waitFor("the aggregator's Last Will", timeout: .seconds(10)) {
                $0.contains { $0.at >= killedAt && $0.topic == "roomcast/aggregator/status" && $0.text == "offline" }
            }
            let willAt = rig.messages.first { $0.at >= killedAt && $0.topic == "roomcast/aggregator/status" && $0.text == "offline" }!.at
            let lastBefore = rig.latestPresence()
            try rig.startAggregator()
            let restartedAt = FaultRig.now
            try await rig.waitFor("the aggregator online again", timeout: .seconds(20)) {
                $0.contains { $0.at >= restartedAt && $0.topic == "roomcast/aggregator/status" && $0.text == "online" }
            }
            let onlineAt = rig.messages.first { $0.at >= restartedAt && $0.topic == "roomcast/aggregator/status" && $0.text == "online" }!.at
            try await rig.waitFor("fresh presence for every beacon", timeout: .seconds(30)) { _ in
                rig.latestPresence(since: restartedAt).count == rig.beacons.count
            }
            let settle = FaultRig.now + 5
            try await rig.waitFor("5 s of decisions") { _ in FaultRig.now >= settle }
            let after = rig.messages.filter { $0.at >= restartedAt }
            let events = after.filter { $0.topic == "roomcast/events" }.map(\.text)
            let firstAfter = rig.beacons.compactMap { id in after.compactMap(\.presence).first { $0.id.rawValue == id } }
            let changed = firstAfter.filter { $0.room != lastBefore[$0.id.rawValue]?.room }
            let changes = changed.map { "\($0.id.rawValue.suffix(14)): \(lastBefore[$0.id.rawValue]?.room ?? "away") → \($0.room ?? "away")" }
            let away = Self.wentAway(rig, since: killedAt)
            #expect(away.isEmpty, "a restart must not send anyone away: \(away)")
            // A flap: a stationary tag leaves the room it was in and comes back (A → B → A).
            let flaps = rig.stationary.sorted().filter { id in
                var rooms = [lastBefore[id]?.room ?? "away"]
                for d in after.compactMap(\.presence) where d.id.rawValue == id && rooms.last != (d.room ?? "away") {
                    rooms.append(d.room ?? "away")
                }
                return rooms.indices.dropLast(2).contains { rooms[$0] == rooms[$0 + 2] }
            }
            #expect(flaps.isEmpty, "stationary tags flapped after the restart: \(flaps) (\(changes))")
            let followed = try await Self.probeFollowed(rig, probe, normal: normal, faultEnded: onlineAt, "aggregator restart")
            await probe.stop()
            print("""
                fault aggregator-sigkill: Last Will after \(Self.s(willAt - killedAt)); online again \(Self.s(onlineAt - restartedAt)) \
                after restart; presence for all \(before.count) beacons after \(Self.s((rig.beacons.compactMap { id in after.first { $0.presence?.id.rawValue == id }?.at }.max() ?? restartedAt) - restartedAt)); \
                first decisions in a different room than before the kill: \(changed.count) \(changes); stationary tags that flapped: \(flaps.count); room events in the 5 s after: \(events.count); went away: \(away.count); \
                a move after it followed in \(Self.s(followed)) (without a fault \(Self.s(normal)))
                """)
        }
    }

    /// Node clocks ±30 s off (a Pi without NTP after a power cut). Readings ahead of the
    /// aggregator beyond `skewBound` (2 s) are clamped to its clock and still count; readings
    /// behind are simply old: past the evidence freshness window (4 s) they never count.
    @Test(.enabled(if: FaultTests.extended, "set ROOMCAST_FAULTS=1 (scripts/faults.sh) for the slower faults"))
    func nodeClocksThirtySecondsOff() async throws {
        let skew = ["kitchen-pi": 30.0, "kids-pi": -30.0]
        try await Self.withRig(refreshInterval: 2, relayed: Set(skew.keys)) { rig in
            let relay = try await rig.startSkewRelay(from: FaultRig.relayPrefix, skew: skew)
            _ = try await Self.warmUp(rig)
            let from = FaultRig.now
            let until = from + 20
            try await rig.waitFor("20 s of decisions", timeout: .seconds(30)) { _ in FaultRig.now >= until }
            let decisions = rig.messages.filter { $0.at >= from }.compactMap(\.presence)
            var report: [String] = []
            var cited: [String: Int] = [:]
            for node in rig.nodes {
                let uses = decisions.filter { $0.evidence.contains { $0.node == node } }
                cited[node] = uses.count
                let lag = uses.compactMap { d in d.evidence.first { $0.node == node }.map { d.ts - $0.ts } }
                let meanLag = lag.isEmpty ? 0 : lag.reduce(0, +) / Double(lag.count)
                report.append("\(node)\(skew[node].map { String(format: "(%+.0f s)", $0) } ?? ""): cited by \(uses.count)/\(decisions.count), evidence age \(String(format: "%.1f", meanLag)) s")
            }
            let away = Self.wentAway(rig, since: from)
            #expect(away.isEmpty, "skewed nodes must not send anyone away: \(away)")
            #expect((cited["kitchen-pi"] ?? 0) > 0, "a node 30 s ahead is clamped to the aggregator clock and still counts")
            #expect((cited["kids-pi"] ?? 0) > 0, "a node 30 s behind is put on the aggregator clock once a window agrees, and counts")
            print("fault clock-skew: \(report.joined(separator: "; ")); went away: \(away.count)")
            await relay.shutdown()
        }
    }

    @Test func aForgedOfflineDoesNotSilenceALiveNode() async throws {
        try await Self.withRig { rig in
            _ = try await Self.warmUp(rig)
            let (probe, normal) = try await Self.probeBaseline(rig)
            // Anyone on the broker publishes a non-retained `offline` for the kitchen node, which lives.
            let forger = try MQTTClient(configuration: MQTTClientConfiguration(
                host: "127.0.0.1", port: rig.broker.port, clientID: "fault-forger"), logger: .silent)
            forger.start()
            try await forger.waitUntilConnected(timeout: .seconds(10))
            let forgedAt = FaultRig.now
            try forger.publish(MQTTMessage(topic: "roomcast/nodes/kitchen-pi/status", string: "offline", qos: .atLeastOnce))
            _ = await forger.flush(timeout: .seconds(5))
            await forger.shutdown()
            // The kitchen node's own readings bring it back: the probe's move to the kitchen is
            // followed, on the kitchen node's evidence.
            let followed = try await Self.probeFollowed(rig, probe, normal: normal, faultEnded: forgedAt, "forged offline")
            let last = try #require(rig.probeDecisions(since: forgedAt).last)
            #expect(last.evidence.contains { $0.node == "kitchen-pi" }, "the kitchen node's readings count again: \(last.evidence.map(\.node))")
            let logged = ((try? String(contentsOfFile: "\(rig.directory)/aggregator.log", encoding: .utf8)) ?? "").contains("node status follows its traffic")
            #expect(logged, "the aggregator says why it counts the node as online")
            await probe.stop()
            print("fault forged-offline: kitchen-pi marked offline by another client; its readings count again, the move to the kitchen followed in \(Self.s(followed)) (without a fault \(Self.s(normal))); readings lost: those of the next second at most")
        }
    }
}

/// The hot-standby fault on its own: the pause is most of its run time, so it runs beside
/// FaultTests' other faults instead of after them.
@Suite(.serialized, .requiresMosquitto) struct StandbyPauseFaultTests {
    /// SIGSTOP of the active aggregator under hot standby; 30 s runs by default, 60 s (past
    /// the broker's keepalive, so its Last Will fires too) under ROOMCAST_FAULTS=1.
    static let pauses: [Double] = FaultTests.extended ? [30, 60] : [30]

    @Test(arguments: StandbyPauseFaultTests.pauses)
    func aPausedActiveAggregatorLeavesTheLeaseToTheStandbyAndPublishesNothingStale(pause: Double) async throws {
        let rig = try await FaultRig.start(refreshInterval: 60, standby: ["agg-a", "agg-b"])
        do {
            _ = try await FaultTests.warmUp(rig)
            let (probe, normal) = try await FaultTests.probeBaseline(rig)
            let active = try #require(rig.leaseHolder, "a lease holder")
            let other = active == "agg-a" ? "agg-b" : "agg-a"
            let stoppedAt = FaultRig.now
            rig.signalAggregator(active, SIGSTOP)
            try await rig.waitFor("\(other) takes the lease", timeout: .seconds(30)) { _ in rig.leaseHolder == other }
            let takenOver = FaultRig.now - stoppedAt
            // The pause itself is the fault being injected, not a wait for something to happen.
            try await Task.sleep(for: .seconds(max(0, pause - takenOver)))
            let resumedAt = FaultRig.now
            rig.signalAggregator(active, SIGCONT)
            // The probe moves back to the kitchen; the standby-turned-active follows it.
            let followed = try await FaultTests.probeFollowed(rig, probe, normal: normal, faultEnded: resumedAt, "SIGSTOP \(Int(pause)) s")
            // The resumed instance has read the broker's backlog once its drain marker comes
            // back, and decides (or stands by) after the reconnect grace: three renewals of the
            // other's lease after the marker span that grace and a renewal period, time in which
            // a wrong take-over or a stale presence would have shown.
            try await rig.waitFor("\(active)'s drain marker after the resume, then three lease renewals by \(other)") { seen in
                guard let marker = seen.first(where: {
                    $0.at >= resumedAt && $0.topic.hasPrefix("roomcast/aggregator/sync/\(active)-")
                }) else { return false }
                return seen.filter { $0.at > marker.at && $0.topic == "roomcast/aggregator/lease" }
                    .compactMap { try? WireFormat.decode(LeaseElection.Lease.self, from: $0.payload) }
                    .filter { $0.holder == other }.count >= 3
            }
            let after = rig.messages.filter { $0.at >= resumedAt }
            let leases = after.filter { $0.topic == "roomcast/aggregator/lease" }.compactMap { try? WireFormat.decode(LeaseElection.Lease.self, from: $0.payload) }
            #expect(!leases.contains { $0.holder == active }, "the resumed instance took the lease back: \(leases.map(\.holder))")
            #expect(rig.leaseHolder == other)
            let stale = after.compactMap(\.presence).filter { $0.ts < resumedAt - 2 }
            #expect(stale.isEmpty, "presence decided before the pause published after it: \(stale.prefix(3).map { "\($0.id.rawValue.suffix(10)) ts \($0.ts)" })")
            let away = FaultTests.wentAway(rig, since: resumedAt)
            #expect(away.isEmpty, "nobody goes away because an aggregator was paused: \(away)")
            let events = after.filter { $0.topic == "roomcast/events" }.map(\.text).filter { !$0.contains(FaultRig.probeID.rawValue) }
            await probe.stop()
            let errors = rig.errorLines()
            await rig.shutdown()
            #expect(errors.isEmpty, "error-level log lines: \(errors.prefix(10))")
            print("fault sigstop-\(Int(pause))s: \(active) stopped; \(other) held the lease after \(FaultTests.s(takenOver)); after SIGCONT: lease writes by \(active) \(leases.filter { $0.holder == active }.count), stale presences \(stale.count), went away \(away.count), other events \(events.count); a move followed in \(FaultTests.s(followed)) (without a fault \(FaultTests.s(normal)))")
        } catch {
            await rig.shutdown()
            throw error
        }
    }
}
