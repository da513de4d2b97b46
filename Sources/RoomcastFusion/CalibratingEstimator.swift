import Shared

/// An estimator that learns receiver offsets and can say what it learned (the
/// aggregator logs it and publishes it retained: `ReceiverCalibrationReport`).
public protocol CalibratingEstimator {
    /// Every node's learned offset (dB it reads above the model) and where it came from,
    /// in node order.
    var receiverCalibration: [ReceiverCalibrationReport.Node] { get }

    /// Seeds what was learned from the aggregator's own retained calibration report (read
    /// back at start-up, or the active instance's, read by a standby): learning from still
    /// spots takes minutes, and a restart should not begin again from nothing. Only nodes
    /// that have learned nothing yet in this run take it.
    mutating func resume(_ report: ReceiverCalibrationReport)
}
