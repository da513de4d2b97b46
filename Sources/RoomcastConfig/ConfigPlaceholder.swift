import Shared

/// A type the config decoder may stand in for after a recorded problem, so
/// the enclosing list or section still decodes and still gets validated with
/// the right indices. The placeholder is never handed out: a config with a
/// recorded problem fails to load.
package protocol ConfigPlaceholder {
    static var configPlaceholder: Self { get }
}

extension BeaconID: ConfigPlaceholder {
    package static var configPlaceholder: BeaconID { BeaconID.mac([0, 0, 0, 0, 0, 0]) }
}

extension Secret: ConfigPlaceholder {
    /// An IRK entry missing its `key` still decodes, so a misspelt `kye:` beside it is reported.
    package static var configPlaceholder: Secret { Secret("") }
}

// One element of a site's lists that does not decode (`- hall` where a mapping belongs) stands
// in as a nameless entry: the rest of the list stays, so a node in a room listed beside it is
// not reported as in an unknown room. The stand-in's own problems fall under the element's
// recorded one (`ConfigLoader.decode`).

extension SiteModel.Room: ConfigPlaceholder {
    package static var configPlaceholder: SiteModel.Room { SiteModel.Room(name: "") }
}

extension SiteModel.Node: ConfigPlaceholder {
    package static var configPlaceholder: SiteModel.Node { SiteModel.Node(name: "", room: nil) }
}

extension SiteModel.KnownBeacon: ConfigPlaceholder {
    package static var configPlaceholder: SiteModel.KnownBeacon { SiteModel.KnownBeacon(id: .configPlaceholder) }
}

extension SiteModel.Person: ConfigPlaceholder {
    package static var configPlaceholder: SiteModel.Person { SiteModel.Person(name: "", beacons: []) }
}
