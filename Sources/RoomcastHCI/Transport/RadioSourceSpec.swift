/// Where advertising reports come from, as written in config or `--source`:
/// `hci` or `hci:hci0` (raw HCI socket; plain `hci` takes the first adapter
/// that is up), `h4:<path>[@baud]` (H4 over a unix socket or a serial device),
/// `btsnoop:<file>[@speed]` (replay; speed `realtime`, `max` or a factor).
public enum RadioSourceSpec: Sendable, Hashable, CustomStringConvertible {
    case hci(device: String?)
    case h4(path: String, baud: Int?)
    case btsnoop(path: String, speed: ReplaySpeed)

    /// The default source: the first adapter that is up.
    public static let `default` = RadioSourceSpec.hci(device: nil)

    /// Parses a source string; the error says which forms are accepted.
    public static func parse(_ text: String) throws(RadioError) -> RadioSourceSpec {
        let (scheme, rest): (Substring, Substring?) = {
            guard let colon = text.firstIndex(of: ":") else { return (Substring(text), nil) }
            return (text[..<colon], text[text.index(after: colon)...])
        }()
        switch scheme {
        case "hci":
            guard let rest else { return .hci(device: nil) }
            guard HCISocket.deviceNumber(String(rest)) != nil else {
                throw .invalidSource(text)
            }
            return .hci(device: String(rest))
        case "h4":
            guard let rest, !rest.isEmpty else { throw .invalidSource(text) }
            if let at = Self.suffixAt(rest) {
                guard let baud = Int(rest[rest.index(after: at)...]), baud > 0 else { throw .invalidSource(text) }
                // Any other speed would open the line at 115200 and never hear the controller.
                guard H4Device.supportedBauds.contains(baud) else {
                    throw .invalidSettings("\(text): the agent does not open serial lines at \(baud) baud; use one of "
                                           + H4Device.supportedBauds.map(String.init).joined(separator: ", "))
                }
                return .h4(path: String(rest[..<at]), baud: baud)
            }
            return .h4(path: String(rest), baud: nil)
        case "btsnoop":
            guard let rest, !rest.isEmpty else { throw .invalidSource(text) }
            if let at = Self.suffixAt(rest) {
                guard let speed = ReplaySpeed(String(rest[rest.index(after: at)...])) else { throw .invalidSource(text) }
                return .btsnoop(path: String(rest[..<at]), speed: speed)
            }
            return .btsnoop(path: String(rest), speed: .realtime)
        default:
            throw .invalidSource(text)
        }
    }

    /// Where the `@baud` or `@speed` suffix begins: the last `@`, unless a `/` follows it, which
    /// makes it part of the path (`/srv/u@host/capture.btsnoop` is a path, and was refused).
    static func suffixAt(_ rest: Substring) -> Substring.Index? {
        guard let at = rest.lastIndex(of: "@"), !rest[at...].contains("/") else { return nil }
        return at
    }

    /// The same source with another replay speed (only changes `btsnoop`).
    public func with(speed: ReplaySpeed) -> RadioSourceSpec {
        if case let .btsnoop(path, _) = self { return .btsnoop(path: path, speed: speed) }
        return self
    }

    /// Whether the source is a replay (no controller to command).
    public var isReplay: Bool {
        if case .btsnoop = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case let .hci(device): device.map { "hci:\($0)" } ?? "hci"
        case let .h4(path, baud): "h4:\(path)" + (baud.map { "@\($0)" } ?? "")
        // Real time is what a capture plays at unless told, so it goes unsaid, unless the path
        // itself ends like a speed (`/tmp/cap@2`), which would be read back as one.
        case let .btsnoop(path, .realtime) where Self.suffixAt(Substring(path)) == nil: "btsnoop:\(path)"
        case let .btsnoop(path, speed): "btsnoop:\(path)@\(speed)"
        }
    }
}
