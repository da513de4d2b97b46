import Foundation
import RoomcastConfig
import RoomcastFusion
import Shared

extension AggregatorConfig {
    /// A digest of what decides and publishes what Home Assistant and dashboards see: the site,
    /// fusion, discovery, output, partition, inputs, the topic prefix and the lease's length (a
    /// standby times the holder's lease by its own); not the broker account, the HTTP listener,
    /// the log or the state file, which may differ between the instances of one site. Two instances under hot standby must agree on it
    /// (`LeaseElection.Lease.config`). 16 hex digits of FNV-1a over the sorted-key JSON.
    public var decisionDigest: String {
        struct Decides: Encodable {
            var topicPrefix: String
            var rooms: [SiteModel.Room], nodes: [SiteModel.Node], beacons: [SiteModel.KnownBeacon], people: [SiteModel.Person]
            var fusion: FusionSettings, discovery: Discovery, output: Output, partition: Partition, inputs: Inputs
            var leaseS: Double
        }
        let json = ConfigLoader.describe(Decides(topicPrefix: mqtt.topicPrefix, rooms: rooms, nodes: nodes, beacons: beacons,
                                                 people: people, fusion: fusion, discovery: discovery, output: output,
                                                 partition: partition, inputs: inputs, leaseS: standby.leaseS))
        return FNV1a.hex(json)
    }
}
