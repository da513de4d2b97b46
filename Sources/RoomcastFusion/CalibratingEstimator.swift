/// What an estimator learned about one receiver: how many dB it reads above the model,
/// and whether that came from the nodes' own beacons (`nodes[].beacon`) or from tracked ones.
public struct ReceiverCalibration: Sendable, Equatable {
    public var node: String
    public var offset: Double
    public var fromNodeBeacons: Bool

    public init(node: String, offset: Double, fromNodeBeacons: Bool) {
        self.node = node
        self.offset = offset
        self.fromNodeBeacons = fromNodeBeacons
    }
}

/// An estimator that learns receiver offsets and can say what it learned (for logs).
public protocol CalibratingEstimator {
    /// Every node's learned offset, in node order.
    var receiverCalibration: [ReceiverCalibration] { get }
}
