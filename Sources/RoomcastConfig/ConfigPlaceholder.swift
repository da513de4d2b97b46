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
