import Foundation

/// A validated region: which beacons belong to it.
public struct BeaconRegion: Sendable, Equatable {
    public var name: String
    public var match: Match

    public enum Match: Sendable, Equatable {
        /// iBeacon proximity UUID (or AltBeacon ID1), optionally major (ID2) and minor (ID3).
        case uuid(UUID, major: UInt16?, minor: UInt16?)
        /// Eddystone-UID namespace, optionally instance.
        case eddystone(namespace: [UInt8], instance: [UInt8]?)
    }

    public init(name: String, match: Match) {
        self.name = name
        self.match = match
    }

    /// True when `beacon` is inside this region.
    public func contains(_ beacon: Beacon) -> Bool {
        switch (match, beacon) {
        case let (.uuid(uuid, major, minor), .iBeacon(b)):
            return b.uuid == uuid && (major == nil || major == b.major) && (minor == nil || minor == b.minor)
        case let (.uuid(uuid, major, minor), .altBeacon(b)):
            return b.id1.elementsEqual(withUnsafeBytes(of: uuid.uuid) { Array($0) })
                && (major == nil || major == b.id2) && (minor == nil || minor == b.id3)
        case let (.eddystone(ns, inst), .eddystone(.uid(_, bns, binst))):
            return ns == bns && (inst == nil || inst == binst)
        default:
            return false
        }
    }
}
