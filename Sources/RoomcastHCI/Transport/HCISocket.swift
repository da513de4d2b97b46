import Foundation
#if canImport(Glibc)
import Glibc
#endif
internal import CBlueZ
import Shared

/// Opens the kernel's raw HCI socket for an adapter (the only place that
/// touches libbluetooth). The descriptor then carries H4-framed packets, one
/// per read, each with its reception time in the control data, so
/// `FileDescriptorTransport` does the rest.
enum HCISocket {
    /// Resolves `device` ("hci0", or nil for the first adapter that is up),
    /// checks it is up, binds a raw socket to it and installs a filter that
    /// passes every event and turns on reception timestamps. Returns the descriptor, the
    /// device name and whether the kernel stamps packets (`HCI_TIME_STAMP`).
    static func open(device: String?) throws(RadioError) -> (fd: Int32, name: String, stamped: Bool) {
        let shown = device ?? "hci (first adapter that is up)"
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), BTPROTO_HCI)
        if fd < 0 {
            let e = errno
            switch e {
            case EAFNOSUPPORT, EPROTONOSUPPORT:
                throw .adapterNotFound(device: shown, detail: "this kernel has no Bluetooth support (AF_BLUETOOTH); load the bluetooth module or use a kernel with CONFIG_BT")
            case EPERM, EACCES:
                throw .permissionDenied(device: shown, call: "socket")
            default:
                throw .system("socket(AF_BLUETOOTH)", SystemCallError(call: "socket", errno: e))
            }
        }
        do throws(RadioError) {
            let devID = try resolve(device: device)
            let name = "hci\(devID)"
            var info = hci_dev_info()
            if hci_devinfo(devID, &info) < 0 {
                let e = errno
                if e == ENODEV { throw RadioError.adapterNotFound(device: name, detail: "no such device") }
                throw RadioError.system("hci_devinfo \(name)", SystemCallError(call: "ioctl(HCIGETDEVINFO)", errno: e))
            }
            // Bit HCI_UP (0) of the device flags.
            if info.flags & 1 == 0 { throw RadioError.adapterDown(device: name) }

            var address = sockaddr_hci()
            address.hci_family = sa_family_t(AF_BLUETOOTH)
            address.hci_dev = UInt16(devID)
            address.hci_channel = UInt16(HCI_CHANNEL_RAW)
            let bound = withUnsafePointer(to: &address) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
                }
            }
            if bound < 0 { throw map(errno: errno, call: "bind", device: name) }

            var filter = Self.eventFilter()
            if setsockopt(fd, SOL_HCI, HCI_FILTER, &filter, socklen_t(MemoryLayout<hci_filter>.size)) < 0 {
                throw map(errno: errno, call: "setsockopt(HCI_FILTER)", device: name)
            }
            // Reception timestamps: packets read in a burst keep the time the kernel got them.
            var on: Int32 = 1
            let stamped = setsockopt(fd, SOL_HCI, HCI_TIME_STAMP, &on, socklen_t(MemoryLayout<Int32>.size)) == 0
            return (fd, name, stamped)
        } catch {
            close(fd)
            throw error
        }
    }

    /// The adapter number for "hciN", or the first adapter that is up. libbluetooth's
    /// `hci_devid` fails for an adapter that is down (ENETDOWN) as for one that is absent, so
    /// "hciN" is read here and `HCIGETDEVINFO` (in `open`) tells the two apart: an adapter
    /// powered off or blocked by rfkill is reported as down, not as missing.
    private static func resolve(device: String?) throws(RadioError) -> Int32 {
        if let device {
            if let id = deviceNumber(device) { return id }
            let id = hci_devid(device)  // an adapter's address
            if id < 0 { throw .adapterNotFound(device: device, detail: "no such adapter") }
            return id
        }
        let id = hci_get_route(nil)
        if id >= 0 { return id }
        // No adapter is up: tell "down" apart from "absent", whichever number the kernel gave it
        // (hci1 once hci0 is gone, after a USB adapter was plugged in again).
        let present = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/bluetooth")) ?? []
        throw noAdapterUp(present: present)
    }

    /// Why no adapter is up, given the names of those the kernel has (`/sys/class/bluetooth`):
    /// the first of them is down, or there is none.
    static func noAdapterUp(present: [String]) -> RadioError {
        let numbers = present.compactMap(deviceNumber).sorted()
        if let first = numbers.first { return .adapterDown(device: "hci\(first)") }
        return .adapterNotFound(device: "hci", detail: "no Bluetooth adapter is present")
    }

    /// N of "hciN" (0 ... 65535: the kernel's device index), nil for any other name.
    static func deviceNumber(_ name: String) -> Int32? {
        let digits = name.dropFirst(3)
        guard name.hasPrefix("hci"), digits.allSatisfy({ ("0"..."9").contains($0) }), let n = UInt16(digits) else { return nil }
        return Int32(n)
    }

    /// Passes events only (and the commands' answers among them), like hcitool lescan, but not
    /// the two that carry link keys: Return Link Keys (0x15) and Link Key Notification (0x18),
    /// which a pairing made with bluetoothctl on this host sends to every raw socket. The agent
    /// needs neither, and `--record` would write them to its capture.
    /// The bit operations of hci_lib.h's inline helpers, done here in Swift.
    static func eventFilter() -> hci_filter {
        var f = hci_filter()
        f.type_mask = 1 << UInt32(HCIPacketType.event.rawValue)
        f.event_mask.0 = 0xFFFF_FFFF & ~(1 << linkKeyEvents.returnLinkKeys) & ~(1 << linkKeyEvents.linkKeyNotification)
        f.event_mask.1 = 0xFFFF_FFFF
        f.opcode = 0
        return f
    }

    /// Event codes of the events that carry link keys (Core spec, Vol 4, Part E, 7.7.21 and 7.7.24).
    static let linkKeyEvents = (returnLinkKeys: UInt32(0x15), linkKeyNotification: UInt32(0x18))

    /// The error the operator sees for a failed call on the raw socket.
    static func map(errno e: Int32, call: String, device: String) -> RadioError {
        switch e {
        case EPERM, EACCES: .permissionDenied(device: device, call: call)
        case EBUSY, EALREADY: .adapterBusy(device: device)
        case ENODEV: .adapterNotFound(device: device, detail: "the adapter disappeared")
        case ENETDOWN: .adapterDown(device: device)
        case ERFKILL: .adapterDown(device: device)
        default: .system("\(call) \(device)", SystemCallError(call: call, errno: e))
        }
    }
}
