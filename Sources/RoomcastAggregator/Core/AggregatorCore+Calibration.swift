import RoomcastFusion
import Shared

/// The retained receiver calibration (`<prefix>/aggregator/calibration`): what fusion learned
/// about each receiver. Under `partition:` the partitions share its topic, each knowing only
/// its own nodes, so each publishes its nodes with the others' as last heard there, and again
/// when a report published after its own lacks its nodes (the learn state does the same,
/// `AggregatorCore+Learning`).
extension AggregatorCore {
    /// The retained report of our nodes' offsets at `now`, with the other partitions' nodes.
    mutating func calibrationReport(_ ours: [ReceiverCalibrationReport.Node], now: Double) throws -> OutboundMessage {
        var nodes = ours
        if isPartition {
            publishedCalibration = ours
            nodes += othersCalibration
        }
        return OutboundMessage(topic: topics.aggregatorCalibration,
                               payload: try WireFormat.encode(ReceiverCalibrationReport(ts: now, nodes: nodes)), retain: true, qos: 1)
    }

    /// A report heard on the calibration topic, under `partition:`: the other partitions' nodes
    /// are kept (only nodes of the site: one payload's worth at most), and where ours are not
    /// what we published last, our report goes out again. Our own report heard back changes
    /// nothing.
    mutating func calibrationHeard(_ report: ReceiverCalibrationReport, now: Double) throws -> [OutboundMessage] {
        guard isPartition else { return [] }
        let ours = Set(site.nodes.map(\.name)), site = Set(wholeSite.nodes.map(\.name))
        othersCalibration = report.nodes.filter { !ours.contains($0.node) && site.contains($0.node) }
        guard let published = publishedCalibration, report.nodes.filter({ ours.contains($0.node) }) != published else {
            calibrationAnswer.settle()
            return []
        }
        guard calibrationAnswer.answerNow(at: now) else { return [] }
        return [try calibrationReport(published, now: now)]
    }

    /// Under `partition:`, the answers to the shared learn state and calibration held back by
    /// their pacing (`PacedAnswer`), once their window allows.
    mutating func pacedAnswers(now: Double) throws -> [OutboundMessage] {
        guard isPartition else { return [] }
        var out: [OutboundMessage] = []
        if learning.stateAnswer.dueNow(at: now) { out.append(try learnState(now: now)) }
        if calibrationAnswer.dueNow(at: now), let published = publishedCalibration {
            out.append(try calibrationReport(published, now: now))
        }
        return out
    }
}
