import Foundation
import Shared
import RoomcastConfig
import RoomcastYAML

/// `edge-agent irks import`: the paired devices' keys as `irks:` entries of agent.yaml, printed
/// or merged into the config file.
public enum IRKImport {
    /// One entry to add.
    public struct Entry: Sendable, Equatable {
        public var name: String
        /// 32 hex digits, most significant byte first (the config's default `byte_order`).
        public var key: String
        /// Where it came from, for the comment next to it.
        public var source: String
    }

    /// Entries for `devices`, named after their `Name=` (lowercase, a valid `irk:` name), unique
    /// among themselves and `taken`; devices whose key is in `existingKeys` are left out.
    public static func entries(_ devices: [BlueZPairingStore.Device], taken: Set<String> = [],
                               existingKeys: Set<[UInt8]> = []) -> [Entry] {
        var names = taken
        var keys = existingKeys
        var out: [Entry] = []
        for d in devices where keys.insert(d.key).inserted {
            let base = slug(d.name) ?? "device-" + d.address.replacingOccurrences(of: ":", with: "").lowercased()
            var name = base
            var n = 2
            while names.contains(name) { name = "\(base)-\(n)"; n += 1 }
            names.insert(name)
            out.append(Entry(name: name, key: Hex.encode(d.key), source: "\(d.name ?? "unnamed") \(d.address), adapter \(d.adapter)"))
        }
        return out
    }

    /// `Alice's iPhone` → `alice-s-iphone`: lowercase letters, digits, `-`, `_`, `.`.
    static func slug(_ name: String?) -> String? {
        guard let name else { return nil }
        var out = ""
        for c in name.lowercased() {
            if c.isASCII && (c.isLetter || c.isNumber || c == "_" || c == ".") { out.append(c) }
            else if !out.hasSuffix("-") { out.append("-") }
        }
        let trimmed = out.trimmingCharacters(in: CharacterSet(charactersIn: "-."))
        return trimmed.isEmpty || BeaconID.irk(trimmed) == nil ? nil : String(trimmed.prefix(64))
    }

    /// The entries as YAML list items at `indent` spaces.
    static func items(_ entries: [Entry], indent: Int) -> String {
        let pad = String(repeating: " ", count: indent)
        return entries.map { e in
            "\(pad)- name: \"\(e.name)\"  # \(printable(e.source))\n\(pad)  key: \"\(e.key)\"\n"
        }.joined()
    }

    /// `text` with every character YAML does not allow in a file (control characters, from a
    /// device name the radio gave BlueZ) and every line break made a space: libyaml refuses a file
    /// with one even in a comment, and an escape sequence would reach the terminal.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { s in
            let v = s.value
            let printable = (0x20...0x7E).contains(v) || (0xA0...0xD7FF).contains(v) || (0xE000...0xFFFD).contains(v) || v >= 0x10000
            // U+2028 and U+2029 break lines; libyaml takes U+FEFF only as a byte-order mark, first.
            return printable && v != 0x2028 && v != 0x2029 && v != 0xFEFF ? s : " "
        }))
    }

    /// What `irks import` prints: an `irks:` section ready to paste into agent.yaml.
    public static func yaml(_ entries: [Entry]) -> String {
        entries.isEmpty ? "irks: []\n" : "irks:\n" + items(entries, indent: 2)
    }

    /// `entries` as the JSON of an `irks` list.
    static func json(_ entries: [Entry]) -> String {
        let items = entries.map { ["name": $0.name, "key": $0.key] }
        guard let data = try? JSONSerialization.data(withJSONObject: items, options: [.prettyPrinted, .sortedKeys]) else { return "" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// Why a merge was refused.
    public struct MergeError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        /// The entries to add by hand, keys and all: for stdout, where the keys go when nothing
        /// is written, never into the error.
        public var byHand: String?

        init(description: String, byHand: String? = nil) {
            self.description = description
            self.byHand = byHand
        }
    }

    /// `text` (a whole agent.yaml) with `entries` added to its `irks:` list, everything else as it
    /// was. Refuses a file that does not load (it would be clobbered) and an `irks:` written in a
    /// form other than a block list or `[]`; the result is loaded again before it is returned.
    public static func merge(_ entries: [Entry], into text: String) throws(MergeError) -> String {
        // A JSON config loads, but this merge edits YAML lines: refused before anything is read as YAML.
        if text.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" }).first == "{" {
            throw MergeError(description: "the config is JSON; --write adds to a YAML config only. Add the entries printed to its \"irks\" list by hand",
                             byHand: json(entries))
        }
        // A file saved with Windows line ends keeps them; its lines are read without the `\r`.
        // (Split as scalars: in a String, "\r\n" is one Character, which "\n" never matches.)
        let lineEnd = text.unicodeScalars.contains("\r") ? "\r\n" : "\n"
        var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
            .map { String(String.UnicodeScalarView($0.last == "\r" ? $0.dropLast() : $0)) }
        if lines.last == "" { lines.removeLast() }
        let items = Self.items(entries, indent: 2)
        if let i = lines.firstIndex(where: { $0.hasPrefix("irks:") }) {
            let rest = lines[i].dropFirst("irks:".count).trimmingCharacters(in: .whitespaces)
            if rest == "[]" || rest.hasPrefix("[]") && rest.dropFirst(2).trimmingCharacters(in: .whitespaces).hasPrefix("#") {
                lines[i] = "irks:"
                lines.insert(contentsOf: items.split(separator: "\n").map(String.init), at: i + 1)
            } else if rest.isEmpty || rest.hasPrefix("#") {
                // The block goes on while lines are indented, blank, comments, or `- ` items at column 0.
                var end = i + 1
                var last = i
                while end < lines.count {
                    let l = lines[end]
                    let t = l.trimmingCharacters(in: .whitespaces)
                    if t.isEmpty || t.hasPrefix("#") { end += 1; continue }
                    guard l.hasPrefix(" ") || l.hasPrefix("-") else { break }
                    last = end
                    end += 1
                }
                // `last == i` when the block holds no item yet (`irks:` with nothing, or comments, under it).
                let indent = lines[i...last].dropFirst().first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("-") }
                    .map { $0.prefix { $0 == " " }.count } ?? 2
                lines.insert(contentsOf: Self.items(entries, indent: indent).split(separator: "\n").map(String.init), at: last + 1)
            } else {
                throw MergeError(description: "irks: is not a block list; add the entries printed by hand", byHand: yaml(entries))
            }
        } else {
            lines += ["", "irks:"] + items.split(separator: "\n").map(String.init)
        }
        let merged = lines.joined(separator: lineEnd) + lineEnd
        let config: AgentConfig
        do { config = try ConfigLoader.parse(AgentConfig.self, yaml: merged) } catch {
            throw MergeError(description: "merging would leave a config that does not load (\(error)); the file is unchanged")
        }
        let names = Set(config.irks.map(\.name))
        guard entries.allSatisfy({ names.contains($0.name) }) else {
            throw MergeError(description: "merging did not add every key; the file is unchanged. Add the entries printed by hand",
                             byHand: yaml(entries))
        }
        return merged
    }

    /// Keys (most significant byte first) and names already in `config`.
    public static func existing(_ config: AgentConfig) -> (names: Set<String>, keys: Set<[UInt8]>) {
        var keys = Set<[UInt8]>()
        for k in config.irks {
            if let bytes = Hex.decode(k.key.revealed), bytes.count == 16 { keys.insert(k.byteOrder == "lsb_first" ? bytes.reversed() : bytes) }
        }
        return (Set(config.irks.map { $0.name.lowercased() }), keys)
    }

    /// Writes `text` over `path`, keeping the old file as `<path>.bak` and the file's mode and owner.
    /// A `path` that is a symbolic link (`/etc/roomcast/agent.yaml` pointing into a managed tree) is
    /// followed: the file it names is rewritten, and the link stays. Read from the link itself, the
    /// mode would be 0777, copied onto both files, and the link replaced by a world-readable copy.
    /// The config holds every IRK and maybe the broker's password: the backup and the new file are
    /// created readable by their owner only, and take the old file's mode and owner once written,
    /// so neither is ever readable by more than the config was (created with the umask, under
    /// sudo's 022, they were world-readable until their mode was copied over).
    public static func replace(_ link: String, with text: String) throws -> String {
        let fm = FileManager.default
        let path = URL(fileURLWithPath: link).resolvingSymlinksInPath().path
        let backup = path + ".bak"
        let attributes = try fm.attributesOfItem(atPath: path)
        var keep: [FileAttributeKey: Any] = [:]
        for k in [FileAttributeKey.posixPermissions, .ownerAccountID, .groupOwnerAccountID] { keep[k] = attributes[k] }
        if fm.fileExists(atPath: backup) { try fm.removeItem(atPath: backup) }
        try writePrivately(Array(try Data(contentsOf: URL(fileURLWithPath: path))), to: backup)
        try fm.setAttributes(keep, ofItemAtPath: backup)
        // The new config is written whole and synced before it takes the old one's name: a power
        // cut just after the import leaves the old config or the new, never an empty one.
        let temp = path + ".irks-import.tmp"
        try? fm.removeItem(atPath: temp)
        try writePrivately(Array(text.utf8), to: temp)
        // From here a failure takes the temporary file away: it holds every key.
        do {
            try fm.setAttributes(keep, ofItemAtPath: temp)
            try Syscall.call("rename") { rename(temp, path) }
        } catch {
            try? fm.removeItem(atPath: temp)
            throw error
        }
        Syscall.syncFolder(of: path)
        return backup
    }

    /// Creates `path` (which must not exist) with mode 0600, writes `bytes` to it and syncs them.
    static func writePrivately(_ bytes: [UInt8], to path: String) throws(SystemCallError) {
        try Syscall.createDurably(path, bytes: bytes, mode: 0o600)
    }
}
