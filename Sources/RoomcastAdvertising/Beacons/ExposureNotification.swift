/// A Google/Apple Exposure Notification advertisement (service data on 0xFD6F): a rotating
/// proximity identifier from a person's phone. Recognised so it can be left alone: never tracked.
public struct ExposureNotification: Sendable, Equatable {
    public var rollingProximityIdentifier: [UInt8]
    public var encryptedMetadata: [UInt8]

    public static let serviceUUID: UInt16 = 0xFD6F

    public static func decode(_ d: ArraySlice<UInt8>) -> ExposureNotification? {
        guard d.count >= 20 else { return nil }
        let s = d.startIndex
        return ExposureNotification(rollingProximityIdentifier: Array(d[s..<(s + 16)]),
                                    encryptedMetadata: Array(d[(s + 16)..<(s + 20)]))
    }
}
