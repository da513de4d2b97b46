import Shared

/// An estimator that learns receiver offsets and can say what it learned (the
/// aggregator logs it and publishes it retained: `ReceiverCalibrationReport`).
public protocol CalibratingEstimator {
    /// Every node's learned offset (dB it reads above the model) and where it came from,
    /// in node order.
    var receiverCalibration: [ReceiverCalibrationReport.Node] { get }
}
