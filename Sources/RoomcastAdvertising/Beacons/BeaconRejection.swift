/// Why a frame that looked like a beacon format was refused. Kept as a value so the hot path
/// builds no strings; `description` formats it when someone looks.
public struct BeaconRejection: Sendable, Equatable, Encodable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        /// Apple manufacturer data whose type byte is not iBeacon's 0x02 0x15.
        case appleNotIBeacon(type: UInt8?)
        /// An iBeacon-shaped frame from a company not in the allow-list.
        case companyNotAllowed(companyID: UInt16)
        /// `02 15` but fewer than 23 bytes.
        case shortIBeacon(length: Int)
        /// Service data on 0xFEAA that is not a valid Eddystone frame.
        case eddystone(Eddystone.Failure)
        /// Service data on 0xFD6F shorter than 20 bytes.
        case shortExposureNotification(length: Int)
    }

    public let reason: Reason

    public init(_ reason: Reason) { self.reason = reason }

    /// The format the frame looked like.
    public var format: String {
        switch reason {
        case .appleNotIBeacon, .companyNotAllowed, .shortIBeacon: return "ibeacon"
        case .eddystone: return "eddystone"
        case .shortExposureNotification: return "exposure-notification"
        }
    }

    public var description: String {
        switch reason {
        case .appleNotIBeacon(let t):
            return "ibeacon: Apple frame of type \(t.map { "0x" + ADIssue.hex2($0) } ?? "none"), not an iBeacon"
        case .companyNotAllowed(let c):
            return "ibeacon: iBeacon-shaped frame from company 0x\(String(c, radix: 16)), not allow-listed"
        case .shortIBeacon(let n):
            return "ibeacon: iBeacon frame of \(n) bytes, expected 23"
        case .eddystone(let f):
            return "eddystone: \(f)"
        case .shortExposureNotification(let n):
            return "exposure-notification: service data of \(n) bytes, expected 20"
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
