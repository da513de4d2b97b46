import RoomcastConfig
import RoomcastHCI

/// `source:` in the agent's config: where advertising reports come from. Read once, by the
/// radio's own parser (`RadioSourceSpec`), with the key's path: a source, `@baud` or `@speed`
/// the radio would refuse at start is refused when the config loads.
public struct SourceSpec: Sendable, Equatable, ConfigStringValue, CustomStringConvertible {
    public var radio: RadioSourceSpec

    public init(_ radio: RadioSourceSpec) { self.radio = radio }

    /// Parses the textual form; the error lists the accepted forms.
    public init(parsing text: String) throws(ConfigValueError) {
        do throws(RadioError) { radio = try RadioSourceSpec.parse(text) } catch {
            throw ConfigValueError(message: error.description)
        }
    }

    /// The first adapter that is up (the default).
    public static let firstAdapter = SourceSpec(.default)

    public var description: String { radio.description }
    public var configText: String { description }
}

extension SourceSpec: ConfigPlaceholder {
    package static var configPlaceholder: SourceSpec { .firstAdapter }
}
