import Foundation

/// Decodes `Decodable` types from a `ConfigNode` tree, collecting every
/// problem instead of stopping at the first.
///
/// How it keeps going after an error: a bad scalar read with `decode(_:forKey:)`
/// is recorded and replaced by a placeholder (0, "", false, []) so the rest of
/// the struct still decodes; a bad value read with `decodeIfPresent` is recorded
/// and read as absent, so the type's default applies; when a list element
/// cannot be decoded at all, the remaining elements are still decoded (and
/// discarded) so their problems are reported too. The decoded value is only
/// handed out when no problem was recorded.
public struct ConfigDecoder {
    public init() {}

    /// Outcome of one decoding run: the value (when decoding got that far),
    /// decoding problems and unknown keys.
    public struct Result<T> {
        public var value: T?
        public var problems: [ConfigProblem]
        public var unknownKeys: [ConfigProblem]
        /// Paths whose values were replaced by placeholders or defaults because of a problem.
        public var covered: Set<String>
        /// The keys each mapping's type asked for, present in the file or not, by the
        /// mapping's path (`""` for the top, `nodes[0]`, `mqtt.tls`): what that type knows.
        public var requestedKeys: [String: Set<String>]
    }

    /// Decodes `type` from `root`, never throwing: everything wrong ends up in the result.
    public func decode<T: Decodable>(_ type: T.Type, from root: ConfigNode) -> Result<T> {
        let state = DecodingState(root: root)
        let value = try? state.decode(T.self, from: root, at: [], substitute: false)
        return Result(value: value, problems: state.problems, unknownKeys: state.unknownKeys(),
                      covered: state.covered, requestedKeys: state.requested)
    }
}

/// Thrown up the decoding stack after the problem was recorded.
struct AlreadyReported: Error {}

/// Why a scalar could not become the requested type.
struct ScalarMismatch: Error {
    var message: String
}
