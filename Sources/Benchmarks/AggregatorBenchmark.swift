import Foundation
import RoomcastAggregator
import RoomcastMQTT
import Shared
import Synchronization
import RoomcastCLI

/// The aggregator through a real mosquitto on loopback: sustained readings/s
/// with presence published, reading-to-presence latency of beacons that switch
/// rooms, and the resident memory of an `aggregator run` process at scale.
///
/// Load comes from raw-socket MQTT publishers (QoS 0, packets encoded up front,
/// `ts`/`seq` patched in), so the load generator leaves the CPU to the broker and
/// the aggregator. Losses are reported where they happen: mosquitto's own
/// `$SYS/broker/publish/messages/dropped`, and the aggregator's inbound buffer
/// (`MQTTClient.droppedInbound`; for the `aggregator run` process, its warning log line).
/// The memory run paces at 20,000/s by default: it measures the state of 10,000 × 50, and
/// its readings are encoded as they are sent, which costs the shared CPU more than the
/// throughput run's pre-encoded load.
///
///   roomcast-bench aggregator [--beacons 2000] [--nodes 20] [--publishers 4] [--rate 60000]
///                             [--seconds 10] [--movers 40] [--memory-beacons 10000] [--memory-nodes 50]
///                             [--memory-rate 20000] [--memory-rounds 2] [--skip-memory] [--core-only]
enum AggregatorBenchmark {
    struct Options {
        var beacons = 2000
        var nodes = 20
        var publishers = 4
        var rate = 60_000.0
        var seconds = 10.0
        var movers = 40
        var memoryBeacons = 10_000
        var memoryNodes = 50
        var memoryRate = 20_000.0
        var memoryRounds = 2
        var skipMemory = false
        var coreOnly = false
        /// Offered rates to step through until readings are lost (the ceiling), instead of one run.
        var ceiling: [Double] = []
        /// Keep the second core busy (a `yes > /dev/null` process) during the throughput run.
        var busyCore = false
        /// Print every switch's latencies, not only the percentiles.
        var listLatencies = false
        var skipThroughput = false

        static let beacons = Option<Count>("beacons", value: "n", help: "Beacons of the throughput run.", default: 2000)
        static let nodes = Option<Count>("nodes", value: "n", help: "Nodes of the throughput run (at least 2).", default: 20)
        static let publishers = Option<Count>("publishers", value: "n", help: "Raw-socket MQTT publishers.", default: 4)
        static let rate = Option<Positive>("rate", value: "n", help: "Readings a second offered.", default: 60_000)
        static let seconds = Option<Positive>("seconds", value: "s", help: "Length of the throughput run.", default: 10)
        static let movers = Option<Count>("movers", value: "n", help: "Beacons that switch rooms (latency).", default: 40)
        static let memoryBeacons = Option<Count>("memory-beacons", value: "n", help: "Beacons of the memory run.", default: 10_000)
        static let memoryNodes = Option<Count>("memory-nodes", value: "n", help: "Nodes of the memory run (at least 2).", default: 50)
        static let memoryRate = Option<Positive>("memory-rate", value: "n", help: "Readings a second of the memory run.", default: 20_000)
        static let memoryRounds = Option<Count>("memory-rounds", value: "n", help: "Rounds of readings of the memory run.", default: 2)
        static let skipMemory = Flag("skip-memory", help: "Leave out the memory run.")
        static let coreOnly = Flag("core-only", help: "Only the aggregator core, without a broker.")
        static let busyCore = Flag("busy-core", help: "Keep the second core busy during the throughput run.")
        static let latencies = Flag("latencies", help: "List every switch's fusion and service latency.")
        static let skipThroughput = Flag("skip-throughput", help: "Leave out the throughput run.")
        static let ceiling = Option<String?>("ceiling", value: "rates",
            help: "Offered rates to step through until readings are lost, comma-separated (the ceiling).")

        static let all: [any OptionDeclaration] = [beacons, nodes, publishers, rate, seconds, movers, memoryBeacons, memoryNodes,
                                                   memoryRate, memoryRounds, skipMemory, coreOnly, busyCore,
                                                   skipThroughput, ceiling, latencies]

        init(_ command: ParsedCommand) throws {
            beacons = try command[Self.beacons].value
            nodes = max(2, try command[Self.nodes].value)
            publishers = try command[Self.publishers].value
            rate = try command[Self.rate].value
            seconds = try command[Self.seconds].value
            movers = try command[Self.movers].value
            memoryBeacons = try command[Self.memoryBeacons].value
            memoryNodes = max(2, try command[Self.memoryNodes].value)
            memoryRate = try command[Self.memoryRate].value
            memoryRounds = try command[Self.memoryRounds].value
            skipMemory = command[Self.skipMemory]
            coreOnly = command[Self.coreOnly]
            busyCore = command[Self.busyCore]
            listLatencies = command[Self.latencies]
            skipThroughput = command[Self.skipThroughput]
            if let rates = command[Self.ceiling] {
                ceiling = try rates.split(separator: ",").map {
                    guard let v = Double($0), v > 0, v.isFinite else { throw command.usageError("--ceiling takes positive rates, not '\($0)'") }
                    return v
                }
            }
        }
    }

    static let spec = CommandSpec("aggregator", abstract: "readings/s, switch latency and memory through a real mosquitto",
                                  options: Options.all, run: benchmark(run))

    enum BenchError: Error, CustomStringConvertible {
        case usage(String)
        case setup(String)
        var description: String {
            switch self {
            case .usage(let m): "usage: \(m)"
            case .setup(let m): m
            }
        }
    }

    static func run(_ command: ParsedCommand) throws {
        let options = try Options(command)
        try awaitResult { try await runAsync(options) }
    }

    static func runAsync(_ o: Options) async throws {
        var rows: [(String, String)] = try measureCore(o)
        if !o.coreOnly {
            let broker = try Broker.start()
            defer { broker.stop() }
            print("mosquitto \(MQTTClient.libraryVersion) on 127.0.0.1:\(broker.port) — \(Broker.tuning.joined(separator: ", "))")
            var busy: Process?
            if o.busyCore {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/usr/bin/yes")
                p.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
                try p.run()
                busy = p
                print("busy core: /usr/bin/yes > /dev/null, pid \(p.processIdentifier)")
            }
            defer { if let busy { kill(busy.processIdentifier, SIGKILL); busy.waitUntilExit() } }
            if o.skipThroughput {
            } else if o.ceiling.isEmpty {
                rows += try await measureThroughput(o, port: broker.port, brokerPID: broker.process.processIdentifier).rows
            } else {
                rows += try await searchCeiling(o, broker: broker)
            }
            if !o.skipMemory {
                rows += try await measureMemory(o, port: broker.port)
            }
        }
        let width = rows.map(\.0.count).max() ?? 0
        print("\n| measure | value |\n|---|---|")
        for (k, v) in rows { print("| \(k.padding(toLength: width, withPad: " ", startingAt: 0)) | \(v) |") }
    }

    /// Steps through `--ceiling`'s rates until a step loses readings, and says what bounded the
    /// search: the rate where loss started, or, when the publishers could not offer what they were
    /// asked (the load generator and the broker share the machine with the aggregator), the most
    /// they offered, with nothing lost up to it, and where the CPU went meanwhile.
    static func searchCeiling(_ o: Options, broker: Broker) async throws -> [(String, String)] {
        var rows: [(String, String)] = []
        var lossAt: ThroughputSummary?
        var clean: [ThroughputSummary] = []
        var generatorBound = false
        for rate in o.ceiling {
            var step = o
            step.rate = rate
            let (stepRows, s) = try await measureThroughput(step, port: broker.port, brokerPID: broker.process.processIdentifier)
            let p99 = stepRows.first { $0.0.hasPrefix("room switch") }?.1 ?? "n/a"
            rows.append(("ceiling step: asked \(s.asked)/s", "offered \(s.offered)/s (\(100 * s.offered / max(1, s.asked)) % of asked), accepted \(s.accepted)/s, lost \(s.lost) (mosquitto \(s.brokerDropped), inbound buffer \(s.inboundDropped)); switch p50 / p99 \(p99); CPU: \(s.cpuLine)"))
            if s.lost > 0 {
                lossAt = s
                break
            }
            // Asked for more, offered no more than the step before (5 %): the generator is the limit,
            // and higher steps would only repeat it.
            let before = clean.last
            clean.append(s)
            if let before, s.asked > before.asked, Double(s.offered) < 1.05 * Double(before.offered),
               Double(s.offered) < 0.9 * Double(s.asked) {
                generatorBound = true
                break
            }
        }
        let highest = clean.max { $0.offered < $1.offered }
        let verdict: String
        if let lossAt {
            verdict = "loss started at \(lossAt.offered)/s offered (asked \(lossAt.asked)/s): \(lossAt.lost) lost"
                + (highest.map { "; nothing lost up to \($0.offered)/s offered" } ?? "; the first step already lost readings")
        } else if let highest, generatorBound || Double(highest.offered) < 0.9 * Double(highest.asked) {
            verdict = "not found: generator/broker bound at \(highest.offered)/s (asked for \(highest.asked)/s; \(highest.cpuLine)), no loss up to \(highest.offered)/s"
        } else if let highest {
            verdict = "not found: no loss up to \(highest.offered)/s offered, the highest step; ask for more"
        } else {
            verdict = "no step ran"
        }
        rows.append(("ceiling", verdict))
        return rows
    }

    // MARK: the decision path alone (no broker), for comparison

    struct LoadMissesTheDecisionPath: Error, CustomStringConvertible {
        var placed: Int
        var beacons: Int
        var description: String { "the core placed \(placed) of \(beacons) beacons: the load does not reach the decision path" }
    }

    static func measureCore(_ o: Options) throws -> [(String, String)] {
        let topics = Topics()
        let nodes = (0..<o.nodes).map { "node-\($0)" }
        let site = SiteModel(rooms: nodes.indices.map { .init(name: "room-\($0)", floor: $0 % 3) },
                             nodes: nodes.indices.map { .init(name: nodes[$0], room: "room-\($0)") })
        var config = AggregatorConfig(site: site, discovery: .init(enabled: false), output: .init(refreshIntervalS: 0))
        config.fusion.learnCalibration = false
        var core = config.makeCore()
        // Millisecond precision, as the agent stamps readings (WireFormat.milliseconds).
        let start = WireFormat.milliseconds(Date().timeIntervalSince1970)
        // Every node hears every beacon once per round, each reading stamped with the virtual time
        // it is handled at and a fresh sequence number, as the agents publish them: the rounds
        // span 10 s, past the first room's wait, so beacons are placed and presence goes out.
        let rounds = 5, perRound = o.beacons * o.nodes
        let virtualTime = { (i: Int) in WireFormat.milliseconds(start + 10 * Double(i) / Double(rounds * perRound)) }
        var messages: [(String, [UInt8])] = []
        var ids: [BeaconID] = []
        var times: [Double] = []
        for round in 0..<rounds {
            for b in 0..<o.beacons {
                let id = BeaconID.iBeacon(uuid: loadUUID, major: 0, minor: UInt16(b % 60000))
                for n in 0..<o.nodes {
                    let t = virtualTime(messages.count)
                    var r = reading(id, node: nodes[n], rssi: n == b % o.nodes ? -55 : -70 - Double((b + n) % 15), ts: t)
                    r.seq = UInt64(round + 1)
                    messages.append((topics.nodeBeacon(nodes[n], id), try WireFormat.encode(r)))
                    ids.append(id)
                    times.append(t)
                }
            }
        }
        var decodeOnly = 0
        let d0 = Date().timeIntervalSince1970
        for (_, payload) in messages { if (try? WireFormat.decode(BeaconReading.self, from: payload)) != nil { decodeOnly += 1 } }
        let d1 = Date().timeIntervalSince1970
        let f0 = Date().timeIntervalSince1970
        // With the topic's id, as the intake calls it (an id equal to the topic's is not validated again).
        for (k, (_, payload)) in messages.enumerated() where (try? BeaconReading.decodeWire(payload, expectedID: ids[k])) != nil {
            decodeOnly += 1
        }
        let f1 = Date().timeIntervalSince1970
        var published = 0
        let c0 = Date().timeIntervalSince1970
        for (i, (topic, payload)) in messages.enumerated() {
            published += try core.handle(topic: topic, payload: payload, now: times[i]).messages.count
        }
        let c1 = Date().timeIntervalSince1970
        let n = Double(messages.count)
        let placed = core.currentDecisions().filter { $0.room != nil }.count
        print("core: \(messages.count) readings; Codable decode \(Int(n / (d1 - d0)))/s; decodeWire \(Int(n / (f1 - f0)))/s; AggregatorCore.handle \(Int(n / (c1 - c0)))/s; \(published) messages out; \(placed) of \(o.beacons) beacons placed")
        guard placed == o.beacons else {
            // A run that places nothing times decoding and empty ticks, not the decision path.
            throw LoadMissesTheDecisionPath(placed: placed, beacons: o.beacons)
        }
        return [
            ("reading decode with JSONDecoder (WireFormat.decode), one core", "\(Int(n / (d1 - d0)))/s"),
            ("reading decode with BeaconReading.decodeWire, one core", "\(Int(n / (f1 - f0)))/s"),
            ("AggregatorCore.handle (decode + checks + fusion + output), one core", "\(Int(n / (c1 - c0)))/s"),
            ("beacons placed by the core", "\(placed) of \(o.beacons)"),
        ]
    }

    // MARK: throughput and latency (the service in this process, same code as `aggregator run`)

    struct ThroughputSummary {
        var offered: Int
        var accepted: Int
        var lost: Int
        var brokerDropped: Int
        var inboundDropped: Int
        /// The rate the publishers were asked for.
        var asked: Int
        /// Where the CPU went while the load ran: mosquitto, this process (publishers and aggregator), the rest.
        var cpu: CPUShare.Interval

        /// The step's CPU as one line: who had how much of the machine.
        var cpuLine: String {
            let p = cpu.processes
            return String(format: "mosquitto %.0f %%, this process %.0f %%, everything else %.0f %% of one core; machine %.0f %% of %d cores busy",
                          p.first ?? 0, p.count > 1 ? p[1] : 0, cpu.others, cpu.machineBusy, cpu.cores)
        }
    }

    static func measureThroughput(_ o: Options, port: Int, brokerPID: pid_t) async throws -> (rows: [(String, String)], summary: ThroughputSummary) {
        let topics = Topics()
        let nodes = (0..<o.nodes).map { "node-\($0)" }
        // Two probe nodes in rooms of their own carry the movers (room switches, then both offline).
        var site = SiteModel(rooms: nodes.indices.map { .init(name: "room-\($0)", floor: $0 % 3) },
                             nodes: nodes.indices.map { .init(name: nodes[$0], room: "room-\($0)") })
        site.rooms += [.init(name: "probe-room-a"), .init(name: "probe-room-b")]
        site.nodes += [.init(name: "probe-a", room: "probe-room-a"), .init(name: "probe-b", room: "probe-room-b")]
        var config = AggregatorConfig(site: site, discovery: .init(enabled: false), output: .init(refreshIntervalS: 0))
        config.fusion.learnCalibration = false
        let clock = SystemTimeSource()
        let runtime = AggregatorRuntime(core: config.makeCore(), election: nil, refreshInterval: .infinity,
                                        startedAt: clock.now(), logger: .silent)
        let aggregatorClient = try client(port: port, id: "bench-aggregator", inbound: AggregatorCLI.inboundBuffer, batched: true)
        let service = AggregatorService(runtime: runtime, mqtt: aggregatorClient, topics: topics, discoveryFilter: nil,
                                        clock: clock, logger: .silent)
        let serviceTask = Task { await service.run() }
        try await aggregatorClient.waitUntilConnected(timeout: .seconds(10))

        // Presence watcher: counts presence messages and timestamps the movers' room changes.
        let watcher = try client(port: port, id: "bench-watch", inbound: 1 << 17)
        let presenceCount = Atomic<Int>(0)
        let arrivals = Mutex<[String: [Double]]>([:])  // "<mover>/<room>" → arrival times
        let decidedAt = Mutex<[String: [Double]]>([:])  // the same presence messages' decision times (ts)
        let movers = (0..<o.movers).map { BeaconID.iBeacon(uuid: moverUUID, major: 1, minor: UInt16($0)) }
        let moverTopics = Set(movers.map { topics.presence($0) })
        let watching = Task {
            for await m in watcher.messages {
                presenceCount.add(1, ordering: .relaxed)
                guard moverTopics.contains(m.topic),
                      let d = try? WireFormat.decode(PresenceDecision.self, from: m.payload), let room = d.room else { continue }
                let now = Date().timeIntervalSince1970
                // Fusion's own decision time beside it (the tick that switched, on the same clock).
                decidedAt.withLock { $0["\(d.id.rawValue)/\(room)", default: []].append(d.ts) }
                arrivals.withLock { $0["\(d.id.rawValue)/\(room)", default: []].append(now) }
            }
        }
        watcher.start()
        try await watcher.subscribe(topics.allPresence, qos: .atMostOnce)

        // Load: every beacon heard by every node, loudest at one node; payloads encoded up front.
        print("throughput: \(o.beacons) beacons × \(o.nodes) nodes, \(o.publishers) publishers at QoS 0, offered \(Int(o.rate))/s")
        var load = Array(repeating: PreEncodedLoad(), count: o.publishers)
        for b in 0..<o.beacons {
            let id = BeaconID.iBeacon(uuid: loadUUID, major: UInt16(b / 60000), minor: UInt16(b % 60000))
            for n in 0..<o.nodes {
                let rssi = n == b % o.nodes ? -55.0 : -70.0 - Double((b + n) % 15)
                let r = reading(id, node: nodes[n], rssi: rssi, ts: 0)
                try load[(b * o.nodes + n) % o.publishers].append(topic: topics.nodeBeacon(nodes[n], id), reading: r)
            }
        }
        let publishers = try (0..<o.publishers).map { try RawMQTTPublisher(port: port, clientID: "bench-pub-\($0)-\(getpid())") }
        let brokerStats = try await BrokerStats.start(port: port)

        let acceptedBefore = await runtime.accepted
        let droppedBefore = aggregatorClient.droppedInbound
        let receivedBefore = aggregatorClient.receivedInbound
        let sent = Atomic<Int>(0)
        let failed = Atomic<Int>(0)
        let stopLoad = Atomic<Bool>(false)
        let perPublisher = o.rate / Double(o.publishers)
        let cpuBefore = CPUShare.sample([brokerPID, getpid()])
        let t0 = Date().timeIntervalSince1970
        let threads = (0..<o.publishers).map { p in
            nonisolated(unsafe) var batch = load[p]
            let c = publishers[p]
            return Thread {
                var n = 0
                var buffer: [UInt8] = []
                buffer.reserveCapacity(1 << 17)
                while !stopLoad.load(ordering: .relaxed) {
                    let now = Date().timeIntervalSince1970
                    // Paced: what is due goes out in one write (at most ~256 readings), then a millisecond's rest.
                    let due = min(256, Int((now - t0) * perPublisher) - n)
                    if due > 0 {
                        buffer.removeAll(keepingCapacity: true)
                        batch.emit(due, into: &buffer, now: now, seq: PreEncodedLoad.seqPlaceholder + UInt64((now - t0) * 1000))
                        do { try c.send(buffer) } catch { failed.add(due, ordering: .relaxed); break }
                        sent.add(due, ordering: .relaxed)
                        n += due
                    }
                    if due < 256 { usleep(1000) }
                }
            }
        }
        for t in threads { t.start() }

        // Movers, heard by the two probe nodes at 10 Hz: each switches from probe-a to probe-b
        // once, staggered over the run (room-switch latency: fusion's hysteresis included).
        // Then both probe nodes go offline: the time until the service takes each as offline is
        // the status path's latency. (Their movers are held where they were, marked as such, only
        // where they would have gone away: the away timeout later.)
        let moverClient = try client(port: port, id: "bench-movers", inbound: 16)
        moverClient.start()
        try await moverClient.waitUntilConnected(timeout: .seconds(10))
        let moverSent = Atomic<Int>(0)
        // Movers switch once the load has run a while: the first seconds carry the start-up
        // transient (every beacon's first decision published at once), which is not the steady state.
        let settle = min(5.0, o.seconds / 3)
        let stagger = max(0.01, (o.seconds - settle) / Double(max(1, o.movers)))
        let flipAt: [Double] = movers.indices.map { t0 + settle + Double($0) * stagger }
        var flipped = Array(repeating: false, count: movers.count)
        var flipTimes: [String: Double] = [:]
        var seq: UInt64 = 0
        let giveUp = t0 + o.seconds + 20
        func sendMovers(now: Double) throws {
            seq += 1
            for (m, id) in movers.enumerated() {
                let (ra, rb) = flipped[m] ? (-85.0, -50.0) : (-50.0, -85.0)
                for (node, rssi) in [("probe-a", ra), ("probe-b", rb)] {
                    var r = reading(id, node: node, rssi: rssi, ts: now)
                    r.seq = seq
                    try? moverClient.publish(MQTTMessage(topic: topics.nodeBeacon(node, id), payload: try WireFormat.encode(r)))
                    moverSent.add(1, ordering: .relaxed)
                }
            }
        }
        while Date().timeIntervalSince1970 < giveUp {
            let now = Date().timeIntervalSince1970
            for m in movers.indices where !flipped[m] && now >= flipAt[m] {
                flipped[m] = true
                flipTimes["\(movers[m].rawValue)/probe-room-b"] = now
            }
            let allSwitched = flipped.allSatisfy { $0 }
                && arrivals.withLock { a in flipTimes.allSatisfy { key, t in Self.firstAfter(a[key], t) != nil } }
            if allSwitched && now - t0 >= o.seconds { break }
            try sendMovers(now: now)
            try await Task.sleep(for: .milliseconds(100))
        }
        let offlineStart = Date().timeIntervalSince1970
        for probe in ["probe-a", "probe-b"] {
            try moverClient.publish(MQTTMessage(topic: topics.nodeStatus(probe), string: "offline", qos: .atLeastOnce))
        }
        var offline: [Double] = []  // ms, per probe node
        var seenOffline: Set<String> = []
        while Date().timeIntervalSince1970 - offlineStart < 10 && seenOffline.count < 2 {
            let known = await runtime.offlineNodes
            let now = Date().timeIntervalSince1970
            for probe in ["probe-a", "probe-b"] where known.contains(probe) && seenOffline.insert(probe).inserted {
                offline.append((now - offlineStart) * 1000)
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        offline.sort()
        stopLoad.store(true, ordering: .relaxed)
        for t in threads { while !t.isFinished { try await Task.sleep(for: .milliseconds(10)) } }
        let t1 = Date().timeIntervalSince1970
        let cpu = CPUShare.between(cpuBefore, CPUShare.sample([brokerPID, getpid()]))
        // Let the aggregator drain what the broker still holds (bounded wait).
        var acceptedAfter = await runtime.accepted
        for _ in 0..<50 {
            try await Task.sleep(for: .milliseconds(100))
            let a = await runtime.accepted
            if a == acceptedAfter { break }
            acceptedAfter = a
        }
        let drained = Date().timeIntervalSince1970 - 0.1

        let accepted = Int(acceptedAfter - acceptedBefore)
        let dropped = aggregatorClient.droppedInbound - droppedBefore
        let received = aggregatorClient.receivedInbound - receivedBefore
        let sentCount = sent.load(ordering: .relaxed) + moverSent.load(ordering: .relaxed)
        let brokerDropped = await brokerStats.droppedSinceStart()
        let switching = arrivals.withLock { a in
            flipTimes.compactMap { key, t in Self.firstAfter(a[key], t).map { ($0 - t) * 1000 } }.sorted()
        }
        // Per switch: fusion's latency (first reading in the new room → the tick that switched) and
        // what the service adds after it (that tick → the presence message at a subscriber).
        let (fusionSwitch, serviceAdded) = arrivals.withLock { a in
            decidedAt.withLock { d in
                let pairs = flipTimes.compactMap { key, t -> (Double, Double)? in
                    guard let i = a[key]?.firstIndex(where: { $0 >= t }), let decided = d[key], i < decided.count else { return nil }
                    return ((decided[i] - t) * 1000, (a[key]![i] - decided[i]) * 1000)
                }
                return (pairs.map(\.0).sorted(), pairs.map(\.1).sorted())
            }
        }
        if o.listLatencies {
            let rows = flipTimes.sorted { $0.value < $1.value }.map { key, t in
                arrivals.withLock { a in decidedAt.withLock { d in
                    let i = a[key]?.firstIndex(where: { $0 >= t })
                    return String(format: "+%.1fs fusion %.0f service %.0f", t - t0, i.map { (d[key]![$0] - t) * 1000 } ?? -1,
                                  i.map { (a[key]![$0] - d[key]![$0]) * 1000 } ?? -1)
                } }
            }
            print("switches (flip time after start, ms):\n  " + rows.joined(separator: "\n  "))
        }
        let rate = Double(accepted) / (drained - t0)
        print("sent \(sentCount) in \(String(format: "%.1f", t1 - t0)) s; aggregator received \(received), dropped \(dropped) in its inbound buffer, accepted \(accepted); broker dropped \(brokerDropped.map(String.init) ?? "n/a"); presence messages \(presenceCount.load(ordering: .relaxed))")

        for p in publishers { p.disconnect() }
        await brokerStats.stop()
        await moverClient.shutdown(timeout: .seconds(1))
        service.stop()
        await serviceTask.value
        watching.cancel()
        await watcher.shutdown(timeout: .seconds(1))

        func ms(_ v: Double?) -> String { v.map { String(format: "%.0f ms", $0) } ?? "n/a" }
        let lost = max(0, sentCount - failed.load(ordering: .relaxed) - accepted)
        let summary = ThroughputSummary(offered: Int(Double(sentCount) / (t1 - t0)), accepted: Int(rate), lost: lost,
                                        brokerDropped: brokerDropped ?? 0, inboundDropped: dropped, asked: Int(o.rate), cpu: cpu)
        return (rows: [
            ("throughput run", "\(o.beacons) beacons × \(o.nodes) nodes + \(o.movers) movers, \(o.publishers) publishers, QoS 0, \(String(format: "%.0f", t1 - t0)) s"),
            ("offered readings/s", "\(Int(Double(sentCount) / (t1 - t0)))"),
            ("sustained readings/s accepted by the aggregator", "\(Int(rate))"),
            ("readings lost in total (not accepted)", "\(max(0, sentCount - failed.load(ordering: .relaxed) - accepted)) of \(sentCount)"),
            ("  dropped by mosquitto ($SYS publish/messages/dropped)", brokerDropped.map(String.init) ?? "n/a"),
            ("  dropped in the aggregator's inbound buffer", "\(dropped)"),
            ("presence messages published", "\(presenceCount.load(ordering: .relaxed))"),
            ("CPU while the load ran", summary.cpuLine),
            ("room switch latency p50 / p99 (first reading → presence)", "\(ms(percentile(switching, 0.5))) / \(ms(percentile(switching, 0.99))) (\(switching.count) of \(movers.count))"),
            ("  of which fusion: first reading → the tick that switched, p50 / p99", "\(ms(percentile(fusionSwitch, 0.5))) / \(ms(percentile(fusionSwitch, 0.99)))"),
            ("  of which the service: that tick → presence at a subscriber, p50 / p99", "\(ms(percentile(serviceAdded, 0.5))) / \(ms(percentile(serviceAdded, 0.99))) (max \(ms(serviceAdded.last)))"),
            ("nodes offline (status message) → taken as offline, each", "\(offline.map { ms($0) }.joined(separator: ", ")) (\(offline.count) of 2)"),
        ], summary: summary)
    }

    // MARK: memory of a real `aggregator run` process

    static func measureMemory(_ o: Options, port: Int) async throws -> [(String, String)] {
        let bin = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let exe = bin.appendingPathComponent("aggregator").path
        guard FileManager.default.isExecutableFile(atPath: exe) else { throw BenchError.setup("no aggregator executable next to roomcast-bench (\(exe)); build it first") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let nodes = (0..<o.memoryNodes).map { "node-\($0)" }
        var yaml = "mqtt:\n  broker: mqtt://127.0.0.1:\(port)\noutput:\n  refresh_interval_s: 0\nlog:\n  level: warning\nrooms:\n"
        for i in nodes.indices { yaml += "  - {name: room-\(i), floor: \(i % 4)}\n" }
        yaml += "nodes:\n"
        for (i, n) in nodes.enumerated() { yaml += "  - {name: \(n), room: room-\(i)}\n" }
        let configPath = dir.appendingPathComponent("site.yaml").path
        try yaml.write(toFile: configPath, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: exe)
        process.arguments = ["run", "--config", configPath, "--instance", "bench"]
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        let log = dir.appendingPathComponent("aggregator.log").path
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        defer { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        let pid = process.processIdentifier

        let topics = Topics()
        let watcher = try client(port: port, id: "bench-mem-watch", inbound: 1 << 15)
        let decided = Mutex<Set<String>>([])
        let ours = topics.presence(BeaconID.iBeacon(uuid: memoryUUID, major: 0, minor: 0)).dropLast(4)
        let watching = Task {
            for await m in watcher.messages where m.topic.hasPrefix(ours) { _ = decided.withLock { $0.insert(m.topic) } }
        }
        watcher.start()
        try await watcher.subscribe(topics.allPresence, qos: .atMostOnce)
        try await waitFor(seconds: 10) { (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) != nil }
        try await Task.sleep(for: .seconds(1))
        let idle = memory(pid)
        let cpuBefore = cpuSeconds(pid)

        print("memory: \(o.memoryBeacons) beacons × \(o.memoryNodes) nodes, \(o.memoryRounds) rounds of one reading per beacon per node, paced at \(Int(o.memoryRate))/s")
        let publishers = try (0..<o.publishers).map { try RawMQTTPublisher(port: port, clientID: "bench-mem-pub-\($0)-\(getpid())") }
        let brokerStats = try await BrokerStats.start(port: port)
        let total = o.memoryBeacons * o.memoryNodes * o.memoryRounds
        let t0 = Date().timeIntervalSince1970
        let threads = (0..<o.publishers).map { p in
            let c = publishers[p]
            return Thread {
                var k = p
                var buffer: [UInt8] = []
                var seq: UInt64 = 1
                while k < total {
                    // Paced in batches: what is due (at most 256 readings) goes out in one write.
                    let elapsed = Date().timeIntervalSince1970 - t0
                    let due = Double(k) / o.memoryRate
                    if due > elapsed { usleep(useconds_t(min(0.01, due - elapsed) * 1_000_000)) }
                    buffer.removeAll(keepingCapacity: true)
                    let now = Date().timeIntervalSince1970
                    var n = 0
                    while k < total && n < 256 && Double(k) / o.memoryRate <= now - t0 + 0.001 {
                        let b = (k / o.memoryNodes) % o.memoryBeacons, node = k % o.memoryNodes
                        let id = BeaconID.iBeacon(uuid: memoryUUID, major: UInt16(b / 60000), minor: UInt16(b % 60000))
                        let rssi = node == b % o.memoryNodes ? -55.0 : -70.0 - Double((b + node) % 15)
                        var r = reading(id, node: nodes[node], rssi: rssi, ts: WireFormat.milliseconds(now))
                        r.seq = seq
                        buffer += RawMQTTPublisher.publishPacket(topic: topics.nodeBeacon(nodes[node], id), payload: r.fastJSON())
                        k += o.publishers
                        n += 1
                    }
                    seq += 1
                    if !buffer.isEmpty { try? c.send(buffer) }
                }
            }
        }
        for t in threads { t.start() }
        for t in threads { while !t.isFinished { try await Task.sleep(for: .milliseconds(20)) } }
        let published = Date().timeIntervalSince1970 - t0
        try? await waitFor(seconds: 30) { decided.withLock { $0.count } >= o.memoryBeacons }
        let allDecided = Date().timeIntervalSince1970 - t0
        let loaded = memory(pid)
        let cpuUsed = cpuSeconds(pid).flatMap { after in cpuBefore.map { after - $0 } }
        let count = decided.withLock { $0.count }
        // Which beacons got no presence, by their place in the sending order (beacon b's readings
        // go out at b/beacons of each round), and whether the watcher itself lost messages.
        let missing = decided.withLock { seen in
            (0..<o.memoryBeacons).filter { b in
                !seen.contains(topics.presence(BeaconID.iBeacon(uuid: memoryUUID, major: UInt16(b / 60000), minor: UInt16(b % 60000))))
            }
        }
        let watcherDropped = watcher.droppedInbound
        for p in publishers { p.disconnect() }
        let brokerDropped = await brokerStats.droppedSinceStart()
        await brokerStats.stop()
        let aggregatorDropped = Self.lastDroppedInbound(logAt: log)
        watching.cancel()
        await watcher.shutdown(timeout: .seconds(1))
        try? FileManager.default.removeItem(at: dir)
        return [
            ("memory run", "\(o.memoryBeacons) beacons × \(o.memoryNodes) nodes × \(o.memoryRounds) rounds = \(total) readings in \(String(format: "%.1f", published)) s"),
            ("  dropped by mosquitto / in the aggregator's inbound buffer", "\(brokerDropped.map(String.init) ?? "n/a") / \(aggregatorDropped)"),
            ("beacons with presence published", "\(count) of \(o.memoryBeacons) (counted until \(String(format: "%.0f", allDecided)) s after the first reading)"),
            ("  beacons without (index in sending order), watcher's own drops", "\(missing.count): \(missing.prefix(12).map(String.init).joined(separator: ", "))\(missing.count > 12 ? ", …" : ""); \(watcherDropped)"),
            ("aggregator process CPU over the run (utime + stime)", cpuUsed.map {
                String(format: "%.2f s (ingest, fusion ticks over every beacon, output): %.0f readings per CPU second", $0, Double(total) / max($0, 1e-9))
            } ?? "n/a"),
            ("aggregator RSS idle (VmRSS)", idle.rss),
            ("aggregator RSS loaded (VmRSS)", loaded.rss),
            ("aggregator peak RSS (VmHWM)", loaded.hwm),
        ]
    }

    // MARK: helpers

    static let loadUUID = UUID(uuidString: "5A4B3C2D-0000-4000-8000-00000000BE0C")!
    static let memoryUUID = UUID(uuidString: "5A4B3C2D-0000-4000-8000-00000000AE0C")!
    static let moverUUID = UUID(uuidString: "5A4B3C2D-0000-4000-8000-0000000000F1")!

    static func client(port: Int, id: String, inbound: Int, batched: Bool = false) throws -> MQTTClient {
        try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: port, clientID: "\(id)-\(getpid())", inboundBufferSize: inbound,
            outboundQueueLimit: 65_535, batchInbound: batched), logger: .silent)
    }

    static func reading(_ id: BeaconID, node: String, rssi: Double, ts: Double) -> BeaconReading {
        // Rounded as the agent rounds them (AgentCore.makeReading): 0.1 dB, centimetres.
        var r = BeaconReading(id: id, node: node, ts: ts, seq: 1, rssi: Int(rssi), rssiFiltered: (rssi * 10).rounded() / 10, power: -59,
                              distance: (pow(10, (-59 - rssi) / 20) * 100).rounded() / 100, proximity: rssi > -65 ? .near : .far,
                              kind: .iBeacon, mac: "c0:00:00:00:00:01")
        r.samples = 5
        return r
    }

    /// The aggregator's latest count of inbound messages it dropped, from its warning log line (0 when none).
    static func lastDroppedInbound(logAt path: String) -> Int {
        let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
        var last = 0
        for line in text.split(separator: "\n") {
            guard let r = line.range(of: "mqtt.dropped_inbound") else { continue }
            let digits = line[r.upperBound...].drop { !$0.isNumber }.prefix { $0.isNumber }
            last = Int(digits) ?? last
        }
        return last
    }

    static func firstAfter(_ times: [Double]?, _ t: Double) -> Double? {
        times?.first { $0 >= t }
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }

    static func waitFor(seconds: Double, _ condition: () -> Bool) async throws {
        let deadline = Date().timeIntervalSince1970 + seconds
        while !condition() {
            if Date().timeIntervalSince1970 > deadline { throw BenchError.setup("timed out after \(seconds) s") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// User + system CPU seconds of a running process, from /proc/<pid>/stat.
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func memory(_ pid: Int32) -> (rss: String, hwm: String) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> String {
            let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
            let kb = line.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") }
            return kb.map { String(format: "%.1f MiB", Double($0) / 1024) } ?? "n/a"
        }
        return (field("VmRSS"), field("VmHWM"))
    }

    /// A private mosquitto for the benchmark, tuned so a fast loopback run is not cut short.
    struct Broker {
        static let tuning = ["max_queued_messages 1000000", "max_inflight_messages 0", "max_queued_bytes 0",
                             "persistence false", "log_dest none", "sys_interval 1"]
        let port: Int
        let process: Process
        let dir: URL

        static func start() throws -> Broker {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-bench-broker-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            for _ in 0..<3 {
                let port = Int.random(in: 20000..<60000)
                var conf = ["listener \(port) 127.0.0.1", "allow_anonymous true"] + tuning
                if geteuid() == 0 { conf.append("user root") }
                let path = dir.appendingPathComponent("mosquitto.conf").path
                try (conf.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
                p.arguments = ["-c", path]
                try p.run()
                for _ in 0..<100 where p.isRunning {
                    if acceptsConnections(port) { return Broker(port: port, process: p, dir: dir) }
                    usleep(20_000)
                }
                kill(p.processIdentifier, SIGKILL)
                p.waitUntilExit()
            }
            throw BenchError.setup("mosquitto did not start (is it installed at /usr/sbin/mosquitto?)")
        }

        func stop() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: dir)
        }

        static func acceptsConnections(_ port: Int) -> Bool {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return false }
            defer { close(fd) }
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = UInt16(port).bigEndian
            addr.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            return withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            } == 0
        }
    }
}
