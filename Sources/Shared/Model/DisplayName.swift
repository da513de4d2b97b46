/// Names for people from ids: what a room, node or person is called in Home Assistant when the
/// config gives no display name, and the slugs entity ids are built from.
public enum DisplayName {
    /// Short room ids people write for rooms Home Assistant names in full (its onboarding creates
    /// "Living Room", "Kitchen", "Bedroom"): a whole id equal to one of these gets the full name,
    /// so the room lands in the area that already exists.
    public static let expansions: [String: String] = [
        "living": "Living Room", "lounge": "Living Room", "dining": "Dining Room",
        "bath": "Bathroom", "bed": "Bedroom",
    ]

    /// The display name for an id: a known short room id in full (`expansions`), otherwise the id's
    /// words (split at `_`, `-`, `.` and spaces) with a capital first letter each:
    /// `kitchen` → "Kitchen", `kids_room` → "Kids Room", `office-pi` → "Office Pi".
    public static func title(for id: String) -> String {
        if let full = expansions[id.lowercased()] { return full }
        let words = id.split(whereSeparator: { $0 == "_" || $0 == "-" || $0 == "." || $0 == " " })
        guard !words.isEmpty else { return id }
        return words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")
    }

    /// A slug for entity ids and person ids: lowercase ASCII letters and digits, every run of other
    /// characters one `_`, none at either end ("Kitchen Occupancy" → `kitchen_occupancy`).
    /// Empty when the text has no letter or digit.
    public static func slug(_ text: String) -> String {
        var out = ""
        for c in text.lowercased().unicodeScalars {
            switch c {
            case "a"..."z", "0"..."9": out.unicodeScalars.append(c)
            default: if !out.isEmpty && !out.hasSuffix("_") { out += "_" }
            }
        }
        while out.hasSuffix("_") { out.removeLast() }
        return out
    }
}
