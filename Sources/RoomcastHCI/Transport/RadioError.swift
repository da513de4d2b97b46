import Shared
/// What went wrong with the radio, phrased for the operator: what failed,
/// with what, and how to fix it when the fix is known.
public enum RadioError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No such adapter, or no Bluetooth support in the kernel at all.
    case adapterNotFound(device: String, detail: String)
    /// The adapter exists but is down, powered off or blocked by rfkill.
    case adapterDown(device: String)
    /// Missing CAP_NET_RAW for the raw HCI socket (HCI commands and LE events through its filter).
    case permissionDenied(device: String, call: String)
    /// Another program holds the adapter exclusively.
    case adapterBusy(device: String)
    /// The source string is not `hci[:hciN]`, `h4:<path>` or `btsnoop:<file>`.
    case invalidSource(String)
    /// The other end closed the transport (socket closed, adapter removed).
    case transportClosed(String)
    /// A system call failed.
    case system(String, SystemCallError)
    /// The controller answered a command with a non-zero status.
    case commandFailed(opcode: HCIOpcode, status: UInt8)
    /// No Command Complete / Command Status within the timeout.
    case commandTimeout(opcode: HCIOpcode)
    /// The controller reported a hardware error.
    case hardwareError(code: UInt8)
    /// Bytes from the controller that are not HCI.
    case protocolError(HCIDecodeError)
    /// A replay cannot send commands.
    case readOnly(String)
    /// A capture could not be read or written.
    case capture(BTSnoopError)
    /// Scan or advertising settings out of range.
    case invalidSettings(String)

    public var description: String {
        switch self {
        case let .adapterNotFound(device, detail):
            return "Bluetooth adapter \(device) not found: \(detail). Check `hciconfig -a` or `btmgmt info`, and that the adapter is plugged in."
        case let .adapterDown(device):
            return "Bluetooth adapter \(device) is down or powered off. Power it on with `sudo btmgmt -i \(device) power on` (or `sudo hciconfig \(device) up`) and check `rfkill list` for a block (`sudo rfkill unblock bluetooth` lifts it)."
        case let .permissionDenied(device, "open"):
            // A serial controller (`h4:/dev/ttyAMA0`): a device file's rights, not a capability.
            return "permission denied on \(device) (open): the serial device belongs to a group (usually `dialout`). Add the agent's user to it (`sudo usermod -aG dialout <user>`), or give the packaged unit the device back with a drop-in (DeviceAllow= and SupplementaryGroups=dialout, docs/deployment.md)."
        case let .permissionDenied(device, "connect"):
            return "permission denied on \(device) (connect): the agent's user may not write to that socket; check its owner and mode."
        case let .permissionDenied(device, call):
            return "permission denied on \(device) (\(call)): the raw HCI socket needs CAP_NET_RAW. Grant it with `sudo setcap cap_net_raw+ep $(which edge-agent)`, or run the packaged systemd unit (roomcast-edge-agent.service), which sets `AmbientCapabilities=CAP_NET_RAW`."
        case let .adapterBusy(device):
            return "Bluetooth adapter \(device) is busy: another program holds it exclusively (a user channel, e.g. another scanner or btproxy). Stop it, or use another adapter."
        case let .invalidSource(s):
            return "invalid radio source '\(s)': use hci[:hciN], h4:<socket or serial path>[@baud], or btsnoop:<file>[@speed]"
        case let .transportClosed(what):
            return "radio transport closed: \(what)"
        case let .system(what, e):
            return "\(what): \(e)"
        case let .commandFailed(opcode, Self.commandDisallowed) where Self.isLegacyAdvertising(opcode):
            return "HCI command \(opcode) was refused (Command Disallowed, 0x0c): on an adapter BlueZ drives with the extended advertising commands, legacy advertising is refused"
        case let .commandFailed(opcode, Self.commandDisallowed):
            return "HCI command \(opcode) was refused (Command Disallowed, 0x0c): the controller's state forbids it now"
        case let .commandFailed(opcode, status):
            return "HCI command \(opcode) failed with status 0x\(String(status, radix: 16))"
        case let .commandTimeout(opcode):
            return "HCI command \(opcode) got no answer from the controller"
        case let .hardwareError(code):
            return "controller hardware error 0x\(String(code, radix: 16))"
        case let .protocolError(e):
            return "controller sent bytes that are not HCI: \(e)"
        case let .readOnly(what):
            return "\(what) is a replay and cannot send HCI commands"
        case let .capture(e):
            return e.description
        case let .invalidSettings(problem):
            return "invalid radio settings: \(problem)"
        }
    }

    /// HCI error code 0x0C, Command Disallowed (Core 5.4 Vol 1 Part F §2.12).
    public static var commandDisallowed: UInt8 { 0x0C }

    /// The legacy advertising commands (LE Set Advertising Parameters … Enable, 0x2006–0x200A).
    static func isLegacyAdvertising(_ opcode: HCIOpcode) -> Bool { (0x2006...0x200A).contains(opcode.rawValue) }

    /// Whether retrying later may help (the adapter may come back); false for
    /// configuration and capability problems that need a person. A device file or socket the
    /// agent may not open yet may come right by itself: a USB controller back from a reset is
    /// given its group by udev a moment after it appears.
    public var isTransient: Bool {
        switch self {
        case .adapterNotFound, .adapterDown, .adapterBusy, .transportClosed, .system, .commandFailed,
             .commandTimeout, .hardwareError, .protocolError:
            true
        case let .permissionDenied(_, call):
            call == "open" || call == "connect"
        case .invalidSource, .readOnly, .capture, .invalidSettings:
            false
        }
    }
}
