internal import CYAML
import RoomcastConfig

/// Parses YAML (and so JSON) text into a `ConfigNode` tree with libyaml's
/// event API. This file is the only place that touches libyaml.
///
/// Hostile input is bounded: nesting depth, total node count and the number
/// of nodes aliases may expand to are limited (a "billion laughs" file fails
/// fast instead of growing memory), duplicate keys are rejected, and only
/// one document is accepted.
///
/// A duplicate key does not end the read: the first value is kept, the
/// repeat is reported, and the rest of the file is still read and checked,
/// so one run names every problem.
public struct YAMLReader: Sendable {
    /// Limits that keep a hostile document from exhausting memory or stack.
    public struct Limits: Sendable {
        public var maxDepth: Int
        public var maxNodes: Int
        /// Nodes created by expanding aliases, summed over all aliases.
        public var maxAliasExpansion: Int

        public init(maxDepth: Int = 64, maxNodes: Int = 200_000, maxAliasExpansion: Int = 10_000) {
            self.maxDepth = maxDepth
            self.maxNodes = maxNodes
            self.maxAliasExpansion = maxAliasExpansion
        }
    }

    public var limits: Limits

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// A parsed document: its tree (nil when empty) and the problems found
    /// that did not stop the read (duplicate keys, tags, aliases of nothing…).
    public struct Document: Sendable {
        public var root: ConfigNode?
        public var problems: [ConfigProblem]
        /// Paths of values read as not given because of one of `problems` (a tag, an alias of
        /// nothing): what decoding says of them would only repeat it.
        public var replaced: Set<String> = []
    }

    /// Parses `text`; an empty document yields nil. Throws the first problem,
    /// a duplicate key included.
    public func parse(_ text: String) throws(ConfigProblem) -> ConfigNode? {
        let document = try read(text)
        if let problem = document.problems.first { throw problem }
        return document.root
    }

    /// Parses `text`, returning the tree with the duplicate keys found. Throws a
    /// `ConfigProblem` for the first syntax error or limit passed (a parser
    /// cannot go on after one).
    public func read(_ text: String) throws(ConfigProblem) -> Document {
        var bytes = Array(text.utf8)
        if bytes.isEmpty { return Document(root: nil, problems: []) }
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) != 0 else {
            throw ConfigProblem(path: "", message: "cannot initialise the YAML parser (out of memory)")
        }
        defer { yaml_parser_delete(&parser) }
        return try bytes.withUnsafeMutableBufferPointer { (buffer) throws(ConfigProblem) -> Document in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            var builder = TreeBuilder(limits: limits)
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) != 0 else {
                    // libyaml reads the input without changing it: the bytes as given.
                    throw Self.syntaxProblem(parser, in: Array(buffer))
                }
                defer { yaml_event_delete(&event) }
                let done = event.type == YAML_STREAM_END_EVENT
                try builder.handle(event)
                if done { break }
            }
            return Document(root: builder.root, problems: builder.problems, replaced: builder.replaced)
        }
    }

    /// libyaml's error where it is in the text: a character libyaml refuses (a control
    /// character, a NUL) is placed by its byte offset, libyaml marking no position for it; a
    /// quote or bracket left open, found only at the end of the file, also names where it began.
    static func syntaxProblem(_ parser: yaml_parser_t, in bytes: [UInt8]) -> ConfigProblem {
        var message = "invalid YAML: " + (parser.problem.map { String(cString: $0) } ?? "syntax error")
        if let context = parser.context { message += " " + String(cString: context) }
        if parser.error == YAML_READER_ERROR {
            let offset = min(max(0, Int(parser.problem_offset)), bytes.count)
            let before = bytes[..<offset]
            let lineStart = before.lastIndex(of: 10).map { $0 + 1 } ?? 0
            let line = before.reduce(1) { $0 + ($1 == 10 ? 1 : 0) }
            let column = String(decoding: bytes[lineStart..<offset], as: UTF8.self).count + 1
            if parser.problem_value >= 0 { message += String(format: " (U+%04X)", Int(parser.problem_value)) }
            return ConfigProblem(path: "", message: message, location: .position(line: line, column: column))
        }
        let mark = parser.problem_mark, begun = parser.context_mark
        if parser.context != nil, begun.line < mark.line || (begun.line == mark.line && begun.column < mark.column) {
            message += " (it began at line \(Int(begun.line) + 1), column \(Int(begun.column) + 1))"
        }
        return ConfigProblem(path: "", message: message,
                             location: .position(line: Int(mark.line) + 1, column: Int(mark.column) + 1))
    }
}

/// Turns the event stream into a tree, one open collection per stack frame.
private struct TreeBuilder {
    enum Frame {
        case mapping(anchor: String?, location: ConfigLocation, entries: [ConfigNode.Entry], pendingKey: PendingKey?, seen: [String: ConfigLocation])
        case sequence(anchor: String?, location: ConfigLocation, items: [ConfigNode])
    }

    /// The key whose value comes next; the value of a repeated key, or of one that is itself a
    /// problem (a merge key, a list as a key), is read and dropped.
    struct PendingKey {
        var key: String
        var location: ConfigLocation
        var isDuplicate: Bool
    }

    struct Anchored {
        var node: ConfigNode
        var count: Int
        var depth: Int
    }

    let limits: YAMLReader.Limits
    var stack: [Frame] = []
    var anchors: [String: Anchored] = [:]
    var root: ConfigNode?
    /// Problems that leave the rest of the document readable, each reported once, beside what
    /// decoding finds: repeated keys (the first value is kept), tags, unknown aliases and anchors
    /// on nothing (the value reads as not given), merge keys and keys that are no text (the
    /// entry is dropped). Limits and syntax errors end the read.
    var problems: [ConfigProblem] = []
    /// Paths of values read as not given because of a problem (`Document.replaced`).
    var replaced: Set<String> = []
    var documents = 0
    var nodeCount = 0
    var expanded = 0
    /// Node count and height so far of each open collection, parallel to `stack`.
    var metrics: [(count: Int, height: Int)] = []

    init(limits: YAMLReader.Limits) { self.limits = limits }

    /// Home Assistant's own tags, named in their problems: a config copied from Home Assistant.
    static let homeAssistantTags: Set<String> = ["!secret", "!include", "!include_dir_list", "!include_dir_named",
                                                 "!include_dir_merge_list", "!include_dir_merge_named", "!env_var", "!input"]

    /// The YAML core schema's tags (`!!str`, `!!int`, …).
    static let coreTags: Set<String> = Set(["str", "int", "float", "bool", "null", "seq", "map"].map { "tag:yaml.org,2002:" + $0 })

    /// YAML's own tags (`!!str`, `!!int`, …, and `!`) are read; any other is an error. Ignored, a
    /// tag would turn `password: !secret mqtt_pw` (Home Assistant's form) into the password
    /// `mqtt_pw`. A generated password that starts with `!` is read as a tag too, so under a
    /// secret's key the tag is not shown: it may be the secret.
    /// `path` is worked out only for a problem: most values have no tag.
    static func tagProblem(_ tag: String?, at location: ConfigLocation, path: @autoclosure () -> String) -> ConfigProblem? {
        guard let tag, tag != "!", !coreTags.contains(tag) else { return nil }
        let path = path()
        // Home Assistant's tags are named (a config copied from one), except under a secret's
        // key; any other may be a secret pasted there, or where its key is misspelt or is an
        // `_env` key, so it is not shown.
        let secret = ConfigPath.holdsSecret(path)
        guard !secret, Self.homeAssistantTags.contains(tag) else {
            return ConfigProblem(path: path, message: "a value starting with '!' is read as a YAML tag, which is not supported: quote the value"
                                 + (secret ? ", or name an environment variable with password_env or token_env" : "") + " (value not shown)",
                                 location: location)
        }
        return ConfigProblem(path: path, message: "the YAML tag '\(tag)' is not supported: write the value itself (quoted if it "
                             + "starts with '!'), or name an environment variable with password_env or token_env for a secret",
                             location: location)
    }

    /// `&name` with no value after it: in a config, a value that starts with `&` (a password)
    /// read as an anchor, which would leave the key empty without a word.
    static func anchorOnNothing(_ anchor: String?, text: String, style: yaml_scalar_style_t, tag: String?,
                                at location: ConfigLocation, path: @autoclosure () -> String) -> ConfigProblem? {
        guard anchor != nil, style == YAML_PLAIN_SCALAR_STYLE, tag == nil, text.isEmpty else { return nil }
        let path = path()
        // Not shown: it may be a secret under a misspelt key or an `_env` key.
        return ConfigProblem(path: path, message: "a value starting with '&' is read as a YAML anchor with no value after it: quote the value (value not shown)",
                             location: location)
    }

    mutating func handle(_ event: yaml_event_t) throws(ConfigProblem) {
        let location = ConfigLocation.position(line: Int(event.start_mark.line) + 1,
                                               column: Int(event.start_mark.column) + 1)
        switch event.type {
        case YAML_DOCUMENT_START_EVENT:
            documents += 1
            if documents > 1 {
                throw ConfigProblem(path: "", message: "only one YAML document is allowed (found a second '---')", location: location)
            }
        case YAML_SCALAR_EVENT:
            let s = event.data.scalar
            let text = s.value.map { String(decoding: UnsafeBufferPointer(start: $0, count: s.length), as: UTF8.self) } ?? ""
            let tag = s.tag.map { String(cString: $0) }
            let node: ConfigNode
            if let problem = Self.tagProblem(tag, at: location, path: shownPath())
                ?? Self.anchorOnNothing(Self.anchor(s.anchor), text: text, style: s.style, tag: tag, at: location, path: shownPath()) {
                problems.append(problem)
                if inValuePosition { replaced.insert(currentPath()) }
                node = ConfigNode(.null, at: location)
            } else if s.style == YAML_PLAIN_SCALAR_STYLE && tag == nil {
                node = ConfigNode(Self.isNull(text) ? .null : .scalar(text, .plain), at: location)
            } else if tag == "tag:yaml.org,2002:null" {
                node = ConfigNode(.null, at: location)
            } else if s.style == YAML_PLAIN_SCALAR_STYLE && tag != "tag:yaml.org,2002:str" {
                node = ConfigNode(.scalar(text, .plain), at: location)
            } else {
                // Quoted, block (| or >) or tagged !!str: always a string.
                node = ConfigNode(.scalar(text, .quoted), at: location)
            }
            try count(1, at: location)
            try add(node, anchor: Self.anchor(s.anchor), size: 1, height: 1)
        case YAML_SEQUENCE_START_EVENT:
            if let problem = Self.tagProblem(event.data.sequence_start.tag.map { String(cString: $0) }, at: location, path: shownPath()) {
                problems.append(problem)
            }
            try open(at: location)
            stack.append(.sequence(anchor: Self.anchor(event.data.sequence_start.anchor), location: location, items: []))
            metrics.append((1, 0))
        case YAML_MAPPING_START_EVENT:
            if let problem = Self.tagProblem(event.data.mapping_start.tag.map { String(cString: $0) }, at: location, path: shownPath()) {
                problems.append(problem)
            }
            try open(at: location)
            stack.append(.mapping(anchor: Self.anchor(event.data.mapping_start.anchor), location: location,
                                  entries: [], pendingKey: nil, seen: [:]))
            metrics.append((1, 0))
        case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
            guard let frame = stack.popLast(), let m = metrics.popLast() else { return }
            let (node, anchor): (ConfigNode, String?)
            switch frame {
            case .sequence(let a, let loc, let items):
                node = ConfigNode(.sequence(items), at: loc)
                anchor = a
            case .mapping(let a, let loc, let entries, _, _):
                node = ConfigNode(.mapping(entries), at: loc)
                anchor = a
            }
            try add(node, anchor: anchor, size: m.count, height: m.height + 1)
        case YAML_ALIAS_EVENT:
            let name = Self.anchor(event.data.alias.anchor) ?? ""
            guard let target = anchors[name] else {
                // A value that starts with `*` (a generated password) is read as an alias.
                // Not shown: it may be a secret under a misspelt key or an `_env` key.
                problems.append(ConfigProblem(path: shownPath(), message: "a value starting with '*' is read as a YAML alias of no anchor: quote the value (value not shown)",
                                              location: location))
                if inValuePosition { replaced.insert(currentPath()) }
                try count(1, at: location)
                try add(ConfigNode(.null, at: location), anchor: nil, size: 1, height: 1)
                return
            }
            expanded += target.count
            if expanded > limits.maxAliasExpansion {
                throw ConfigProblem(path: "", message: "aliases expand to more than \(limits.maxAliasExpansion) nodes; refusing the document", location: location)
            }
            if stack.count + target.depth > limits.maxDepth {
                throw ConfigProblem(path: shownPath(), message: "nesting deeper than \(limits.maxDepth) levels", location: location)
            }
            try count(target.count, at: location)
            var copy = target.node
            copy.location = location
            try add(copy, anchor: nil, size: target.count, height: target.depth)
        default:
            break
        }
    }

    /// `location` is where the value that went past a limit starts, so the error names a line.
    private mutating func count(_ n: Int, at location: ConfigLocation) throws(ConfigProblem) {
        nodeCount += n
        if nodeCount > limits.maxNodes {
            throw ConfigProblem(path: "", message: "more than \(limits.maxNodes) values; refusing the document", location: location)
        }
    }

    private mutating func open(at location: ConfigLocation) throws(ConfigProblem) {
        if stack.count + 1 > limits.maxDepth {
            throw ConfigProblem(path: shownPath(), message: "nesting deeper than \(limits.maxDepth) levels", location: location)
        }
        try count(1, at: location)
    }

    private mutating func add(_ node: ConfigNode, anchor: String?, size: Int, height: Int) throws(ConfigProblem) {
        if let anchor { anchors[anchor] = Anchored(node: node, count: size, depth: height) }
        guard let top = stack.popLast() else {
            root = node
            return
        }
        metrics[metrics.count - 1].count += size
        metrics[metrics.count - 1].height = max(metrics[metrics.count - 1].height, height)
        // Consumed, so the list or mapping bound below is the only reference to its storage:
        // with `top` alive, every append could copy the whole collection (quadratic in a long
        // list).
        switch consume top {
        case .sequence(let a, let loc, var items):
            items.append(node)
            stack.append(.sequence(anchor: a, location: loc, items: items))
        case .mapping(let a, let loc, var entries, let pending, var seen):
            if let pending {
                if !pending.isDuplicate {
                    entries.append(ConfigNode.Entry(key: pending.key, keyLocation: pending.location, value: node))
                }
                stack.append(.mapping(anchor: a, location: loc, entries: entries, pendingKey: nil, seen: seen))
            } else {
                let key: String
                var dropped = false
                switch node.kind {
                case .scalar(let text, _): key = text
                case .null: key = ""
                default:
                    problems.append(ConfigProblem(path: shownPath(), message: "mapping keys must be plain text, found \(node.kindDescription)",
                                                  location: node.location))
                    key = ""
                    dropped = true
                }
                if key == "<<" {
                    problems.append(ConfigProblem(path: shownPath(), message: "merge keys ('<<') are not supported; repeat the values or use an alias for the whole value",
                                                  location: node.location))
                    dropped = true
                }
                let first = dropped ? nil : seen[key]
                if let first {
                    let where_ = first.line.map { " (first at line \($0))" } ?? ""
                    problems.append(ConfigProblem(path: ConfigPath.child(shownPath(), ConfigPath.shownKey(key)), message: "duplicate key\(where_)",
                                                  location: node.location))
                } else if !dropped {
                    seen[key] = node.location
                }
                stack.append(.mapping(anchor: a, location: loc, entries: entries,
                                      pendingKey: PendingKey(key: key, location: node.location, isDuplicate: dropped || first != nil), seen: seen))
            }
        }
    }

    /// Whether the next node is a value (a list item, or a key's value), not a mapping's key:
    /// `currentPath()` then names it.
    var inValuePosition: Bool {
        switch stack.last {
        case .mapping(_, _, _, let pending, _)?: pending != nil
        case .sequence?: true
        case nil: false
        }
    }

    /// `currentPath()` as a problem shows it (`ConfigPath.shownKey`): a key that reads as a
    /// secret's entry run together is not shown, and a long one is cut.
    func shownPath() -> String { currentPath(shown: true) }

    /// The path of the value being read; `shown`: as a problem shows it.
    func currentPath(shown: Bool = false) -> String {
        var path = ""
        for frame in stack {
            switch frame {
            case .mapping(_, _, _, let pending, _):
                if let pending { path = ConfigPath.child(path, shown ? ConfigPath.shownKey(pending.key) : pending.key) }
            case .sequence(_, _, let items):
                path = ConfigPath.child(path, items.count)
            }
        }
        return path
    }

    static func anchor(_ p: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        p.map { String(cString: $0) }
    }

    /// YAML 1.2 core schema nulls (plain style only).
    static func isNull(_ text: String) -> Bool {
        text.isEmpty || text == "~" || text == "null" || text == "Null" || text == "NULL"
    }
}
