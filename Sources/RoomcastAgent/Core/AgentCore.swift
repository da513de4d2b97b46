import RoomcastAdvertising
import RoomcastHCI
import RoomcastLogging
import Shared

/// The edge agent's whole decision path without I/O: advertising report →
/// identity → ranging → publish policy → messages, plus region monitoring and
/// telemetry. Driven by (time, report); the time is the radio's clock, which
/// for a replay is the capture's, so a replay is deterministic.
///
/// Per-beacon state lives in one bounded `BeaconTable` (`max_tracked_beacons`): when
/// it is full, a new beacon takes the place of the least recently heard one, beacons heard
/// only once before other unlisted ones, before region members; known beacons and IRK phones
/// only to another of theirs (a stranger finding only those is not tracked). An evicted beacon
/// heard again starts afresh, as a beacon first heard: new filter, first reading.
public struct AgentCore: Sendable {
    public let settings: AgentSettings
    public let decoder: AdvertisementDecoder
    public private(set) var beacons: BeaconTable
    public let policy: PublishPolicy
    public private(set) var regions: RegionTracker
    public private(set) var sequence: SequenceNumber
    public let outputs: CompatibilityOutputs
    public private(set) var stats = Stats()
    public private(set) var deliveryCheck = DeliveryCheck()
    /// Every advertisement is decoded in these (their arrays allocated once, not per advertisement).
    private var decodeBuffers = AdvertisementDecoder.Buffers()
    /// The Eddystone-UID beacon each address last advertised. An Eddystone beacon sends its
    /// telemetry (TLM) in advertisements of its own, without an id, from the address of its
    /// other frames: this is how a TLM frame's telemetry reaches that beacon's readings. Pruned
    /// to the beacons still tracked when it reaches twice the table's capacity, so a flood of
    /// ids costs one pass per capacity's worth of new addresses.
    private var eddystoneAtAddress: [UInt64: BeaconID] = [:]
    /// Addresses that change their beacon id (`UnstableIDWatch`): their new ids are not tracked.
    private var unstableIDs: UnstableIDWatch
    /// Seconds a TLM frame's telemetry goes with the readings after it. Beacons send one every
    /// few seconds to a minute; telemetry not heard for longer is no longer the beacon's own
    /// (it stopped sending TLM frames, or its address is now another beacon's), and a reading
    /// goes without it rather than with an old temperature or battery level.
    static let separateTelemetryLifetime = 300.0
    /// The latest forward step of the wall clock (`clockSteppedForward`), while reports from
    /// before it may still be queued (until `forwardStepEnds`); 0 after, and after a step back.
    private var forwardStep = 0.0
    private var forwardStepEnds = -Double.infinity
    private var startTime: Double
    /// The newest time seen from the timer or the radio (`observe`).
    public private(set) var latestTime: Double
    private var nextTelemetry: Double
    private var rateWindow: (start: Double, count: UInt64)
    private var advertisementsPerSecond: Double = 0
    /// When a full table is said (`capacityWarning`), and the counts the last warning gave.
    private var capacityPacing = LogPacing(interval: CapacityWarning.interval)
    private var capacityReported: (evicted: UInt64, refused: UInt64) = (0, 0)

    /// What the core has counted, for telemetry and logs.
    public struct Stats: Sendable, Equatable {
        public var reports: UInt64 = 0
        public var untracked: UInt64 = 0
        public var readings: UInt64 = 0
        /// Beacons dropped from the full table to make room for a new one.
        public var evicted: UInt64 = 0
        /// Of those, known beacons and IRK phones (only when the table is smaller than the config's list).
        public var evictedKnown: UInt64 = 0
        /// Transmitters found changing their beacon id (`UnstableIDWatch`); their advertisements
        /// since are counted in `untracked`.
        public var unstableAddresses: UInt64 = 0
        /// Strangers not tracked because every place was taken by known beacons and IRK phones.
        public var refused: UInt64 = 0
        /// Times the wall clock was seen to step (`clockSteppedBack`, `clockSteppedForward`).
        public var clockSteps: UInt64 = 0
        /// The last step, in seconds: positive forward, negative back.
        public var lastClockStep: Double = 0
    }

    public init(settings: AgentSettings, decoder: AdvertisementDecoder, startTime: Double) {
        self.settings = settings
        self.decoder = decoder
        self.beacons = BeaconTable(capacity: settings.maxTrackedBeacons)
        self.unstableIDs = UnstableIDWatch(tableCapacity: settings.maxTrackedBeacons)
        self.policy = PublishPolicy(reportInterval: settings.reportInterval, significantChangeDB: settings.significantChangeDB,
                                    significantChangeMeters: settings.significantChangeMeters)
        self.regions = RegionTracker(node: settings.node, exitDelay: settings.regionExitDelay)
        self.sequence = SequenceNumber(startTime: startTime)
        self.outputs = CompatibilityOutputs(room: settings.room ?? settings.node, enabled: settings.outputs)
        self.startTime = startTime
        self.latestTime = startTime
        self.nextTelemetry = startTime
        self.rateWindow = (startTime, 0)
    }

    /// Advertisements per second over the latest telemetry window.
    public var advertisementRate: Double { advertisementsPerSecond }

    /// Beacons in the table now.
    public var trackedBeacons: Int { beacons.count }

    /// The retained `online` status; the MQTT Last Will is its `offline` twin.
    public var onlineMessage: OutboundMessage {
        OutboundMessage(topic: settings.topics.nodeStatus(settings.node), text: "online", retain: true, qos: 1)
    }

    /// That this node's link is up (`NodeHeartbeat`), sent every second while connected: not
    /// retained, and worth nothing late (QoS 0).
    public func heartbeatMessage(now: Double) -> OutboundMessage {
        (try? OutboundMessage(topic: settings.topics.nodeHeartbeat(settings.node), json: NodeHeartbeat(ts: now)))
            ?? OutboundMessage(topic: settings.topics.nodeHeartbeat(settings.node), text: #"{"v":1,"ts":0}"#)
    }

    public var offlineMessage: OutboundMessage {
        OutboundMessage(topic: settings.topics.nodeStatus(settings.node), text: "offline", retain: true, qos: 1)
    }

    /// The node says it is offline while running (`AgentRuntime.radio`, its radio closed): what
    /// it was inside ends as at a stop (`RegionTracker.forgetAll`), with no exit at the exit
    /// delay for a radio that heard nothing, and an `enter` once it hears again.
    public mutating func radioClosed() {
        regions.forgetAll()
    }

    /// One advertising report; returns what to publish because of it.
    public mutating func handle(_ report: AdvertisingReport) -> [OutboundMessage] {
        stats.reports += 1
        rateWindow.count += 1
        // Every report is the radio's clock, tracked or not.
        let ts = observe(report: report.timestamp)
        let address = BLEAddress(value: report.addressValue)
        guard let identity = decoder.identify(report.data, address: address,
                                              addressType: BLEAddressType(hci: report.addressType.rawValue),
                                              buffers: &decodeBuffers) else {
            stats.untracked += 1
            if !eddystoneAtAddress.isEmpty { keepSeparateTelemetry(from: report.addressValue, at: ts) }
            return []
        }
        var out: [OutboundMessage] = []
        for event in regions.heard(identity.id, inRegions: identity.regions, ts: ts) {
            if let m = eventMessage(event) { out.append(m) }
        }
        // A stranger with every place taken by known beacons, or from an address that changes its id.
        guard let slot = track(identity, from: report.addressValue, at: ts) else { return out }
        if case .eddystone(.uid)? = identity.beacon { noteEddystone(identity.id, at: report.addressValue) }
        let ranged = beacons.withEntry(slot) { e -> BeaconRanger.Range? in
            // Heard either way: a report without an RSSI (HCI's 127) counts for the interval and
            // the last time heard, and leaves the filter alone.
            e.ranger.ingest(rssi: report.rssi ?? BeaconRanger.unavailableRSSI, advertised: identity.referencePower, at: ts)
            return e.ranger.range(now: ts)
        }
        let range: BeaconRanger.Range
        if report.rssi != nil, let r = ranged {
            range = r
        } else {
            // RSSI 127 = not available: the beacon was heard but cannot be ranged. Keep the
            // filter untouched; report the floor (-127 dBm) with proximity unknown.
            range = ranged.map { var r = $0; r.proximity = .unknown; return r }
                ?? BeaconRanger.Range(rssiFiltered: -127, power: identity.referencePower ?? settings.ranging.defaultPower,
                                      distance: settings.ranging.maxDistance, proximity: .unknown)
        }
        // The policy is told of the distance's own class, not the held one the reading carries: a
        // distance crossing a threshold is reported at once, since the aggregator's rooms on the
        // recordings lean on those readings (docs/ranging.md).
        let distanceClass = report.rssi == nil ? range.proximity : Proximity(distance: range.distance, config: settings.ranging)
        guard let due = policy.offer(&beacons[slot].published, ts: ts, filtered: range.rssiFiltered,
                                     distance: range.distance, proximity: distanceClass, measured: report.rssi != nil) else { return out }
        // Only a reading needs the interval and the topic: the interval's median is taken now (nothing
        // was ingested since the range), the topic built at the beacon's first reading.
        let (topics, node) = (settings.topics, settings.node)
        let (interval, topic, separateTelemetry) = beacons.withEntry(slot) { e -> (Double?, String, BeaconTelemetry?) in
            if e.readingTopic == nil { e.readingTopic = topics.nodeBeacon(node, identity.id) }
            let current = ts - e.separateTelemetryHeard <= Self.separateTelemetryLifetime
            return (e.ranger.intervals.interval, e.readingTopic!, current ? e.separateTelemetry : nil)
        }
        // The floor (no filter estimate yet) has no interval.
        var reading = makeReading(identity: identity, range: range, interval: ranged != nil ? interval : nil,
                                  report: report, samples: due.samples)
        if reading.telemetry == nil { reading.telemetry = separateTelemetry }
        stats.readings += 1
        var published = [OutboundMessage(topic: topic, encodedJSON: reading.fastJSON())]
        published += outputs.messages(for: reading)
        deliveryCheck.mark(&published, now: ts)
        return out.isEmpty ? published : out + published
    }

    /// Time passes: region exits, forgotten beacons, periodic telemetry.
    public mutating func tick(now: Double, radio: RadioCounters.Snapshot? = nil, dropped: UInt64 = 0,
                              brokerReconnects: UInt64 = 0, refused: [String: Int] = [:]) -> [OutboundMessage] {
        observe(tick: now)
        var out: [OutboundMessage] = []
        for event in regions.expire(now: now) {
            if let m = eventMessage(event) { out.append(m) }
        }
        beacons.expire(now: now, forgetAfter: settings.ranging.forgetAfter)
        if now - rateWindow.start >= 10 {
            advertisementsPerSecond = Double(rateWindow.count) / (now - rateWindow.start)
            rateWindow = (now, 0)
        }
        if now >= nextTelemetry {
            nextTelemetry = now + settings.telemetryInterval
            out.append(telemetry(now: now, radio: radio, dropped: dropped, brokerReconnects: brokerReconnects, refused: refused))
        }
        return out
    }

    /// A time earlier than the newest seen by more than this is the wall clock stepped back
    /// (an NTP correction, a clock set by hand). Generous: reports wait in the radio's queue
    /// behind the timer, by seconds on a crowded site, and are late, not stepped.
    public static let clockStepTolerance = 10.0

    /// The timer's time: the one source read in order. A step back moves every kept time back
    /// with it (`clockSteppedBack`); a step forward looks like time passing here, and only the
    /// runtime, with a monotonic clock, can tell (`clockSteppedForward`).
    private mutating func observe(tick now: Double) {
        guard now.isFinite else { return }
        if now < latestTime - Self.clockStepTolerance { clockSteppedBack(by: latestTime - now) }
        latestTime = max(latestTime, now)
    }

    /// A report's capture time as the core uses it. One from before a step back (still in the
    /// queue when the timer saw the step) lies ahead of every time kept: it counts as now, or
    /// it would put the beacon's times ahead again. A step back seen first by the radio (a
    /// replay across one, a quiet timer) is a step.
    private mutating func observe(report ts: Double) -> Double {
        guard ts.isFinite, latestTime.isFinite else { return ts }
        // Captured before the latest forward step and handled after the tick that saw it (the
        // radio's reports wait in a queue): late, on the clock before the step.
        if forwardStep > 0, latestTime > forwardStepEnds { forwardStep = 0 }
        if ts < latestTime - Self.clockStepTolerance, ts + forwardStep >= latestTime - Self.clockStepTolerance {
            return min(ts + forwardStep, latestTime)
        }
        if ts < latestTime - Self.clockStepTolerance { clockSteppedBack(by: latestTime - ts) }
        if ts > latestTime + Self.clockStepTolerance { return latestTime }
        latestTime = max(latestTime, ts)
        return ts
    }

    /// The wall clock stepped back by `seconds`: every time the core keeps moves back by as
    /// much, so what it measured keeps its length. Left ahead of the clock, they held the RSSI
    /// filters still (no time passed between samples), kept silent beacons and regions from
    /// expiring and held telemetry back, all until the clock caught up.
    public mutating func clockSteppedBack(by seconds: Double) {
        guard seconds.isFinite, seconds > 0 else { return }
        moveKeptTimes(back: seconds)
        forwardStep = 0
        forwardStepEnds = -.infinity
    }

    /// The wall clock stepped forward by `seconds` while the monotonic clock did not (a Pi
    /// booted on the time it last saved, then set by NTP): every time the core keeps moves
    /// forward by as much. Taken for time passing, the step would make every region exit and
    /// every beacon be forgotten at once, to be entered and heard again a moment later. The
    /// caller tells (`AgentRuntime`): the core sees the wall clock only.
    public mutating func clockSteppedForward(by seconds: Double) {
        guard seconds.isFinite, seconds > 0 else { return }
        moveKeptTimes(back: -seconds)
        forwardStep = seconds
        forwardStepEnds = latestTime + 2 * Self.clockStepTolerance
    }

    /// Moves every kept time back by `seconds` (forward when negative).
    private mutating func moveKeptTimes(back seconds: Double) {
        beacons.clockSteppedBack(by: seconds)
        regions.clockSteppedBack(by: seconds)
        deliveryCheck.clockSteppedBack(by: seconds)
        startTime -= seconds
        latestTime -= seconds
        nextTelemetry -= seconds
        rateWindow.start -= seconds
        capacityPacing.clockSteppedBack(by: seconds)
        stats.clockSteps += 1
        stats.lastClockStep = -seconds
    }

    /// The node's health as a retained message.
    /// `refused`: publishes the broker refused, per topic family (`MQTTClient.publishRefusals`).
    public func telemetry(now: Double, radio: RadioCounters.Snapshot?, dropped: UInt64, brokerReconnects: UInt64,
                          refused: [String: Int] = [:]) -> OutboundMessage {
        var t = NodeTelemetry(node: settings.node, ts: WireFormat.milliseconds(now), version: settings.version,
                              uptime: WireFormat.milliseconds(max(0, now - startTime)), adapter: settings.adapter,
                              advertisementsPerSecond: (advertisementsPerSecond * 10).rounded() / 10,
                              beaconsInView: beacons.count, dropped: dropped + (radio?.dropped ?? 0),
                              hciErrors: radio?.hciErrors ?? 0, hciResets: radio?.resets ?? 0,
                              brokerReconnects: brokerReconnects)
        t.room = settings.room
        t.beaconsMax = beacons.capacity
        t.beaconsEvicted = stats.evicted
        t.beaconsRefused = stats.refused
        t.beaconsUnstable = stats.unstableAddresses
        t.publishesRefused = UInt64(refused.values.reduce(0, +))
        t.refusedTopics = refused.isEmpty ? nil : refused.mapValues { UInt64($0) }
        return (try? OutboundMessage(topic: settings.topics.nodeTelemetry(settings.node), json: t, retain: true))
            ?? OutboundMessage(topic: settings.topics.nodeTelemetry(settings.node), payload: [], retain: true)
    }

    /// After the broker came back: every beacon's next advertisement goes out at once.
    public mutating func brokerReconnected() {
        beacons.resetPublished()
        deliveryCheck.reset()
    }

    /// The beacons in view for `edge-agent scan`, as of `now`.
    public func scanTable(now: Double) -> ScanTable {
        var table = ScanTable()
        for e in beacons.entries {
            let estimate = e.ranger.estimate(now: now)
            table.set(e.id, ScanTable.Row(label: e.name ?? e.id.rawValue, kind: e.kind.rawValue, rssi: estimate?.rssi ?? -127,
                                          filtered: estimate?.rssiFiltered ?? -127,
                                          distance: estimate?.distance ?? settings.ranging.maxDistance,
                                          proximity: estimate?.proximity ?? .unknown, lastSeen: e.lastHeard))
        }
        return table
    }

    /// What to tell the user about a full table, only when beacons were evicted or refused since
    /// the last time, and paced as every lasting condition is (`LogPacing`: at once, then a
    /// minute later, each gap twice the last, up to hourly); nil otherwise. Call it after `tick`.
    public mutating func capacityWarning(now: Double) -> CapacityWarning? {
        let evictedSinceLast = stats.evicted - capacityReported.evicted
        let refusedSinceLast = stats.refused - capacityReported.refused
        guard evictedSinceLast + refusedSinceLast > 0, capacityPacing.admit(now: now).admit else { return nil }
        capacityReported = (stats.evicted, stats.refused)
        return CapacityWarning(capacity: beacons.capacity, tracked: beacons.count, evicted: stats.evicted,
                               evictedSinceLast: evictedSinceLast, evictedKnown: stats.evictedKnown,
                               refused: stats.refused, refusedSinceLast: refusedSinceLast)
    }

    /// The slot of `identity`'s beacon, heard from `address` at `ts`: found and marked heard, or
    /// added (evicting the least recently heard when the table is full); nil for a stranger when
    /// only known beacons are tracked (counted as refused), and for a new id of an address that
    /// changes its id (counted as untracked).
    mutating func track(_ identity: TrackedIdentity, from address: UInt64, at ts: Double) -> Int? {
        let retention: BeaconTable.Retention = identity.isKnown ? .known : identity.regions.isEmpty ? .ordinary : .region
        if let slot = beacons.lookUp(identity.id) {
            beacons.touch(slot, retention: retention)
            beacons.withEntry(slot) { e in
                e.lastHeard = max(e.lastHeard, ts)
                e.name = identity.name
                e.kind = identity.kind
            }
            return slot
        }
        if retention == .ordinary && !unstableIDs.admits(identity.id, from: address) {
            stats.untracked += 1
            stats.unstableAddresses = unstableIDs.found
            return nil
        }
        // Its class once heard again; until then it is one of possibly many one-off advertisers.
        let entry = BeaconTable.Entry(id: identity.id, retention: retention == .known ? .known : .heardOnce,
                                      name: identity.name, kind: identity.kind,
                                      lastHeard: ts, ranger: BeaconRanger(id: identity.id, config: settings.ranging),
                                      published: nil)
        guard let (slot, evicted) = beacons.insert(entry) else {
            stats.refused += 1
            return nil
        }
        if let evicted {
            stats.evicted += 1
            if evicted.retention == .known { stats.evictedKnown += 1 }
        }
        return slot
    }

    /// Remembers that `address` advertises Eddystone beacon `id` (`eddystoneAtAddress`).
    private mutating func noteEddystone(_ id: BeaconID, at address: UInt64) {
        guard eddystoneAtAddress[address] != id else { return }
        if eddystoneAtAddress.count >= 2 * beacons.capacity {
            var tracked: [UInt64: BeaconID] = [:]
            for (a, b) in eddystoneAtAddress where beacons.lookUp(b) != nil { tracked[a] = b }
            // Still as many: addresses that rotated (one beacon, many addresses); start again.
            eddystoneAtAddress = tracked.count < beacons.capacity ? tracked : [:]
        }
        eddystoneAtAddress[address] = id
    }

    /// An advertisement without an id from `address`: when it is an Eddystone-TLM frame of a
    /// beacon that address advertises, its telemetry goes with that beacon's readings from now.
    private mutating func keepSeparateTelemetry(from address: UInt64, at ts: Double) {
        guard let id = eddystoneAtAddress[address], let slot = beacons.lookUp(id) else { return }
        for b in decodeBuffers.scan.beacons {
            switch b {
            case .eddystone(.tlm), .eddystone(.encryptedTLM):
                if let telemetry = b.telemetry {
                    beacons.withEntry(slot) {
                        $0.separateTelemetry = telemetry
                        $0.separateTelemetryHeard = ts
                    }
                }
                return
            default:
                continue
            }
        }
    }

    /// A region event as published: QoS 1 and held through a broker outage (`MQTTSink`).
    private func eventMessage(_ event: RegionEvent) -> OutboundMessage? {
        guard var m = try? OutboundMessage(topic: settings.topics.nodeEvents(settings.node), json: event, qos: 1) else { return nil }
        m.heldThroughOutage = true
        return m
    }

    mutating func makeReading(identity: TrackedIdentity, range: BeaconRanger.Range, interval: Double?, report: AdvertisingReport,
                              samples: Int) -> BeaconReading {
        var r = BeaconReading(id: identity.id, node: settings.node, ts: WireFormat.milliseconds(report.timestamp),
                              seq: sequence.next(), rssi: report.rssi ?? -127,
                              rssiFiltered: (min(20, max(-127, range.rssiFiltered)) * 10).rounded() / 10, power: range.power,
                              distance: (range.distance * 100).rounded() / 100, proximity: range.proximity,
                              kind: identity.kind, mac: report.addressString)
        r.addressType = Self.wireAddressType(report.addressType)
        r.name = identity.name
        r.interval = interval.map { ($0 * 1000).rounded() / 1000 }
        r.samples = samples
        // Only a level the filter made has its spread; the floor of an unavailable RSSI has none.
        if report.rssi != nil, let sd = range.rssiSD, sd > 0 { r.rssiSD = max(0.01, (sd * 100).rounded() / 100) }
        if let beacon = identity.beacon { Self.addBeaconFields(beacon, to: &r) }
        return r
    }

    /// The frame's fields a reading carries, as `AdvertisementReport.BeaconEntry` has them, without
    /// what the entry adds and a reading does not need (its id string above all, built again from the
    /// frame's bytes for every reading).
    static func addBeaconFields(_ b: Beacon, to r: inout BeaconReading) {
        r.txPower = b.advertisedPower
        r.telemetry = b.telemetry
        switch b {
        case .iBeacon(let i):
            r.uuid = withUnsafeBytes(of: i.uuid.uuid) { Hex.uuidString($0) }
            r.major = i.major
            r.minor = i.minor
        case .altBeacon(let a):
            r.uuid = BeaconID.uuidString(a.id1)
            r.major = a.id2
            r.minor = a.id3
        case .eddystone(.uid(_, let ns, let inst)):
            r.namespace = Hex.encode(ns)
            r.instance = Hex.encode(inst)
        case .eddystone(.url(_, let u, _)), .uriBeacon(_, let u):
            r.url = u
        case .eddystone, .estimoteTelemetry, .estimoteNearable, .exposureNotification:
            break
        }
    }

    static func wireAddressType(_ t: AddressType) -> String? {
        switch t {
        case .public: "public"
        case .random: "random"
        case .publicIdentity: "public-identity"
        case .randomIdentity: "random-identity"
        case .anonymous: "anonymous"
        case .other: nil
        }
    }
}
