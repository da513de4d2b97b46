import Foundation
import Shared

/// One receiver node.
struct NodeState {
    var name: String
    /// Engine room index, -1 when the node is in no room.
    var room: Int
    var rxAdjust: Double
    var online = true
    /// When it last came online (-inf: online from the start): its silence counts from then.
    var onlineSince = -Double.infinity
    /// When it last went offline.
    var offlineSince = -Double.infinity
    /// When this process first heard from it (a reading or a heartbeat; +inf: not yet). After a
    /// restart, a node not heard since is not known to be listening: a retained `online` may be
    /// from before a power cut the node has not come back from.
    var heardSince = Double.infinity
    /// Learned bias (dB) subtracted from this node's RSSI.
    var learnedOffset = 0.0
    /// Where the offset in force came from; nil while nothing was learned (the offset is 0).
    var offsetOrigin: OffsetOrigin?
    enum OffsetOrigin {
        /// The nodes' own beacons (`NodeCalibration`), in this run.
        case links
        /// A retained report read at start, with the source that report gave.
        case resumed(ReceiverCalibrationReport.Node.Source)

        var source: ReceiverCalibrationReport.Node.Source {
            switch self {
            case .links: .nodeBeacons
            case .resumed(let source): source
            }
        }
    }
    /// The offset comes from the nodes' own beacons in this run.
    var calibratedByLinks: Bool { if case .links? = offsetOrigin { true } else { false } }
    /// It transmits a beacon of its own (`nodes[].beacon`).
    var transmits = false
    /// The weakest level this node reports (with rx_adjust, dBm; NaN until it reports one): a
    /// running low quantile of everything it hears (`FusionModel.hearingFloorQuantile`), where
    /// its radio stops hearing. A positioned node that hears nothing says the beacon is below it.
    var hearingFloor = Double.nan
    /// Capture time of the newest reading it sent of any beacon: a node that hears nothing at
    /// all is deaf (its radio stalled), not silent about one beacon.
    var lastHeard = -Double.infinity
    /// A reading of it was taken since it last came online. A node that goes down again before
    /// sending one was never back: its outage goes on from when it first went down.
    var heardSinceOnline = true

    init(name: String, room: Int, rxAdjust: Double) {
        self.name = name
        self.room = room
        self.rxAdjust = rxAdjust.isFinite ? rxAdjust : 0
    }
}

/// What one node has recently heard of one beacon. Fixed size, stored inline.
struct EvidenceSlot {
    /// Newest capture time, -inf when never heard.
    var ts = -Double.infinity
    var seq: UInt64 = 0
    /// Fast, asymmetric average of RSSI (with rx_adjust), dBm: the evidence.
    var fast = 0.0
    /// Slow plain average the motion likelihood compares the fast one with.
    var slow = 0.0
    var distance = -1.0
    /// Average gap between this node's readings of this beacon (seconds).
    var gap = 0.0
    /// The variance of the newest level as the node's filter reported it (dB²); 0 when it did not.
    var variance = 0.0
    var count: UInt32 = 0
}

/// One tracked beacon's decision state.
struct BeaconState {
    var id: BeaconID
    /// The room it was shown in when it went away, while it may yet turn out to have been a
    /// silence (-1 otherwise), and when that silence began.
    var leftRoom = -1
    var leftSilentSince = 0.0
    var name: String?
    var active = true
    var powerOverride: Double?
    var power = -59.0
    /// It advertises only while moved (`beacons[].sleeps_when_still`): silent and still, it
    /// rests where it lies.
    var sleepsWhenStill = false
    /// The filter's still probability as its latest news left it: between news the filter only
    /// predicts, and a moving beacon's prediction drifts to still within seconds, so whether a
    /// silence began still is read from this.
    var stillAtNews = 0.0
    /// `power` came from a Roomcast node's reading, not an ESPresense node's reference.
    var powerIsBeacons = false
    /// Advertising interval reported by the nodes (seconds); 0 when unknown.
    var interval = 0.0
    /// How often news of it arrives (seconds between readings the filter counts, an average; 0
    /// until measured). Not the advertising interval: a tag that sends a burst of packets every
    /// 10 s has a short one, and its readings still come every 10 s.
    var newsGap = 0.0
    var lastSeen = -Double.infinity
    /// Its first reading's arrival (`initial_wait`), and the earliest capture time heard.
    var firstSeen = -Double.infinity
    var firstHeard = Double.infinity
    /// On the site's `beacons:` list.
    var listed = false
    /// Unlisted and never placed in a room yet; its eviction pool (-1: listed).
    var stranger = false
    var pool = -1

    /// The decision model, and the probability of each room from it (logs).
    var filter: RoomMotionFilter
    var logPosterior: [Double]
    var lastEvaluation = -Double.infinity
    /// The newest capture time the filter has counted: evidence no newer is no news.
    var countedUntil = -Double.infinity

    // The published decision.
    var room = -1
    var decided = false
    var since = 0.0
    var reason = "initial"
    /// The room that is gaining on the one shown, and since when (`switchEvidenceSince`).
    var rising = -1
    var risingSince = 0.0
    /// When the room of the latest switch began to gain (-inf: no switch yet).
    var switchLedSince = -Double.infinity
    /// When its decision was resumed from retained presence (-inf: never).
    var resumedAt = -Double.infinity

    // Explanation of the latest evaluation.
    var confidence = 0.0
    var runnerUp = -1
    var margin = 0.0
    var node = -1
    var distance: Double?
    var position: (x: Double, y: Double, z: Double)?

    init(id: BeaconID, roomCount: Int) {
        self.id = id
        filter = RoomMotionFilter(roomCount: roomCount)
        logPosterior = [Double](repeating: -log(Double(max(roomCount, 1))), count: roomCount)
    }
}

extension BeaconState {
    /// Silent now, it rests where it lies: it sleeps when still and its latest news held it still
    /// (`stillAtNews`), or it was resumed resting after a restart and has not been heard since.
    var restsWhenSilent: Bool {
        sleepsWhenStill && (countedUntil.isFinite ? stillAtNews >= 0.5 : reason == "resting")
    }
}
