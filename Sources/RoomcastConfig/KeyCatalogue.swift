/// Every key a config type reads, by the mapping it belongs in (`""` for the top, `fusion`,
/// `nodes[]`), so that a key written in the wrong section can be pointed to the right one: a
/// YAML line indented one level too little (`away_timeout_s` at the top, not under `fusion:`) is
/// "unknown key", and nothing near it is spelt alike. Found by decoding the type itself from
/// documents that open every mapping and list it asks for, so the catalogue is the decoders'
/// own and cannot drift from them.
enum KeyCatalogue {
    /// A probe document: each key the type asked for, tried as a mapping, then as a list of
    /// mappings, then left as a value.
    private indirect enum Probe {
        case mapping([String: Probe])
        case list(Probe)
        case value

        var node: ConfigNode {
            let here = ConfigLocation.position(line: 0, column: 0)
            switch self {
            case .mapping(let entries):
                return ConfigNode(.mapping(entries.sorted { $0.key < $1.key }.map {
                    ConfigNode.Entry(key: $0.key, keyLocation: here, value: $0.value.node)
                }), at: here)
            case .list(let element): return ConfigNode(.sequence([element.node]), at: here)
            case .value: return ConfigNode(.null, at: here)
            }
        }

        /// Tries the next shape for `key` in the mapping at `path`; false when it has had them all.
        mutating func advance(_ key: String, at path: ArraySlice<ConfigPath.Component>) -> Bool {
            switch (self, path.first) {
            case (.mapping(var entries), .key(let name)?):
                guard var inner = entries[name] else { return false }
                let moved = inner.advance(key, at: path.dropFirst())
                entries[name] = inner
                self = .mapping(entries)
                return moved
            case (.list(var element), .index?):
                let moved = element.advance(key, at: path.dropFirst())
                self = .list(element)
                return moved
            case (.mapping(var entries), nil):
                switch entries[key] {
                case nil: entries[key] = .mapping([:])
                case .mapping?: entries[key] = .list(.mapping([:]))
                case .list?: entries[key] = .value
                case .value?: return false
                }
                self = .mapping(entries)
                return true
            default:
                return false
            }
        }
    }

    /// The keys `type` reads, by the generic path of their mapping (list indexes as `[]`).
    static func keys<T: Decodable>(of type: T.Type) -> [String: Set<String>] {
        var probe = Probe.mapping([:])
        var catalogue: [String: Set<String>] = [:]
        // Each round opens what the last one found; a config nests a few levels deep.
        for _ in 0..<16 {
            let requested = ConfigDecoder().decode(T.self, from: probe.node).requestedKeys
            var grew = false
            for (path, keys) in requested {
                catalogue[generic(path), default: []].formUnion(keys)
                guard let components = ConfigPath.components(path) ?? (path.isEmpty ? [] : nil) else { continue }
                for key in keys {
                    let child = ConfigPath.child(path, key)
                    if requested[child] != nil || requested[child + "[0]"] != nil { continue }
                    if probe.advance(key, at: components[...]) { grew = true }
                }
            }
            if !grew { break }
        }
        return catalogue
    }

    /// `nodes[0].tls` → `nodes[].tls`.
    static func generic(_ path: String) -> String {
        path.replacing(/\[\d+\]/, with: "[]")
    }

    /// `problems` with each unknown key that has no suggestion of its own pointed to the one
    /// section of `type` that reads a key of that name, when there is exactly one.
    static func placing<T: Decodable>(_ problems: [ConfigProblem], in type: T.Type) -> [ConfigProblem] {
        guard problems.contains(where: { $0.message == DecodingState.unknownKeyMessage }) else { return problems }
        let catalogue = keys(of: type)
        return problems.map { problem in
            guard problem.message == DecodingState.unknownKeyMessage else { return problem }
            let parent = generic(ConfigPath.parent(of: problem.path) ?? "")
            let key = String(problem.path.split(separator: ".").last ?? "")
            let homes = catalogue.filter { $0.key != parent && $0.value.contains(key) }.map(\.key)
            guard homes.count == 1, let home = homes.first else { return problem }
            var placed = problem
            placed.message += "; did you mean '\(ConfigPath.child(home, key))'?"
            return placed
        }
    }
}
