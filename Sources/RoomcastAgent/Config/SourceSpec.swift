import RoomcastConfig
import RoomcastHCI

/// Where an agent reads BLE advertisements from: `hci` (the first adapter
/// that is up), `hci:hci0`, `h4:/dev/ttyAMA0` (a UART controller) or
/// `btsnoop:/path/capture.btsnoop` (replay a capture).
public enum SourceSpec: Sendable, Equatable, ConfigStringValue, CustomStringConvertible {
    /// A BlueZ HCI adapter by name, or nil for the first one that is up.
    case hci(device: String?)
    /// An H4 UART at this path.
    case h4(path: String)
    /// A btsnoop capture to replay.
    case btsnoop(path: String)

    /// Parses the textual form; the error lists the accepted forms.
    public init(parsing text: String) throws(ConfigValueError) {
        let forms = "expected hci, hci:<device> (e.g. hci:hci0), h4:<tty path> or btsnoop:<file>"
        if text == "hci" { self = .hci(device: nil); return }
        guard let colon = text.firstIndex(of: ":") else {
            throw ConfigValueError(message: "unknown source '\(ConfigNode.excerpt(text))'; \(forms)")
        }
        let kind = text[..<colon]
        let value = String(text[text.index(after: colon)...])
        guard !value.isEmpty else {
            throw ConfigValueError(message: "source '\(ConfigNode.excerpt(text))' is missing its device or path; \(forms)")
        }
        switch kind {
        case "hci":
            guard value.hasPrefix("hci"), let n = Int(value.dropFirst(3)), n >= 0, n < 1024 else {
                throw ConfigValueError(message: "'\(ConfigNode.excerpt(value))' is not an HCI device name like hci0; \(forms)")
            }
            self = .hci(device: value)
        case "h4": self = .h4(path: value)
        case "btsnoop": self = .btsnoop(path: value)
        default: throw ConfigValueError(message: "unknown source kind '\(ConfigNode.excerpt(String(kind)))'; \(forms)")
        }
        // The radio reads the source with its `@baud` or `@speed`: what it would refuse at start
        // is refused here, with the key's path.
        do throws(RadioError) { _ = try RadioSourceSpec.parse(text) } catch {
            throw ConfigValueError(message: error.description)
        }
    }

    public var description: String {
        switch self {
        case .hci(nil): "hci"
        case .hci(let device?): "hci:\(device)"
        case .h4(let path): "h4:\(path)"
        case .btsnoop(let path): "btsnoop:\(path)"
        }
    }

    public var configText: String { description }
}

extension SourceSpec: ConfigPlaceholder {
    package static var configPlaceholder: SourceSpec { .hci(device: nil) }
}
