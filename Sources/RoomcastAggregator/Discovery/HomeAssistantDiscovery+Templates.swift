import Foundation
import Shared

/// The Jinja templates and ids the discovery configs are written with.
extension HomeAssistantDiscovery {
    /// A json_attributes_template picking `keys` from a presence payload. `.get` because optional
    /// keys (`runner_up`, ...) are left out of the payload: HA 2024.3.3 fails to render
    /// `value_json.runner_up` then ("LoggingUndefined is not JSON serializable") and logs an error.
    static func attributesTemplate(_ keys: [String]) -> String {
        "{{ {" + keys.map { "'\($0)': value_json.get('\($0)')" }.joined(separator: ", ") + "} | tojson }}"
    }

    /// A template expression: epoch seconds in `expression` as ISO 8601 UTC, or none.
    static func isoTime(_ expression: String) -> String {
        "((\(expression)) | timestamp_custom('%Y-%m-%dT%H:%M:%S+00:00', false)) if (\(expression)) else none"
    }

    /// A value template for a timestamp sensor (`None` is HA's word for no value).
    static func isoTimeTemplate(_ expression: String) -> String {
        "{{ ((\(expression)) | timestamp_custom('%Y-%m-%dT%H:%M:%S+00:00', false)) if (\(expression)) else 'None' }}"
    }

    /// A tracker's `in_zones` attribute: the home zone while `condition` holds. Home Assistant
    /// counts a person in a zone, and judges zone conditions and triggers, by the zones their
    /// tracker says it is in (from 2026.7); a tracker without coordinates says none of itself, so
    /// a person home by Roomcast alone would be in no zone. Earlier releases judge by the state
    /// and keep it as an attribute.
    static func homeZone(when condition: String) -> String {
        "(['zone.home'] if \(condition) else [])"
    }

    /// `text` inside a single-quoted Jinja string.
    static func templateString(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
    }

    /// The id a name takes in unique_ids, component ids and device ids: lowercase ASCII letters and
    /// digits, every run of other characters one `_`. Unlike `DisplayName.slug` it keeps a `_` at
    /// either end: these ids are Home Assistant's keys for the entities an installation has, and
    /// one that changed would orphan them.
    public static func discoveryID(_ text: String) -> String {
        var out = ""
        for c in text.lowercased().unicodeScalars {
            switch c {
            case "a"..."z", "0"..."9": out.unicodeScalars.append(c)
            default: if !out.hasSuffix("_") { out += "_" }
            }
        }
        return out
    }

    /// `<platform>.<slug of device name and entity name>`: what HA would build from the names, fixed.
    /// Nil when the names hold letters with no ASCII form: HA builds that id itself.
    func entityID(_ platform: String, _ deviceName: String, _ entityName: String) -> String? {
        entitySlug(deviceName + " " + entityName).map { "\(platform).\($0)" }
    }

    /// The slug of `name` with its letters in ASCII, as Home Assistant's own (`Küche` → `kuche`,
    /// `Straße` → `strasse`); nil when a letter has no ASCII form (`Кухня`), where a slug of what
    /// is left would give unrelated rooms one id. `roomcast` when the name has no letter or digit.
    func entitySlug(_ name: String) -> String? {
        let ascii = Self.asciiLetters(name)
        guard ascii.unicodeScalars.allSatisfy({ $0.isASCII || !$0.properties.isAlphabetic }) else { return nil }
        let s = DisplayName.slug(ascii)
        return s.isEmpty ? "roomcast" : s
    }

    /// `text` with accents and marks taken off its letters, and the Latin letters that have none
    /// to take off spelled as ASCII.
    static func asciiLetters(_ text: String) -> String {
        let spelled: [Character: String] = ["ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "œ": "oe", "Œ": "OE",
                                            "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "þ": "th", "Þ": "Th", "ð": "d", "Ð": "D",
                                            "ı": "i"]
        var out = ""
        for c in text { out += spelled[c] ?? String(c) }
        // Canonical decomposition splits a letter from its marks (ü → u + ¨); the marks go.
        return String(String.UnicodeScalarView(out.decomposedStringWithCanonicalMapping.unicodeScalars.filter {
            $0.properties.generalCategory != .nonspacingMark
        }))
    }
}
